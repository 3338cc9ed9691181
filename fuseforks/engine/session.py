"""A gateway session: an MCP client's tool calls through the gateway, recorded like a turn.

The gateway (`fuseforks.gateway`) serves MCP clients it does not run; for each client it keeps
one `Session`, which records what the engine records for a turn's tool calls — and decides from
the folded record, like the engine: the images of a result go to the client only after the
client's limit on a whole result has cut them (`plan_result_cap`), and the notes the client
reads are derived from the same events.

Write-ahead, as in a turn: a call's `ToolCalled` is durable before the call reaches the upstream
server, and its result's events (`ResultSent` last) before the result goes back to the client.
Calls of one session run concurrently; the record holds their events in the order they happened,
each batch committed in order (one commit at a time).

A call that is cancelled (the client gave up on it, or its connection went away) records a
result with the fault `CANCELLED`; a call still running when the session ends is named in
`SessionEnded.unanswered` instead. The tools offered may change while the session runs (a server
announced a new list): `ToolsChanged` records what the gateway offers from then on, and what it
found changed and kept back, before the client hears of it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any, Protocol

import anyio
import msgspec

from fuseforks.core.errors import SessionClosed
from fuseforks.core.media import ImageLimits, ResultLimits
from fuseforks.core.names import (
    GatewayTransport,
    Language,
    McpMethod,
    SessionEndCause,
    parse_language,
)
from fuseforks.engine.outputs import output_events, recorded_arguments
from fuseforks.engine.recorder import Ledger, Publish
from fuseforks.events.codec import Envelope
from fuseforks.events.privacy import elide_base64
from fuseforks.events.sequencer import Clock, SystemClock
from fuseforks.events.types import (
    ImagesCapped,
    ResultSent,
    ServerDown,
    SessionEnded,
    SessionStarted,
    ToolCalled,
    ToolFilterRecord,
    ToolResultRecorded,
    ToolsChanged,
    ToolSpecRecord,
    TurnEvent,
)
from fuseforks.ports.tools import ToolOutput, ToolPort, fault_output
from fuseforks.projections.session import (
    SessionState,
    evolve_session,
    plan_result_cap,
    result_notes,
    sent_images,
)

CANCELLED = "the call was cancelled before its result came back"
"""The fault of a call cancelled while the upstream server worked on it."""

class ProgressListener(Protocol):
    """Hears a call's progress as the upstream server reports it."""

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        ...


class SessionTools(ToolPort, Protocol):
    """The servers behind a session: the gateway's upstream servers, or a record in replay. A
    turn's tool port, widened by what only a client's session asks: the request's method (a
    resource read or a prompt besides a tool call) and the call's progress."""

    def server_of(self, name: str, method: McpMethod = "tools/call") -> str: ...

    async def call(self, name: str, arguments: dict[str, Any], language: Language,
                   on_progress: ProgressListener | None = None,
                   method: McpMethod = "tools/call") -> ToolOutput:
        """One request of the client's (a tool call, a resource read, a prompt) and its answer
        as the plan of an MCP result made it. Every failure is a tool-error output, never an
        exception."""


class SessionSpec(msgspec.Struct, frozen=True, kw_only=True):
    """Who the client is, and the limits of its profile."""

    agent: str
    client: str
    client_version: str = ""
    transport: GatewayTransport
    profile: str
    limits: ImageLimits
    result_limits: ResultLimits
    language: Language = "en"
    servers_down: list[ServerDown] = msgspec.field(default_factory=list)
    tool_filters: list[ToolFilterRecord] = msgspec.field(default_factory=list)
    changed_tools: list[str] = msgspec.field(default_factory=list)
    withheld_tools: list[str] = msgspec.field(default_factory=list)


class SessionResult(msgspec.Struct, frozen=True, kw_only=True):
    """What goes back to the client for one call: the tool's output, how many of its images the
    cap kept, and the notes to add (in the session's village language)."""

    output: ToolOutput
    keep: int
    notes: list[str]


class Session:
    """One client's session. `start()` once, `call()` for each tool call (concurrently), `end()`
    once; every method records before it returns."""

    def __init__(self, spec: SessionSpec, tools: SessionTools, *, session_id: str | None = None,
                 clock: Clock | None = None, publish: Publish | None = None) -> None:
        parse_language(spec.language)
        self.spec = spec
        self.tools = tools
        self.session_id = session_id or f"session-{uuid.uuid4().hex}"
        self.state = SessionState()
        self.ledger = Ledger(self.session_id, clock or SystemClock(), publish)
        self._ending = False
        self._client = elide_base64(spec.client)
        self._client_version = elide_base64(spec.client_version)

    @property
    def history(self) -> list[Envelope]:
        return self.ledger.history

    def _emit(self, event: TurnEvent) -> None:
        self.state = evolve_session(self.state, event)
        self.ledger.append(event)

    async def start(self) -> None:
        spec = self.spec
        self._emit(SessionStarted(
            agent=spec.agent, client=self._client, client_version=self._client_version,
            transport=spec.transport,
            profile=spec.profile, limits=spec.limits, result_limits=spec.result_limits,
            language=spec.language, tools=list(self.tools.tool_specs()),
            servers_down=[msgspec.structs.replace(d, reason=elide_base64(d.reason))
                          for d in spec.servers_down],
            tool_filters=list(spec.tool_filters), changed_tools=list(spec.changed_tools),
            withheld_tools=list(spec.withheld_tools)))
        await self.ledger.commit()

    async def call(self, call_id: str, name: str, arguments: dict[str, Any],
                   on_progress: ProgressListener | None = None,
                   method: McpMethod = "tools/call") -> SessionResult:
        """Run one request of the client's (a tool call, or a resource read or a prompt:
        `method`) and record it; returns what the client gets. A cancelled call records its
        cancellation (unless the session is ending) and re-raises it."""
        round_ = self.state.count + 1
        self._emit(ToolCalled(round=round_, call_id=call_id,
                              server=self.tools.server_of(name, method), name=name,
                              arguments=recorded_arguments(arguments), method=method))
        await self.ledger.commit()  # write-ahead: the call is on record before it starts
        try:
            output = await self.tools.call(name, arguments, self.spec.language, on_progress,
                                           method)
        except anyio.get_cancelled_exc_class():
            if not self._ending:
                with anyio.CancelScope(shield=True):
                    self._emit(ToolResultRecorded(
                        round=round_, call_id=call_id, name=name, ok=False,
                        body=fault_output(CANCELLED, self.spec.language).text, fault=CANCELLED))
                    await self.ledger.commit()
            raise
        except Exception as error:  # a port that broke its promise: a tool error all the same
            output = fault_output(f"{type(error).__name__}: {error}", self.spec.language)
        if self.state.ended is not None:  # the session ended meanwhile: nobody gets the result
            raise SessionClosed(f"session {self.session_id} ended during call {call_id}")
        for event in output_events(round_, call_id, name, output, attached=True):
            self._emit(event)
        cut = plan_result_cap(self.state, call_id)
        if cut is not None:
            self._emit(ImagesCapped(round=round_, removed=cut.removed, kept=cut.keep,
                                    removed_digests=[i.digest for i in output.images[cut.keep:]],
                                    cuts=[cut]))
        self._emit(ResultSent(round=round_, call_id=call_id, name=name,
                              server=self.state.calls[call_id].called.server,
                              client=self._client, client_version=self._client_version,
                              images=sent_images(self.state, call_id), method=method))
        await self.ledger.commit()  # write-ahead: on record before the client has it
        return SessionResult(output=output, keep=len(sent_images(self.state, call_id)),
                             notes=result_notes(self.state, call_id))

    async def tools_changed(self, tools: Sequence[ToolSpecRecord], changed: Sequence[str],
                            withheld: Sequence[str]) -> None:
        """The tools offered changed while the session runs: `tools` are offered from now on,
        `changed` had their definitions changed, `withheld` of those are kept back. Nothing is
        recorded once the session has ended."""
        if self.state.ended is not None:
            return
        self._emit(ToolsChanged(tools=list(tools), changed_tools=list(changed),
                                withheld_tools=list(withheld)))
        await self.ledger.commit()

    def ending(self) -> None:
        """The session is about to end: calls cancelled from now on are not recorded one by one
        (`SessionEnded.unanswered` names them)."""
        self._ending = True

    async def end(self, cause: SessionEndCause) -> None:
        self._ending = True
        if self.state.ended is not None:
            return
        self._emit(SessionEnded(calls=self.state.count, cause=cause,
                                unanswered=self.state.unanswered))
        await self.ledger.commit()
