"""A hand-written stdio MCP server that starts properly and then writes garbage instead of a
result: it answers the handshake and lists one tool, `say`, and answers every call to it with a
line that is not JSON-RPC (and nothing else). Each start appends a line to the file named by
GARBLER_STARTS, so a test can count restarts.

No SDK here on purpose: a server that breaks the protocol mid-session cannot be written with one.
"""

from __future__ import annotations

import json
import os
import sys

starts = os.environ.get("GARBLER_STARTS")
if starts:
    with open(starts, "a", encoding="utf-8") as stream:
        stream.write(f"{os.getpid()}\n")


def answer(request_id: object, result: dict[str, object]) -> None:
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue  # a notification
    if method == "initialize":
        answer(request_id, {"protocolVersion": message["params"]["protocolVersion"],
                            "capabilities": {"tools": {}},
                            "serverInfo": {"name": "garbler", "version": "1"}})
    elif method == "tools/list":
        answer(request_id, {"tools": [{"name": "say", "description": "Says nothing useful.",
                                       "inputSchema": {"type": "object"}}]})
    elif method == "tools/call":
        sys.stdout.write("Traceback (most recent call last): something went wrong\n")
        sys.stdout.flush()
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {
            "code": -32601, "message": "Method not found"}}) + "\n")
        sys.stdout.flush()
