"""Provider wires: canonical request/response, seven adapters, and the HTTP edge."""

from fuseforks.wires.base import Endpoint, HttpRequest, Wire
from fuseforks.wires.registry import WIRES, get_wire, resolve_endpoint

__all__ = ["WIRES", "Endpoint", "HttpRequest", "Wire", "get_wire", "resolve_endpoint"]
