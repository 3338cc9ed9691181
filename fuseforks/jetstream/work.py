"""Turn requests as work: what a submitter puts on the queue, and how a worker takes it.

A request names the turn (its id is chosen by the submitter, so it can follow the turn at once),
the agent, the wire and the model, the conversation and the text. It never carries an endpoint or
a key: the workers own those (their environment, their `--base-url`), so a submitter cannot point a
worker's key at an address of its choosing. Unknown fields are ignored, not obeyed.

Delivery is at least once: a worker acknowledges a request only when its turn has ended in the
store, and tells the server it is still working (`in_progress`) while the turn runs; a worker that
dies stops doing so, and the request goes to another worker, which takes the turn over from its
record — at once when the other workers notice the death (`fuseforks.jetstream.roster`), after
`ACK_WAIT` at the latest.
"""

from __future__ import annotations

import msgspec
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig

from fuseforks.core.names import Language
from fuseforks.jetstream.streams import MSG_ID, WORK_STREAM, WORK_SUBJECT, check_turn_id

WORKERS = "fuseforks-workers"
"""The durable consumer every worker pulls from: one request goes to one worker."""
ACK_WAIT = 10.0
"""Seconds without a sign of life after which a request goes to another worker (the last resort:
the roster hands a dead worker's requests back sooner)."""
HEARTBEAT = ACK_WAIT / 4


class WorkRequest(msgspec.Struct, frozen=True, kw_only=True):
    turn_id: str
    wire: str
    model: str
    request: str
    agent: str = "agent"
    conversation_id: str = ""
    language: Language = "en"
    system: str = ""


_decoder = msgspec.json.Decoder(WorkRequest)


def decode_request(data: bytes) -> WorkRequest:
    request = _decoder.decode(data)
    check_turn_id(request.turn_id)
    return request


async def submit(js: JetStreamContext, request: WorkRequest) -> None:
    """Put `request` on the queue (a second submit of the same turn id within the duplicate
    window is dropped by the server)."""
    check_turn_id(request.turn_id)
    await js.publish(WORK_SUBJECT, msgspec.json.encode(request),
                     headers={MSG_ID: request.turn_id}, timeout=5)


async def work_queue(js: JetStreamContext) -> JetStreamContext.PullSubscription:
    """The pull subscription a worker fetches requests from."""
    config = ConsumerConfig(durable_name=WORKERS, ack_policy=AckPolicy.EXPLICIT,
                            ack_wait=ACK_WAIT, max_deliver=-1, max_ack_pending=-1)
    return await js.pull_subscribe(WORK_SUBJECT, durable=WORKERS, stream=WORK_STREAM,
                                   config=config)
