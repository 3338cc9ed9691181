"""Provider wires: canonical request/response, seven adapters, and the HTTP edge."""

from fuseforks.wires.base import Endpoint, HttpRequest, Wire
from fuseforks.wires.registry import WIRES, endpoint_from_env, get_wire

__all__ = ["WIRES", "Endpoint", "HttpRequest", "Wire", "endpoint_from_env", "get_wire"]
