"""Reads requests and never answers, as a server stuck in its start-up would."""

import sys
import time

for _line in sys.stdin:
    time.sleep(3600)
