"""Whether an address is this machine's own: the one test made before something is served or
sent without a secret (the console and the gateway without a token, a provider without a key)."""

from __future__ import annotations

import ipaddress


def is_loopback_host(host: str) -> bool:
    """Whether `host` — an IP address (IPv6 with or without brackets) or a name — reaches this
    machine only: 127.0.0.0/8, ::1 or localhost."""
    name = host.strip("[]")
    if name.rstrip(".") == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
