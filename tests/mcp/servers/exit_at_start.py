"""Not a server: says why on stderr and exits with status 3 before any handshake."""

import sys

print("fatal: no camera attached", file=sys.stderr, flush=True)
sys.exit(3)
