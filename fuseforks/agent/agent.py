"""`Agent`: one object that owns everything a turn needs, for Python programs and the CLI alike.

It owns the provider client, the MCP tool hub, the event store, the bus (the store writer as the
required subscriber, the log file and an optional line callback as the others) and their
lifetimes: enter it with `async with`, run turns, leave it. Whatever it was given ready-made
(an open store, a started tool hub) it uses and leaves open.

A turn belongs to a conversation. `run(request, conversation=...)` sends the conversation's
earlier exchanges — request and final answer, text only — within the history budget, and the
turn's record holds exactly what it sent. Turns of one conversation run one after another (a lock
per conversation, kept only while one of its turns runs or waits); turns of different
conversations run concurrently. The agent keeps the tail of its most recent conversations
(`Tails`), so that a turn of one of them does not read every earlier turn back from the store.
"""

from __future__ import annotations

import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import anyio
import anyio.to_thread
import msgspec

from fuseforks.agent.locks import ConversationLocks
from fuseforks.agent.progress import Progress, ProgressModel, ProgressTools, progress_line
from fuseforks.agent.result import TurnResult, not_started_result, turn_result
from fuseforks.agent.secrets import known_secrets
from fuseforks.agent.settings import AgentSettings
from fuseforks.agent.stream import TurnStream
from fuseforks.bus.bus import Bus, Subscriber, SubscriberFailure
from fuseforks.bus.subscribers import LogWriter, StoreWriter
from fuseforks.core.errors import NothingToTakeOver
from fuseforks.core.names import (
    InterruptCause,
    Placement,
    WireName,
    parse_wire,
)
from fuseforks.engine.not_started import record_not_started
from fuseforks.engine.resume import resume
from fuseforks.engine.turn import Turn, TurnOutcome, TurnSpec, new_turn_id
from fuseforks.events.codec import Envelope
from fuseforks.events.secrets import Secrets
from fuseforks.events.sequencer import Clock
from fuseforks.events.types import (
    PlacementLearned,
    ServerDown,
    TurnEnded,
    TurnStarted,
)
from fuseforks.live.model import LiveModel
from fuseforks.live.tools import HubTools
from fuseforks.mcp.config import ServerConfig, load_config, parse_config
from fuseforks.mcp.hub import ToolHub
from fuseforks.ports.model import ModelPort, OnText
from fuseforks.ports.tools import ToolPort
from fuseforks.projections.capabilities import (
    Capability,
    capabilities,
    start_placement,
)
from fuseforks.projections.conversation import (
    ConversationTail,
    ConversationTurn,
    HistoryBudget,
    conversation_tail,
    conversation_turns,
    tail_history,
    with_turn,
)
from fuseforks.stores.open import open_store
from fuseforks.stores.store import EventStore
from fuseforks.traces.live import TracerProviderLike, live_subscriber
from fuseforks.wires.registry import image_cap_for, resolve_endpoint

_T = TypeVar("_T")
DEFAULT_SETTINGS = AgentSettings()

McpServers = str | Path | Mapping[str, Any] | Sequence[ServerConfig] | None
"""An `mcpServers` JSON file, the same document as a dict, or server objects."""


class Conversation:
    """A conversation of an agent: run turns in it; `turns()` reads them back from the store."""

    def __init__(self, agent: Agent, conversation_id: str, *, new: bool = False) -> None:
        self.agent = agent
        self.id = conversation_id
        self._new = new
        """The agent made this id and no turn of it has started yet: the store holds nothing of
        it, and its first turn need not look there."""

    def _start_turn(self) -> bool:
        """Whether the turn starting now is the conversation's first (called under its lock)."""
        first, self._new = self._new, False
        return first

    async def run(self, request: str, *, on_text: OnText | None = None) -> TurnResult:
        return await self.agent.run(request, conversation=self, on_text=on_text)

    def stream(self, request: str) -> TurnStream:
        """A turn of this conversation, its text read as it arrives (see `Agent.stream`)."""
        return self.agent.stream(request, conversation=self)

    async def turns(self) -> list[ConversationTurn]:
        return await self.agent.conversation_turns(self.id)

    def __repr__(self) -> str:
        return f"Conversation({self.id!r})"


class Tails:
    """The tails of the conversations an agent ran turns in most recently — what each one's next
    history needs — so that a turn of one of them costs one count in the store's index of
    conversations (has a turn been added elsewhere since?) instead of a read of every earlier
    turn, a read that grows with the conversation in time and in memory. Kept for the last
    `limit` conversations only: an agent that runs many keeps no more. Used on the event loop,
    under each conversation's lock."""

    def __init__(self, limit: int = 128) -> None:
        self.limit = limit
        self._kept: OrderedDict[str, ConversationTail] = OrderedDict()

    def __len__(self) -> int:
        return len(self._kept)

    def take(self, conversation_id: str) -> ConversationTail | None:
        """The tail kept for the conversation, no longer kept until `keep` (a turn that fails
        leaves the next one to read the store)."""
        return self._kept.pop(conversation_id, None)

    def keep(self, conversation_id: str, tail: ConversationTail) -> None:
        self._kept[conversation_id] = tail
        while len(self._kept) > self.limit:
            self._kept.popitem(last=False)


def _unchanged(store: EventStore, conversation_id: str, tail: ConversationTail) -> bool:
    """Whether the store's conversation is still the one `tail` was folded from: no turn was
    started elsewhere, and none of its cut turns has gone on since (taken over): one count, and
    a last seq per cut turn."""
    return store.conversation_size(conversation_id) == tail.turns and all(
        store.last_seq(turn_id) == seq for turn_id, seq in tail.open)


def _read_tail(store: EventStore, conversation_id: str, budget: HistoryBudget,
               ) -> ConversationTail:
    """The conversation's tail as the store holds it, with the last seq of each cut turn."""
    tail = conversation_tail(conversation_turns(store.conversation(conversation_id)), budget)
    return msgspec.structs.replace(
        tail, open=tuple((turn_id, store.last_seq(turn_id)) for turn_id, _ in tail.open))


def server_configs(mcp: McpServers) -> list[ServerConfig]:
    """The MCP servers `mcp` names: a config file, the same document as a dict, or objects."""
    if mcp is None:
        return []
    if isinstance(mcp, str | Path):
        return load_config(mcp)
    if isinstance(mcp, Mapping):
        return parse_config(dict(mcp))
    return list(mcp)


class Agent(anyio.AsyncContextManagerMixin):
    """An LLM agent with MCP tools, recording every turn.

    >>> async with Agent(wire="anthropic", model="claude-sonnet-5-5", mcp="mcp.json") as agent:
    ...     result = await agent.run("Take a picture and describe it.")
    """

    def __init__(
        self,
        *,
        wire: WireName | str,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        mcp: McpServers = None,
        tools: ToolHub | None = None,
        db: str | Path | EventStore = "fuseforks.db",
        log: str | Path | None = "fuseforks.log",
        settings: AgentSettings = DEFAULT_SETTINGS,
        on_log_line: Callable[[str], None] | None = None,
        on_progress: Progress | None = None,
        on_failure: Callable[[SubscriberFailure], None] | None = None,
        subscribers: Sequence[Subscriber] = (),
        tracer_provider: TracerProviderLike | None = None,
        clock: Clock | None = None,
    ) -> None:
        """Where the agent talks (`wire`, `model`, `base_url`, `api_key`), its tools (`mcp`, or a
        started `tools` hub), where turns are recorded (`db`, `log`), how it runs them
        (`settings`), and who hears about them (a line callback, progress, a subscriber's
        failure, more bus subscribers, an OpenTelemetry tracer provider)."""
        self.wire: WireName = parse_wire(wire)
        self.model = model
        self.settings = settings
        self._endpoint = resolve_endpoint(self.wire, base_url, api_key)
        self._servers = server_configs(mcp) if tools is None else []
        self._given_tools = tools
        self._db = db
        self._log = log
        self._on_log_line = on_log_line
        self._on_failure = on_failure
        self._subscribers = list(subscribers)
        self._on_progress = on_progress
        self._clock = clock
        self._known: list[Capability] = []
        self._tracer_provider = tracer_provider
        self._locks = ConversationLocks()
        self._tails = Tails()
        self._running: set[Turn] = set()
        self._secrets = Secrets()
        self._store: EventStore | None = None
        self._bus: Bus | None = None
        self._tools: HubTools | None = None
        self._live: LiveModel | None = None
        self._hub: ToolHub | None = None

    @asynccontextmanager
    async def __asynccontextmanager__(self) -> AsyncIterator[Agent]:
        async with AsyncExitStack() as stack:
            store: EventStore
            if isinstance(self._db, str | Path):
                store = open_store(self._db)
                stack.callback(store.close)
            else:
                store = self._db
            self._store = store
            subscribers: list[Subscriber] = list(self._subscribers)
            if self._log is not None:
                file_log = LogWriter.to_file(self._log)
                stack.callback(file_log.close)
                subscribers.append(file_log)
            if self._on_log_line is not None:
                subscribers.append(LogWriter(self._on_log_line))
            # OpenTelemetry spans of each ended turn: for `tracer_provider`, else when the
            # environment names an OTLP endpoint (fuseforks.traces; nothing otherwise). Closing
            # the agent waits for no collector: the process's exit sends what is left.
            tracing = live_subscriber(self._tracer_provider)
            if tracing is not None:
                subscribers.append(tracing)
            self._live = LiveModel(self.wire, self.model, self._endpoint,
                                   policy=self.settings.retry)
            stack.push_async_callback(self._live.aclose)
            hub = self._given_tools
            if hub is None:
                hub = await stack.enter_async_context(ToolHub(
                    self._servers, start_timeout=self.settings.mcp_start_timeout,
                    on_waiting=self._waiting if self._on_progress else None,
                    on_progress=self._tool_progress if self._on_progress else None))
            self._hub = hub
            self._tools = HubTools(hub)
            self._known = capabilities(
                await anyio.to_thread.run_sync(store.of_kinds, ["PlacementLearned"]))
            servers = self._servers or hub.configs
            self._secrets = known_secrets(self._endpoint, servers, wire=self.wire)
            self._secrets.include(hub.secrets)  # OAuth tokens, as the hub learns them
            self._bus = await stack.enter_async_context(Bus(
                subscribers, required=[StoreWriter(store)], on_failure=self._on_failure,
                secrets=self._secrets))
            try:
                yield self
            finally:
                self._bus = self._tools = self._live = self._store = self._hub = None

    @property
    def start_faults(self) -> dict[str, str]:
        """MCP servers that did not start, and why, the agent's secrets taken out. A turn is not
        sent while one is down, unless `settings.allow_missing_servers`."""
        hub = self._hub
        if hub is None:
            return {}
        return {server: self._secrets.text(reason) for server, reason in hub.start_faults.items()}

    def conversation(self, conversation_id: str | None = None) -> Conversation:
        """A new conversation, or the one with `conversation_id` (continued from the store)."""
        if conversation_id:
            return Conversation(self, conversation_id)
        return Conversation(self, f"conv-{uuid.uuid4().hex}", new=True)

    async def conversation_turns(self, conversation_id: str) -> list[ConversationTurn]:
        store = self._require(self._store)
        envelopes = await anyio.to_thread.run_sync(store.conversation, conversation_id)
        return conversation_turns(envelopes)

    async def run(self, request: str, *, conversation: Conversation | str | None = None,
                  turn_id: str | None = None, on_text: OnText | None = None) -> TurnResult:
        """Run one turn. Raises `RecordingFailed` if the record could not be written: a turn
        that is not recorded is never reported as a success. `turn_id` names the turn (a new id
        by default); a turn id the store already holds is refused by the store's sequence guard.

        With `on_text`, every model call of the turn streams and each piece of its text goes to
        `on_text` as a `TextDelta` while it arrives. Deltas are progress, not facts: the record
        is the same as without them."""
        bus, tools, live = self._require(self._bus), self._require(self._tools), self._live
        assert live is not None
        if not isinstance(conversation, Conversation):
            conversation = self.conversation(conversation)
        conversation_id = conversation.id
        async with self._locks.hold(conversation_id):
            settings = self.settings
            await self._require(self._hub).take_up_logins()  # a login made since the start
            tail = await self._tail(conversation)
            exchanges, dropped = tail_history(tail)
            spec = TurnSpec(placement=self._start_placement(live),
                            agent=settings.name, request=request, language=settings.language,
                            system=settings.system, max_rounds=settings.max_rounds,
                            image_cap=image_cap_for(self.wire, settings.image_cap),
                            conversation_id=conversation_id,
                            history=exchanges, history_dropped=dropped,
                            servers_down=[ServerDown(server=s, reason=r)
                                          for s, r in self.start_faults.items()],
                            worker=settings.worker)
            if spec.servers_down and not settings.allow_missing_servers:
                return await self._not_sent(spec, turn_id)
            model, port = self._ports(live, tools)
            turn = Turn(spec, model, port, publish=bus.publish, turn_id=turn_id, clock=self._clock,
                        on_text=on_text)
            bus.forget(turn.turn_id)  # a turn id retried after its record failed starts anew
            outcome = await self._drive(turn, recorded=0)
            ended = self._fold(tail, turn.recorder.history)
            if ended is not None:
                self._tails.keep(conversation_id, ended)
        return turn_result(outcome, conversation_id)

    async def _not_sent(self, spec: TurnSpec, turn_id: str | None) -> TurnResult:
        """A turn whose MCP servers did not all start, recorded as not started: nothing is sent
        to the model, which would be asked to use tools it is not offered."""
        down = "; ".join(d.reason for d in spec.servers_down)
        reason = (f"not sent: {down}; turns are sent without a server that did not start only "
                  "when that is allowed (allow_missing_servers)")
        batch = await record_not_started(turn_id or new_turn_id(), spec, wire=self.wire,
                                         model=self.model, reason=reason,
                                         publish=self._require(self._bus).publish,
                                         clock=self._clock)
        return not_started_result(batch, spec.conversation_id)

    async def _tail(self, conversation: Conversation) -> ConversationTail:
        """What the conversation's next turn needs of it (called under its lock): nothing for
        one this agent just made, the kept tail while the store has nothing new, else the tail
        of the conversation as the store holds it."""
        kept = self._tails.take(conversation.id)
        budget = self.settings.history
        if conversation._start_turn():
            return ConversationTail(budget=budget)
        store = self._require(self._store)
        if kept is not None and kept.budget == budget and await anyio.to_thread.run_sync(
                _unchanged, store, conversation.id, kept):
            return kept
        return await anyio.to_thread.run_sync(_read_tail, store, conversation.id, budget)

    def _fold(self, tail: ConversationTail, recorded: Sequence[Envelope]) -> ConversationTail | None:
        """The tail with a turn that just ended folded in, as the store holds it (a known secret
        as its marker); None when its start and end are not both in hand."""
        turns = conversation_turns(
            msgspec.structs.replace(e, event=self._secrets.event(e.event)) for e in recorded
            if isinstance(e.event, TurnStarted | TurnEnded))
        if len(turns) != 1:
            return None
        return with_turn(tail, turns[0], last_seq=recorded[-1].seq)

    def stream(self, request: str, *, conversation: Conversation | str | None = None,
               turn_id: str | None = None) -> TurnStream:
        """Run one turn and read its text as it arrives:

            async with agent.stream("Describe the picture.") as turn:
                async for delta in turn:          # TextDelta(round, purpose, text, attempt)
                    print(delta.text, end="", flush=True)
            result = turn.result                  # the TurnResult, as `run` returns it

        Leaving the block waits for the turn's end; leaving it with an exception interrupts the
        turn (recorded). See `TurnStream`."""
        return TurnStream(lambda on_text: self.run(request, conversation=conversation,
                                                   turn_id=turn_id, on_text=on_text))

    async def take_over(self, turn_id: str, *, worker: str = "") -> TurnResult:
        """Take over a turn whose process died: its record (in this agent's store, without an
        end) is re-driven — nothing recorded is asked or called again — and the turn goes on
        here, recording `TurnTakenOver` where the record stopped. The record names the agent,
        wire and model; this agent must run the same wire and model. Raises
        `NothingToTakeOver` for a turn that has ended or has no record, `PrefixDiverged` when
        today's engine cannot re-drive the record, `RecordingFailed` as `run` does."""
        bus, tools, live = self._require(self._bus), self._require(self._tools), self._live
        store = self._require(self._store)
        assert live is not None
        recorded = await anyio.to_thread.run_sync(store.read, turn_id)
        if not recorded:
            raise NothingToTakeOver(f"turn {turn_id} has no record")
        started = recorded[0].event
        conversation_id = started.conversation_id if isinstance(started, TurnStarted) else ""
        model, port = self._ports(live, tools)
        async with self._locks.hold(conversation_id or turn_id):
            bus.forget(turn_id)  # whatever failed before, the turn goes on from its record
            turn = resume(recorded, model, port,
                          worker=worker or self.settings.worker or self.settings.name,
                          publish=bus.publish, clock=self._clock)
            outcome = await self._drive(turn, recorded=len(recorded))
        return turn_result(outcome, conversation_id)

    def _ports(self, live: LiveModel, tools: HubTools) -> tuple[ModelPort, ToolPort]:
        """The live ports, saying what the turn waits for when progress is wanted."""
        if self._on_progress is None:
            return live, tools
        return ProgressModel(live, self._on_progress), ProgressTools(tools, self._on_progress)

    async def _drive(self, turn: Turn, *, recorded: int) -> TurnOutcome:
        """Run `turn` as one of this agent's running turns, and learn from the events it added
        (those after the first `recorded`, which were known already)."""
        self._running.add(turn)
        try:
            return await turn.run()
        finally:
            self._running.discard(turn)
            self._known = capabilities(
                (e for e in turn.recorder.history[recorded:]
                 if isinstance(e.event, PlacementLearned)), self._known)

    def _start_placement(self, live: LiveModel) -> Placement:
        """The placement the record says works for this model (see `start_placement`)."""
        # Wall time, not the turn's clock: the decision is recorded on the turn (its placement),
        # and a fixed clock must not be advanced by a look at the time.
        now = datetime.now(UTC)
        return start_placement(self._known, wire=self.wire, model=self.model,
                               endpoint_host=live.endpoint_host, own=live.placement, now=now,
                               reprobe_after=self.settings.reprobe_after)

    def capabilities(self) -> list[Capability]:
        """What this agent's record knows about where models take tool images."""
        return list(self._known)

    def _tool_progress(self, tool: str, progress: float, total: float | None,
                       message: str | None) -> None:
        """A server's progress notification, on the progress line."""
        assert self._on_progress is not None
        self._on_progress(progress_line(tool, progress, total, message))

    def _waiting(self, server: str, seconds: float) -> None:
        assert self._on_progress is not None
        self._on_progress(f"waiting for MCP server {server} to start ({seconds:.0f} s)")

    async def last_conversation(self) -> str | None:
        """The conversation of the most recent turn in the store, if it had one."""
        store = self._require(self._store)

        def find() -> str | None:
            for info in reversed(store.turns()):
                first = store.read(info.turn_id)[:1]
                if first and isinstance(first[0].event, TurnStarted):
                    return first[0].event.conversation_id or None
            return None

        return await anyio.to_thread.run_sync(find)

    def hand_back(self, turn_id: str | None = None) -> list[str]:
        """Stop every running turn (or the one `turn_id` names) without recording an end (each
        `run` raises `HandedBack`), for another process to take them over; returns their ids."""
        running = [t for t in self._running if turn_id is None or t.turn_id == turn_id]
        for turn in running:
            turn.hand_back()
        return [turn.turn_id for turn in running]

    def interrupt(self, cause: InterruptCause = "cancelled") -> int:
        """Interrupt every turn this agent is running (each records it); returns how many."""
        running = list(self._running)
        for turn in running:
            turn.interrupt(cause)
        return len(running)

    @staticmethod
    def _require(value: _T | None) -> _T:
        if value is None:
            raise RuntimeError("use the agent inside `async with Agent(...) as agent:`")
        return value
