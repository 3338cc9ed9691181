"""One answer to "is this address this machine's own?" for the console, the gateway and the
provider client."""

from __future__ import annotations

import pytest

from fuseforks.core.hosts import is_loopback_host
from fuseforks.wires.registry import is_local


@pytest.mark.parametrize(("host", "own"), [
    ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True),
    ("localhost", True), ("localhost.", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.20", False), ("[fe80::1]", False),
    ("gateway.lan", False), ("localhost.example.com", False), ("", False),
])
def test_only_this_machines_addresses_are_loopback(host: str, own: bool) -> None:
    assert is_loopback_host(host) is own


def test_a_base_url_is_loopback_by_its_host() -> None:
    assert [is_local(url) for url in ("http://127.0.0.1:8000/v1", "http://[::1]:9/v1",
                                         "http://localhost./v1", "https://llm.example.com/v1",
                                         None)] == [True, True, True, False, False]
