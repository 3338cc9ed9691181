"""The gateway's book of client sessions: one recorded `Session` per client connection.

A session begins with the client's first request after `initialize` (its name and version are
known by then, and its profile is chosen from them) and ends when the client goes (stdin closed,
its HTTP session deleted) or the gateway stops. A client connection is the stdio pipe; over
HTTP, the `Mcp-Session-Id` the transport gave it; a client on the 2026-07-28 protocol, which has
no session, by its name and version.

The book also carries change notifications out: when an upstream server's list changes, every
client hears it (a handshake-era client on its connection, a 2026-07-28 client on its
`subscriptions/listen` stream). A new list of tools is first held to the pins
(`fuseforks.gateway.pins`): a changed tool is named (`say`), withheld with `--pin`, and the change
recorded in every session (`ToolsChanged`) before any client hears of it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import msgspec
from mcp.server.context import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ServerEvent,
    ToolsListChanged,
)

from fuseforks.core.errors import FuseforksError
from fuseforks.core.names import GatewayTransport, Language, SessionEndCause
from fuseforks.engine.recorder import Publish
from fuseforks.engine.session import Session, SessionSpec
from fuseforks.events.sequencer import Clock
from fuseforks.events.types import ServerDown, ToolFilterRecord
from fuseforks.gateway.names import ToolNaming
from fuseforks.gateway.pins import Pins, change_lines
from fuseforks.gateway.profiles import NO_OVERRIDES, LimitOverrides, profile_for
from fuseforks.gateway.upstream import UpstreamTools, hold, offered_specs
from fuseforks.mcp.catalog import Catalog
from fuseforks.mcp.hub import ToolHub

logger = logging.getLogger("fuseforks.gateway")
UNNAMED_CLIENT = "unnamed-client"
"""The client's name in the record when it gave none."""

_EVENTS: dict[str, ServerEvent] = {"tools": ToolsListChanged(),
                                   "resources": ResourcesListChanged(),
                                   "prompts": PromptsListChanged()}


class GatewaySettings(msgspec.Struct, frozen=True, kw_only=True):
    """What the user chose for every session of this gateway."""

    agent: str = "gateway"
    transport: GatewayTransport = "stdio"
    profile: str = "auto"
    overrides: LimitOverrides = NO_OVERRIDES
    naming: ToolNaming = "prefixed"
    language: Language = "en"
    pin: bool = False
    """A tool whose definition changed since it was last offered is withheld until approved."""
    approve: tuple[str, ...] = ()
    """Changed tools offered anyway (their new definition becomes the pinned one)."""


class LiveSession:
    """A client's session and the tools it sees; `peer` reaches the client for notifications."""

    def __init__(self, session: Session, tools: UpstreamTools, peer: ServerSession) -> None:
        self.session = session
        self.tools = tools
        self.peer = peer


class SessionBook:
    def __init__(self, hub: ToolHub, settings: GatewaySettings, publish: Publish | None, *,
                 servers_down: Sequence[ServerDown] = (), pins: Pins | None = None,
                 say: Callable[[str], None] | None = None, clock: Clock | None = None) -> None:
        """`pins`: what the tools are held to, checked at the gateway's start already (none:
        nothing is compared); `say` hears a line for each tool that changes while it runs."""
        self.hub = hub
        self.settings = settings
        self.listeners = InMemorySubscriptionBus()
        """2026-07-28 clients' `subscriptions/listen` streams."""
        self._publish = publish
        self._servers_down = list(servers_down)
        self._pins = pins
        self._say = say
        self._offered = offered_specs(hub, settings.naming)
        """The tools offered last, by the record."""
        self._tool_filters = [
            ToolFilterRecord(server=c.name, allow=list(c.tools.allow), deny=list(c.tools.deny))
            for c in hub.configs if c.tools.allow or c.tools.deny]
        self._clock = clock
        self.catalog = Catalog(hub)
        self._live: dict[str, LiveSession] = {}
        self._opening = anyio.Lock()

    def key(self, ctx: ServerRequestContext[Any, Any]) -> str:
        if self.settings.transport == "stdio":
            return "stdio"
        request = ctx.request
        headers = getattr(request, "headers", None)
        session_id = headers.get("mcp-session-id") if headers is not None else None
        if session_id:
            return f"http:{session_id}"
        client, version = _client(ctx)
        return f"client:{client}/{version}"

    async def session_for(self, ctx: ServerRequestContext[Any, Any]) -> LiveSession:
        """The session of the client this request comes from, begun (and recorded) on its first
        request."""
        key = self.key(ctx)
        async with self._opening:
            live = self._live.get(key)
            if live is None:
                live = await self._begin(ctx)
                self._live[key] = live
        live.peer = ctx.session
        return live

    async def _begin(self, ctx: ServerRequestContext[Any, Any]) -> LiveSession:
        settings = self.settings
        client, version = _client(ctx)
        profile = profile_for(settings.profile, client, settings.overrides)
        tools = UpstreamTools(self.hub, self.catalog, settings.naming, profile.limits,
                              profile.result_limits, profile.structured_first)
        spec = SessionSpec(agent=settings.agent, client=client, client_version=version,
                           transport=settings.transport, profile=profile.name,
                           limits=profile.limits, result_limits=profile.result_limits,
                           language=settings.language, servers_down=self._servers_down,
                           tool_filters=self._tool_filters,
                           changed_tools=list(self._pins.changed if self._pins else ()),
                           withheld_tools=list(self._pins.withheld if self._pins else ()))
        session = Session(spec, tools, clock=self._clock, publish=self._publish)
        await session.start()
        logger.info("gateway session %s: client %s %s, profile %s", session.session_id, client,
                    version, profile.name)
        return LiveSession(session, tools, ctx.session)

    @property
    def sessions(self) -> list[Session]:
        return [live.session for live in self._live.values()]

    async def end(self, key: str, cause: SessionEndCause) -> None:
        live = self._live.pop(key, None)
        if live is not None:
            await live.session.end(cause)

    def ending(self) -> None:
        """The gateway stops: calls cancelled from now on are named in their session's end."""
        for live in self._live.values():
            live.session.ending()

    async def end_all(self, cause: SessionEndCause) -> None:
        for key in list(self._live):
            await self.end(key, cause)

    async def changed(self, server: str, kind: str) -> None:
        """An upstream server's list changed: a list of tools is held to the pins and recorded;
        then every client is told (best effort)."""
        if kind == "tools":
            await self._tools_changed()
        event = _EVENTS.get(kind)
        if event is not None:
            await self.listeners.publish(event)
        for live in list(self._live.values()):
            try:
                if kind == "tools":
                    await live.peer.send_tool_list_changed()
                elif kind == "resources":
                    await live.peer.send_resource_list_changed()
                elif kind == "prompts":
                    await live.peer.send_prompt_list_changed()
            except Exception as error:  # a client that is gone hears nothing more
                logger.debug("gateway: could not tell a client of %s's change: %r", server, error)

    async def _tools_changed(self) -> None:
        """The servers' tools checked against the pins at once — this runs as soon as the
        server's new list is in, before any await: no client lists a changed tool before it is
        withheld — then the change named and recorded in every session, if what is offered is
        not what was offered before."""
        pins = self._pins
        found = hold(self.hub, pins, self.settings.naming) if pins is not None else []
        offered = offered_specs(self.hub, self.settings.naming)
        if not found and offered == self._offered:
            return
        self._offered = offered
        withheld = pins.withheld if pins is not None else []
        if self._say is not None:
            for line in change_lines(found, withheld, self.settings.pin):
                self._say(line)
        changed = [c.name for c in found]
        kept = [name for name in changed if name in withheld]
        async with self._opening:  # a session beginning now records its start first
            for live in list(self._live.values()):
                try:
                    await live.session.tools_changed(offered, changed, kept)
                except FuseforksError as error:  # not recorded: the client is told all the same
                    logger.warning("gateway session %s: could not record the tools' change: %s",
                                   live.session.session_id, error)


def _client(ctx: ServerRequestContext[Any, Any]) -> tuple[str, str]:
    params = ctx.session.client_params
    if params is None:
        return UNNAMED_CLIENT, ""
    return params.client_info.name or UNNAMED_CLIENT, params.client_info.version or ""
