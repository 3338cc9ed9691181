"""What the live-export tests share: an environment without the OpenTelemetry variables a
developer's shell may hold, and the process's live exports closed after each test, as its exit
would close them."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from fuseforks.traces import otel


@pytest.fixture
def no_otel_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)
    yield
    otel.close_live_exports()  # what the process's exit does
