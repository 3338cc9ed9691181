"""`binder`: the binding of a child to its parent, made in the child after it changed user."""

from __future__ import annotations

import sys

from tests.helpers import processes

CHILD = """
import subprocess, sys
from fuseforks.core.leash import binder
bind = binder()
# A child that runs as another user (PostgreSQL's, when fuseforks runs as root) may not be able to
# read this interpreter's modules: after the change of user, no import can be found.
sys.meta_path.clear()
print(subprocess.run([sys.executable, "-c", "pass"], preexec_fn=bind).returncode)
"""


def test_the_binding_imports_nothing_in_the_child() -> None:
    done = processes.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                         timeout=60)
    assert (done.stdout, done.returncode) == ("0\n", 0), done.stderr[-2000:]
