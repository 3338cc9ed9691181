"""Not a server: says why on stderr and exits with status 3 before any handshake.

Each start appends one line to the file named by EXIT_COUNTER, so a test can count restarts.
"""

import os
import sys

counter = os.environ.get("EXIT_COUNTER")
if counter:
    with open(counter, "a", encoding="utf-8") as stream:
        stream.write("start\n")
print("fatal: no camera attached", file=sys.stderr, flush=True)
sys.exit(3)
