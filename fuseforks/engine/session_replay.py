"""Replay of a gateway session: today's `Session` re-driven with the recorded calls and results.

A session's inputs are its client's calls (`ToolCalled`), what the upstream servers returned
(the recorded outputs: body, normalization results, size without images), the tools offered when
they changed (`ToolsChanged`, fed back as recorded, like the start's) and how it ended. The
gateway's own decisions — the result cap, what the client was sent, the notes — are made again by
today's code and compared with the record, event by event, as for a turn.

Calls of a session ran concurrently, so their events interleave in the record. The replay drives
them in the recorded order: each call is started when the record shows its `ToolCalled`, and
receives its recorded output when the record shows the first event of its result; a call the
record shows cancelled is cancelled there; `SessionEnded` ends the session with its cause. Nothing
reaches an MCP server and no image is decoded.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from typing import Any

import anyio
import msgspec

from fuseforks.core.names import Language, McpMethod
from fuseforks.engine.outputs import recorded_output
from fuseforks.engine.session import CANCELLED, ProgressListener, Session, SessionSpec
from fuseforks.events.codec import Envelope
from fuseforks.events.sequencer import FixedClock
from fuseforks.events.types import (
    ImagesDropped,
    ImagesNormalized,
    SessionEnded,
    SessionStarted,
    ToolCalled,
    ToolResultRecorded,
    ToolsChanged,
    ToolSpecRecord,
    TurnEvent,
)
from fuseforks.ports.tools import ToolOutput


def spec_of_session(started: SessionStarted) -> SessionSpec:
    return SessionSpec(agent=started.agent, client=started.client,
                       client_version=started.client_version, transport=started.transport,
                       profile=started.profile, limits=started.limits,
                       result_limits=started.result_limits, language=started.language,
                       servers_down=list(started.servers_down),
                       tool_filters=list(started.tool_filters),
                       changed_tools=list(started.changed_tools),
                       withheld_tools=list(started.withheld_tools))


class _Pending:
    """A call re-driven: it waits at the tools for its recorded output (or its cancellation)."""

    def __init__(self, call_id: str) -> None:
        self.call_id = call_id
        self.reached = anyio.Event()
        self.released = anyio.Event()
        self.done = anyio.Event()
        self.output: ToolOutput | None = None
        self.scope = anyio.CancelScope()


class RecordedTools:
    """The session's tools as the record shows them: each call gets its recorded output when the
    replay releases it, in the order the calls reach it."""

    def __init__(self, started: SessionStarted, events: Sequence[TurnEvent]) -> None:
        self._specs = list(started.tools)
        self._servers = {(e.method, e.name): e.server for e in events
                         if isinstance(e, ToolCalled)}
        self.queue: deque[_Pending] = deque()

    def tool_specs(self) -> list[ToolSpecRecord]:
        return self._specs

    def server_of(self, name: str, method: McpMethod = "tools/call") -> str:
        return self._servers.get((method, name), "")

    async def call(self, name: str, arguments: dict[str, Any], language: Language,
                   on_progress: ProgressListener | None = None,
                   method: McpMethod = "tools/call") -> ToolOutput:
        pending = self.queue.popleft()
        pending.reached.set()
        await pending.released.wait()
        assert pending.output is not None
        return pending.output


class _Driver:
    def __init__(self, recorded: Sequence[Envelope]) -> None:
        events = [e.event for e in recorded]
        started = events[0]
        assert isinstance(started, SessionStarted)
        self.events = events
        self.tools = RecordedTools(started, events)
        self.session = Session(spec_of_session(started), self.tools,
                               session_id=recorded[0].turn_id, clock=FixedClock())
        self.calls: dict[str, _Pending] = {}
        self.normalized: dict[str, ImagesNormalized] = {}
        self.dropped: dict[str, ImagesDropped] = {}

    async def _run(self, called: ToolCalled, pending: _Pending) -> None:
        try:
            with pending.scope:
                await self.session.call(called.call_id, called.name,
                                        msgspec.json.decode(called.arguments),
                                        method=called.method)
        finally:
            pending.done.set()

    async def drive(self) -> None:
        await self.session.start()
        async with anyio.create_task_group() as group:
            for event in self.events[1:]:
                if isinstance(event, ToolCalled):
                    pending = self.calls[event.call_id] = _Pending(event.call_id)
                    self.tools.queue.append(pending)
                    group.start_soon(self._run, event, pending)
                    await pending.reached.wait()
                elif isinstance(event, ImagesNormalized):
                    self.normalized[event.call_id] = event
                elif isinstance(event, ImagesDropped):
                    self.dropped[event.call_id] = event
                elif isinstance(event, ToolResultRecorded):
                    await self._answer(event)
                elif isinstance(event, ToolsChanged):  # the servers' new list, and the pins'
                    await self.session.tools_changed(event.tools, event.changed_tools,
                                                     event.withheld_tools)
                elif isinstance(event, SessionEnded):
                    await self._stop(group)
                    await self.session.end(event.cause)
                    return
            await self._stop(group)  # a record without its end: it stops where the record does

    async def _answer(self, result: ToolResultRecorded) -> None:
        pending = self.calls.get(result.call_id)
        if pending is None or pending.released.is_set():
            return  # a result the replay has no call for: the comparison names it
        if result.fault == CANCELLED and result.call_id not in self.normalized:
            pending.scope.cancel()
        else:
            pending.output = recorded_output(result, self.normalized.get(result.call_id),
                                             self.dropped.get(result.call_id))
            pending.released.set()
        await pending.done.wait()

    async def _stop(self, group: anyio.abc.TaskGroup) -> None:
        self.session.ending()
        group.cancel_scope.cancel()


async def redrive_session(recorded: Sequence[Envelope]) -> list[Envelope]:
    """Run today's gateway session on a recorded one's inputs; return the envelopes it emits."""
    if not recorded or not isinstance(recorded[0].event, SessionStarted):
        raise ValueError("a session's record begins with SessionStarted")
    driver = _Driver(recorded)
    await driver.drive()
    return list(driver.session.history)
