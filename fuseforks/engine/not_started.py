"""A turn that could not start, recorded by the engine like every other turn.

A worker can take a request it cannot run — a wire no one serves here, no key for it — and the
submitter must still learn why. The turn's record is then `TurnNotStarted` (the request as it was
asked, the wire name as it was given) and `TurnEnded` with `stop="error"` and the reason. The
engine writes both: no package but the engine and the event vocabulary builds an event (a test
holds the others to it), and `replay --verify` derives them again like any other record.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from fuseforks.engine.recorder import Publish
from fuseforks.engine.turn import TurnSpec
from fuseforks.events.codec import Envelope
from fuseforks.events.privacy import elide_base64
from fuseforks.events.sequencer import Clock, Sequencer, SystemClock
from fuseforks.events.types import TurnEnded, TurnEvent, TurnNotStarted


def not_started(spec: TurnSpec, *, wire: str, model: str, reason: str) -> list[TurnEvent]:
    """The events of a turn that could not start. Every text is as it came, with any media cut
    out: a request that cannot run must still be recordable. The MCP servers that did not start
    (`spec.servers_down`) are named when they are why."""
    return [
        TurnNotStarted(agent=elide_base64(spec.agent), wire=elide_base64(wire),
                       model=elide_base64(model), language=spec.language,
                       request=elide_base64(spec.request), system=elide_base64(spec.system),
                       conversation_id=elide_base64(spec.conversation_id),
                       servers_down=[msgspec.structs.replace(d, reason=elide_base64(d.reason))
                                     for d in spec.servers_down]),
        TurnEnded(rounds=0, stop="error", error=elide_base64(reason)),
    ]


def spec_of_not_started(started: TurnNotStarted) -> TurnSpec:
    return TurnSpec(agent=started.agent, request=started.request, language=started.language,
                    system=started.system, conversation_id=started.conversation_id,
                    servers_down=list(started.servers_down))


def redrive_not_started(recorded: Sequence[Envelope], clock: Clock) -> list[Envelope]:
    """What today's engine records for the same request and reason (the recorded end's error)."""
    started, ended = recorded[0].event, recorded[-1].event
    assert isinstance(started, TurnNotStarted)
    reason = ended.error if isinstance(ended, TurnEnded) else ""
    return Sequencer(recorded[0].turn_id, clock).seal(not_started(
        spec_of_not_started(started), wire=started.wire, model=started.model, reason=reason))


async def record_not_started(turn_id: str, spec: TurnSpec, *, wire: str, model: str,
                             reason: str, publish: Publish,
                             clock: Clock | None = None) -> list[Envelope]:
    """Record, in one batch, that the turn `turn_id` could not start, and why."""
    batch = Sequencer(turn_id, clock or SystemClock()).seal(
        not_started(spec, wire=wire, model=model, reason=reason))
    await publish(batch)
    return batch
