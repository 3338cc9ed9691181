"""Answers every request line with text that is not JSON-RPC (a CLI tool configured as a server)."""

import sys

for _line in sys.stdin:
    sys.stdout.write("Usage: camera-tool [--live] [--status]\n")
    sys.stdout.flush()
