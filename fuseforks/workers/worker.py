"""A worker: takes turn requests from the work queue and runs them with `Agent`, at most
`concurrency` at a time.

For each request it reads the turn's record first:
- no record: a new turn, with the id the submitter chose;
- a record that ended: the turn ran (the worker that ran it died before acknowledging): done;
- a record without an end: the worker that ran it died; this one takes the turn over
  (`Agent.take_over`): the record is re-driven, nothing recorded is asked or called again.
The request is acknowledged only when its turn has ended in the store. While a turn runs, the
worker tells the queue it is alive, and tells the other workers which turns it runs
(`fuseforks.workers.watchdog`); a worker that dies, or is stopped, stops doing both, and the
others hand its requests back to the queue as soon as they find its turns' leases free (the
queue's ack wait is the last resort), so another worker takes each turn over within seconds. A
worker continued after its turns were taken over finds out before its next side effect — its
appends carry each turn's lease epoch and are refused — and stops them in one line. A request whose turn cannot run here (an unknown wire, no key for it) is recorded
as a turn that could not start — `TurnNotStarted` with the wire name as given, then `TurnEnded`
with the reason, both written by the engine — so the submitter learns why.

Shutdown (SIGTERM, or `stop()`): no new request is taken; running turns finish within `grace`
seconds; those still running then are handed back (negatively acknowledged, so another worker
takes them over at once; the worker names them) and the worker exits without recording an end
for them — the write-ahead record is what the next worker continues from.
"""

from __future__ import annotations

import logging
import os
import sys
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from dataclasses import replace
from typing import Any, Literal

import anyio
import anyio.to_thread
from nats.aio.msg import Msg

from fuseforks.agent import Agent
from fuseforks.agent.agent import McpServers, server_configs
from fuseforks.agent.secrets import known_secrets
from fuseforks.core.backoff import Backoff
from fuseforks.core.errors import (
    FuseforksError,
    HandedBack,
    LeaseLost,
    NothingToTakeOver,
    PrefixDiverged,
    RecordingFailed,
    StoreError,
)
from fuseforks.core.names import WireName, parse_wire
from fuseforks.engine.not_started import record_not_started
from fuseforks.engine.takeover import last_worker, record_abandoned
from fuseforks.engine.turn import TurnSpec
from fuseforks.events.codec import Envelope
from fuseforks.events.types import TurnEnded
from fuseforks.jetstream.lease import Lease, Leases, turn_lease
from fuseforks.jetstream.relay import Relay
from fuseforks.jetstream.roster import Roster, Running, ensure_roster
from fuseforks.jetstream.streams import connect, ensure_streams
from fuseforks.jetstream.work import HEARTBEAT, WorkRequest, decode_request, work_queue
from fuseforks.mcp.hub import ToolHub
from fuseforks.stores.leases import LeaseTable
from fuseforks.stores.open import open_ordered_store
from fuseforks.stores.urls import is_database_url, redact_url
from fuseforks.wires.base import Endpoint
from fuseforks.workers.settings import WorkerSettings
from fuseforks.workers.watchdog import Watchdog

logger = logging.getLogger("fuseforks.worker")

DEFAULT_SETTINGS = WorkerSettings()
REDELIVERY = Backoff(base=1.0, cap=60.0)
"""When a request that could not be finished is delivered again: after 1 s, doubling with each
delivery, at most a minute (a store that is away is not asked every second)."""

Say = Callable[[str], None]
AgentKey = tuple[str, str, str, str, str]
Outcome = Literal["done", "again", "lost"]
"""What became of a request's turn here: ended, back to the queue, or another worker's now."""


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class Worker:
    def __init__(
        self,
        *,
        db: str,
        nats: str,
        mcp: McpServers = None,
        base_urls: Mapping[WireName, str] | None = None,
        name: str | None = None,
        settings: WorkerSettings = DEFAULT_SETTINGS,
        say: Say = _stderr,
    ) -> None:
        """The store and the bus every worker shares (`db`, `nats`), the MCP servers this one
        starts, where it sends each wire's requests, its name in the record, and how it runs
        (`settings`)."""
        self.db, self.nats_url, self.mcp = db, nats, mcp
        self.settings = settings
        self.base_urls = dict(base_urls or {})
        self.name = name or f"worker-{os.uname().nodename}-{os.getpid()}"
        self.say = say
        self._stopping = anyio.Event()
        self._agents: OrderedDict[AgentKey, Agent] = OrderedDict()
        self._busy: Counter[AgentKey] = Counter()
        self._agents_lock = anyio.Lock()
        self._in_flight: dict[object, tuple[str, Msg]] = {}
        """The requests this worker holds, with their turn ids."""
        self._keeper_done = anyio.Event()
        self._closing = anyio.Event()
        self._closers: dict[Agent, anyio.Event] = {}
        self.turns_done = 0

    def stop(self) -> None:
        """Take no new request; finish (or hand back) the running ones and return from `run`."""
        self._stopping.set()

    async def run(self) -> None:
        async with AsyncExitStack() as stack:
            if not is_database_url(self.db):
                raise FuseforksError(
                    f"a worker needs a PostgreSQL store URL, not {redact_url(self.db)!r}")
            store = open_ordered_store(self.db)
            stack.callback(store.close)
            self._store = store
            table = LeaseTable(self.db)
            stack.callback(table.close)
            self._leases = Leases(table, self.name, on_lost=self._lease_lost)
            store.fence_of = self._leases.fence_of  # a turn's appends carry its lease's epoch
            connection = await connect(self.nats_url, name=self.name)
            stack.push_async_callback(connection.close)
            js = connection.jetstream()
            await ensure_streams(js)
            await ensure_roster(js)
            watchdog = self._watchdog = Watchdog(
                Roster(js, self.name), self._leases, connection,
                lambda: [Running(turn_id=turn_id, reply=message.reply)
                         for turn_id, message in self._in_flight.values()],
                lambda line: self.say(f"worker {self.name}: {line}"))
            self._relay = Relay(
                store, js, self._leases,
                on_lead=lambda: self.say(
                    f"worker {self.name}: relaying the store's events to the bus"),
                on_step_down=lambda why: self.say(f"worker {self.name}: stopped relaying: {why}"))
            hub = await stack.enter_async_context(ToolHub(server_configs(self.mcp)))
            self._hub = hub
            secrets = known_secrets(Endpoint(base_url=""), server_configs(self.mcp))
            going_on = ("its turns go on without its tools"
                        if self.settings.agents.allow_missing_servers
                        else "turns are recorded as not sent until this worker starts again")
            for server, reason in hub.start_faults.items():
                self.say(f"worker {self.name}: MCP server {server} did not start: "
                         f"{secrets.text(reason)}; {going_on}")
            queue = await work_queue(js)
            slots = anyio.Semaphore(self.settings.concurrency)
            async with anyio.create_task_group() as relaying:
                relaying.start_soon(self._leases.run)
                relaying.start_soon(self._relay.run)
                relaying.start_soon(watchdog.run)
                await relaying.start(self._keeper)
                with anyio.move_on_after(10):
                    await self._relay.tried.wait()
                self.say(f"worker {self.name}: ready (concurrency {self.settings.concurrency})")
                async with anyio.create_task_group() as turns:
                    turns.start_soon(self._fetch, queue, slots, turns)
                    await self._stopping.wait()
                    with anyio.move_on_after(self.settings.grace):
                        await self._wait_idle()
                    if self._in_flight:
                        running = [turn_id for turn_id, _ in self._in_flight.values()]
                        self.say(f"worker {self.name}: handing back {len(running)} running "
                                 f"turns: {', '.join(running)}")
                        with anyio.move_on_after(10):
                            while self._in_flight:
                                for agent in list(self._agents.values()):
                                    agent.hand_back()
                                await anyio.sleep(0.05)
                    turns.cancel_scope.cancel()
                with anyio.move_on_after(2):
                    await watchdog.leave()
                # the relay publishes what the last turns committed before it stops
                with anyio.move_on_after(5):
                    await self._relay_caught_up()
                self._closing.set()  # the keeper leaves every agent, then ends
                with anyio.move_on_after(10):
                    await self._keeper_done.wait()
                relaying.cancel_scope.cancel()
        self.say(f"worker {self.name}: stopped ({self.turns_done} turns)")

    async def _fetch(self, queue: Any, slots: anyio.Semaphore,
                     turns: anyio.abc.TaskGroup) -> None:
        while not self._stopping.is_set():
            await slots.acquire()
            if self._stopping.is_set():
                return
            try:
                messages = await queue.fetch(1, timeout=1)
            except TimeoutError:
                slots.release()
                continue
            except Exception as error:  # the bus is away: the connection reconnects by itself
                slots.release()
                logger.warning("worker: cannot fetch: %s", error)
                await anyio.sleep(0.5)
                continue
            if self._stopping.is_set():  # taken while stopping: not ours to run
                for message in messages:
                    await _quietly(message.nak())
                slots.release()
                return
            for message in messages:
                turns.start_soon(self._handle, message, slots)

    async def _wait_idle(self) -> None:
        while self._in_flight:  # noqa: ASYNC110 - turns end in several tasks; a poll is simplest
            await anyio.sleep(0.05)

    async def _handle(self, message: Msg, slots: anyio.Semaphore) -> None:
        try:
            try:
                request = decode_request(message.data)
            except Exception as error:
                self.say(f"worker {self.name}: refused a malformed request: {error}")
                await _quietly(message.term())
                return
            token = object()
            self._in_flight[token] = (request.turn_id, message)
            await self._watchdog.beat()  # in the roster before the turn does anything
            async with anyio.create_task_group() as group:
                group.start_soon(self._heartbeat, message)
                try:
                    outcome = await self._run(request)
                except StoreError as error:  # the store is away: another try, from the record
                    self.say(f"worker {self.name}: turn {request.turn_id}: {error}")
                    outcome = "again"
                except Exception as error:  # a bug must not take the other turns down
                    logger.exception("worker: turn %s failed", request.turn_id)
                    self.say(f"worker {self.name}: turn {request.turn_id} failed: "
                             f"{type(error).__name__}: {error}")
                    outcome = "again"
                finally:
                    group.cancel_scope.cancel()
            self._in_flight.pop(token, None)
            if outcome == "done":
                await _quietly(message.ack())
                self.turns_done += 1
            elif outcome == "again":  # another worker (or this one, later) continues
                await _quietly(message.nak(delay=None if self._stopping.is_set()
                                           else _backoff(message)))
            # "lost": the turn is another worker's now, and so is its request
        finally:
            slots.release()

    async def _heartbeat(self, message: Msg) -> None:
        while True:
            await anyio.sleep(HEARTBEAT)
            await _quietly(message.in_progress())

    async def _run(self, request: WorkRequest) -> Outcome:
        """Run or take over the turn, holding its lease: `done` when it has ended in the store,
        `again` when it goes back to the queue, `lost` when another worker took it over.

        The lease (`fuseforks.jetstream.lease`, renewed with this worker's others) is what keeps
        two workers from running one turn: a request delivered while another worker holds the
        turn's lease goes back to the queue. Every append of the turn carries the lease's epoch,
        so once another worker took it over — this one was stopped past its lease — nothing more
        of this one's is stored, and no request or tool call follows."""
        lease = await self._leases.take(turn_lease(request.turn_id))
        if lease is None:
            self.say(f"worker {self.name}: turn {request.turn_id} is running elsewhere")
            return "again"
        try:
            done = await self._run_leased(request)
        except RecordingFailed as error:  # the store is away, or the turn is another's now
            if isinstance(error.__cause__, LeaseLost):
                lease.lost.set()  # its append was refused: another worker holds its lease
            if not lease.lost.is_set():
                self.say(f"worker {self.name}: turn {request.turn_id} not recorded: {error}")
                return "again"
            done = False
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(2):
                try:
                    await self._leases.release(lease)
                except StoreError as error:  # it runs out by itself
                    logger.warning("worker: cannot release the lease of %s: %s",
                                   request.turn_id, error)
        if lease.lost.is_set() and not done:
            self._say_lost(lease)
            return "lost"
        return "done" if done else "again"

    def _lease_lost(self, lease: Lease) -> None:
        """A renewal found a lease taken over. A turn's: stop it where it waits, without an
        end (the relay's says so itself)."""
        if lease.name.startswith(turn_lease("")):
            turn_id = lease.name.removeprefix(turn_lease(""))
            for agent in list(self._agents.values()):
                agent.hand_back(turn_id)

    def _say_lost(self, lease: Lease) -> None:
        self.say(f"worker {self.name}: {lease.name.replace(':', ' ', 1)}: another worker took "
                 f"it over (its lease ran out under epoch {lease.epoch}); stopped here, nothing "
                 "more of it recorded or called by this worker")

    async def _run_leased(self, request: WorkRequest) -> bool:
        recorded = await anyio.to_thread.run_sync(self._store.read, request.turn_id)
        if recorded and isinstance(recorded[-1].event, TurnEnded):
            return True
        try:
            key, agent = await self._agent(request)
        except StoreError:
            raise
        except FuseforksError as error:  # an unknown wire, no key for it
            if recorded:
                self.say(f"worker {self.name}: cannot take over {request.turn_id}: {error}")
                return False
            await self._record_refusal(request, str(error))
            return True
        try:
            if not recorded:
                await agent.run(request.request, conversation=request.conversation_id or None,
                                turn_id=request.turn_id)
            else:
                previous = last_worker(recorded)
                self.say(f"worker {self.name}: taking over {request.turn_id} "
                         f"{f'from {previous} ' if previous else ''}after seq {recorded[-1].seq}")
                await agent.take_over(request.turn_id, worker=self.name)
        except HandedBack:
            return False
        except PrefixDiverged as error:
            await self._record_end(recorded, str(error))
        except NothingToTakeOver as error:
            self.say(f"worker {self.name}: {error}")
        finally:
            self._busy[key] -= 1
        return True

    async def _agent(self, request: WorkRequest) -> tuple[AgentKey, Agent]:
        """The agent for the request's wire, model, name and language, started once and kept
        (the least recently used idle ones are closed beyond `max_agents`); it is entered and
        left by the keeper task, as anyio requires. The caller releases it (`_busy`)."""
        wire = parse_wire(request.wire)
        key: AgentKey = (wire, request.model, request.agent, request.language, request.system)
        async with self._agents_lock:
            agent = self._agents.get(key)
            if agent is not None:
                self._agents.move_to_end(key)
            else:
                settings = replace(self.settings.agents, name=request.agent,
                                   language=request.language, system=request.system,
                                   worker=self.name)
                agent = Agent(wire=wire, model=request.model, base_url=self.base_urls.get(wire),
                              tools=self._hub, db=self._store, log=None, settings=settings,
                              subscribers=[self._relay])
                await self._keep("open", agent)
                self._agents[key] = agent
                idle = [k for k in self._agents if not self._busy[k] and k != key]
                for old in idle[: max(0, len(self._agents) - self.settings.max_agents)]:
                    await self._keep("close", self._agents.pop(old))
            self._busy[key] += 1
            return key, agent

    async def _keep(self, operation: str, agent: Agent) -> None:
        """Open an agent in a task of its own (its bus's task group lives there), or let that
        task close it: anyio wants a context left by the task that entered it, and agents are
        closed in any order."""
        if operation == "close":
            self._closers.pop(agent).set()
            return
        opened, close = anyio.Event(), anyio.Event()
        failed: list[BaseException] = []
        self._hosts.start_soon(self._host, agent, opened, close, failed)
        await opened.wait()
        if failed:
            raise failed[0]
        self._closers[agent] = close

    @staticmethod
    async def _host(agent: Agent, opened: anyio.Event, close: anyio.Event,
                    failed: list[BaseException]) -> None:
        try:
            async with agent:
                opened.set()
                await close.wait()
        except Exception as error:
            if opened.is_set():
                logger.warning("worker: closing an agent: %s", error)
            else:
                failed.append(error)
                opened.set()

    async def _keeper(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        try:
            async with anyio.create_task_group() as hosts:
                self._hosts = hosts
                task_status.started()
                await self._closing.wait()
                for close in self._closers.values():
                    close.set()
        finally:
            self._keeper_done.set()

    async def _record_refusal(self, request: WorkRequest, reason: str) -> None:
        """A turn that could not start here, recorded as one: the submitter reads why."""
        self.say(f"worker {self.name}: turn {request.turn_id} cannot run: {reason}")
        spec = TurnSpec(agent=request.agent, request=request.request, language=request.language,
                        system=request.system, conversation_id=request.conversation_id)
        await record_not_started(request.turn_id, spec, wire=request.wire, model=request.model,
                                 reason=reason, publish=self._append)

    async def _record_end(self, recorded: list[Envelope], reason: str) -> None:
        self.say(f"worker {self.name}: {reason}")
        await record_abandoned(recorded, reason, self._append)

    async def _append(self, batch: Sequence[Envelope]) -> None:
        """A record the engine wrote for a turn no agent runs, kept clear of every secret the
        worker knows (its keys, its MCP servers' tokens), as an agent's bus keeps its own."""
        secrets = known_secrets(Endpoint(base_url=""), server_configs(self.mcp))
        await anyio.to_thread.run_sync(self._store.append, list(secrets.batch(batch)))
        self._relay.poke()

    async def _relay_caught_up(self) -> None:
        """The leading relay has published everything committed (a standby one: the leader
        publishes this worker's last events)."""
        while self._relay.leading:
            placed = await anyio.to_thread.run_sync(self._store.follow_placed,
                                                    self._relay.position, 1)
            if not placed:
                return
            self._relay.poke()
            await anyio.sleep(0.05)


def _backoff(message: Msg) -> float:
    """Seconds before a request that could not be finished is delivered again
    (`REDELIVERY`, after as many failures as it has been delivered)."""
    try:
        delivered = message.metadata.num_delivered or 1
    except Exception:
        delivered = 1
    return REDELIVERY.delay(delivered)


async def _quietly(operation: Any) -> None:
    try:
        await operation
    except Exception as error:
        logger.warning("worker: %s", error)

