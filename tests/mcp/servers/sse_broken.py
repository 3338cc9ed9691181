"""An HTTP+SSE endpoint whose message endpoint always fails: the stream opens and names it, and
every POST to it is answered 500 (a proxy in front of a dead backend does this).

Run as `python sse_broken.py --sse --port N`; the event stream is at `/sse`.
"""

from __future__ import annotations

import sys

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, StreamingResponse
from starlette.routing import Route


async def events(request: Request) -> StreamingResponse:
    async def stream():  # type: ignore[no-untyped-def]
        yield b"event: endpoint\r\ndata: /messages/?session_id=0\r\n\r\n"
        while True:
            await anyio.sleep(3600)
            yield b": keep-alive\r\n\r\n"

    return StreamingResponse(stream(), media_type="text/event-stream")


async def messages(request: Request) -> PlainTextResponse:
    await request.body()
    return PlainTextResponse("backend down", status_code=500)


app = Starlette(routes=[Route("/sse", events), Route("/messages/", messages, methods=["POST"])])

if __name__ == "__main__":
    port = int(sys.argv[sys.argv.index("--port") + 1])
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")
