"""A free port on 127.0.0.1 for the tests' servers (MCP over HTTP, NATS, PostgreSQL).

Only tests ask for one: `fuseforks cluster` takes the ports it is given and says so when one is
taken (`fuseforks.cluster.nats.port_taken`), so the product has no use for it.
"""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port nothing listens on now (the system's pick; another process may take it later)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
