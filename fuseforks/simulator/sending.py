"""How an answer goes out over one h11 connection: whole, streamed frame by frame, or cut.

A stream has no length up front, so h11 sends it chunked; each frame is sent (and so flushed)
on its own. A cut sends the headers and part of the answer and leaves the rest unsaid: the caller
then closes the connection, as a network that fails mid-answer does.
"""

from __future__ import annotations

import h11
from anyio.abc import SocketStream

from fuseforks.simulator.shapes import Reply, Streamed


def _head(conn: h11.Connection, status: int, headers: list[tuple[str, str]]) -> bytes:
    return conn.send(h11.Response(status_code=status, headers=headers)) or b""


def _reply_head(conn: h11.Connection, reply: Reply) -> bytes:
    return _head(conn, reply.status, [("content-type", "application/json"),
                                      ("content-length", str(len(reply.body))), *reply.headers])


def _stream_head(conn: h11.Connection, streamed: Streamed) -> bytes:
    return _head(conn, 200, [("content-type", streamed.content_type),
                             ("cache-control", "no-cache")])


async def send_reply(conn: h11.Connection, stream: SocketStream, reply: Reply) -> None:
    await stream.send(b"".join((_reply_head(conn, reply),
                                conn.send(h11.Data(data=reply.body)) or b"",
                                conn.send(h11.EndOfMessage()) or b"")))


async def send_stream(conn: h11.Connection, stream: SocketStream, streamed: Streamed) -> None:
    await stream.send(_stream_head(conn, streamed))
    for frame in streamed.frames:
        await stream.send(conn.send(h11.Data(data=frame)) or b"")
    await stream.send(conn.send(h11.EndOfMessage()) or b"")


def cut_at(frames: int, asked: int | None) -> int:
    """How many of `frames` a cut sends: `asked` (default: half, at least one), always fewer
    than all of them, so the answer is never complete."""
    wanted = max(1, frames // 2) if asked is None else asked
    return max(0, min(wanted, frames - 1))


async def send_cut(conn: h11.Connection, stream: SocketStream, answer: Reply | Streamed,
                   frames: int | None) -> None:
    """The headers and the first frames of a stream (the first half of a whole body), no end."""
    if isinstance(answer, Streamed):
        await stream.send(_stream_head(conn, answer))
        for frame in answer.frames[:cut_at(len(answer.frames), frames)]:
            await stream.send(conn.send(h11.Data(data=frame)) or b"")
        return
    half = answer.body[:len(answer.body) // 2]
    await stream.send(_reply_head(conn, answer) + (conn.send(h11.Data(data=half)) or b""))
