"""What a stand-in HTTP server (a `BaseHTTPRequestHandler` in a test) answers with."""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


def send_json(handler: BaseHTTPRequestHandler, document: Any, status: int = 200) -> None:
    """`document` as a whole JSON body, with its length."""
    body = json.dumps(document).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
