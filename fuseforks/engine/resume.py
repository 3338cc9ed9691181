"""Taking over a turn whose process died: re-drive its record, then go on live.

Durable execution, as a workflow engine does it: the record of the dead process's turn is in the
store, and the engine is deterministic given its inputs (`replay --verify` proves it). So the new
process runs the engine from the start with the recorded answers and tool outputs fed back — no
provider request and no tool call is repeated for a step whose result is recorded — and the events
it emits are checked against the record instead of being written again. Where the record ends, the
engine records `TurnTakenOver` and the turn continues with the live ports.

What cannot be recovered is said, not hidden: tool images lived only in the dead process's memory,
and a tool call that started without a recorded result may or may not have run. `Turn` records
both on `TurnTakenOver` (see `fuseforks.engine.takeover` for where and how).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fuseforks.core.canonical import ChatRequest, ChatResponse
from fuseforks.core.errors import NothingToTakeOver
from fuseforks.core.names import Language
from fuseforks.engine.recorder import Publish
from fuseforks.engine.replay import ReplayModel, ReplayTools, spec_of
from fuseforks.engine.takeover import Continuation
from fuseforks.engine.turn import Turn
from fuseforks.events.codec import Envelope
from fuseforks.events.sequencer import Clock
from fuseforks.events.types import ToolSpecRecord, TurnEnded, TurnEvent, TurnStarted
from fuseforks.images.vault import ImageVault
from fuseforks.ports.model import ModelNotes, ModelPort
from fuseforks.ports.tools import ToolOutput, ToolPort


class ResumeModel:
    """The recorded answers while the record lasts, then the live model. It names the model the
    record names: the turn's identity does not change with the process that runs it."""

    def __init__(self, started: TurnStarted, events: Sequence[TurnEvent], live: ModelPort) -> None:
        self._recorded = ReplayModel(started, events)
        self._live = live
        self.wire, self.model = started.wire, started.model
        self.endpoint_host, self.placement = started.endpoint_host, started.placement

    async def chat(self, request: ChatRequest, vault: ImageVault, notes: ModelNotes,
                   **options: Any) -> ChatResponse:
        if self._recorded.remaining:
            return await self._recorded.chat(request, vault, notes)
        return await self._live.chat(request, vault, notes, **options)


class ResumeTools:
    """The recorded outputs while the record lasts, then the live tools."""

    def __init__(self, started: TurnStarted, events: Sequence[TurnEvent], live: ToolPort) -> None:
        self._recorded = ReplayTools(started, events)
        self._live = live

    def tool_specs(self) -> Sequence[ToolSpecRecord]:
        return self._recorded.tool_specs()

    def server_of(self, name: str) -> str:
        return self._recorded.server_of(name) or self._live.server_of(name)

    async def call(self, name: str, arguments: dict[str, Any], language: Language) -> ToolOutput:
        if self._recorded.holds(name, arguments):
            return await self._recorded.call(name, arguments, language)
        return await self._live.call(name, arguments, language)


def resume(recorded: Sequence[Envelope], model: ModelPort, tools: ToolPort, *, worker: str,
           publish: Publish | None = None, clock: Clock | None = None) -> Turn:
    """The turn of `recorded` (a record without an end), ready to `run()` in this process.

    `model` must be the live model the record names (same wire and model); requests go to its
    endpoint from the takeover on. Raises `NothingToTakeOver` for a record that is not an unended
    turn; `run()` raises `PrefixDiverged` if today's engine does not re-drive the record."""
    if not recorded or not isinstance(recorded[0].event, TurnStarted):
        raise NothingToTakeOver("the record does not begin with TurnStarted")
    turn_id = recorded[0].turn_id
    if [e.seq for e in recorded] != list(range(1, len(recorded) + 1)):
        raise NothingToTakeOver(f"turn {turn_id}: the record has a gap in its seq")
    if isinstance(recorded[-1].event, TurnEnded):
        raise NothingToTakeOver(f"turn {turn_id} has already ended")
    started = recorded[0].event
    if (model.wire, model.model) != (started.wire, started.model):
        raise NothingToTakeOver(
            f"turn {turn_id} runs on {started.wire} {started.model}, not {model.wire} {model.model}")
    events = [e.event for e in recorded]
    return Turn(spec_of(started), ResumeModel(started, events, model),
                ResumeTools(started, events, tools), turn_id=turn_id, clock=clock,
                publish=publish, continuing=Continuation.taken_over(
                    recorded, worker=worker, endpoint_host=model.endpoint_host))

