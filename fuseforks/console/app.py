"""The console's pages: turns, a turn, audit, gateway clients, capabilities — HTML from the package's templates.

Each page reads the record in a worker thread (a store's calls are synchronous), builds what it
shows from the projections the commands use, and renders it whole, so every page works without
JavaScript. The live parts are marked `data-live` in the templates: `static/live.js` fetches the
same address again while the page is open and swaps in what changed.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args
from urllib.parse import quote, urlencode

import anyio.to_thread
import jinja2
import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from fuseforks.console.chart import BYTES, Series, bar_chart
from fuseforks.console.guard import Guard
from fuseforks.console.listing import TurnFilter, page
from fuseforks.console.source import RecordSource
from fuseforks.console.turn_page import turn_page
from fuseforks.core.errors import FuseforksError
from fuseforks.core.names import SESSION_END_CAUSES, STOP_REASONS, WIRE_NAMES
from fuseforks.core.texts import format_size
from fuseforks.projections.audit import (
    AuditFilter,
    AuditRows,
    ClientDeliveryRow,
    Outcome,
    csv_text,
    digest_prefix,
    moment_key,
)
from fuseforks.projections.capabilities import capabilities
from fuseforks.projections.clients import (
    BYTE_SERIES,
    IMAGE_SERIES,
    KINDS,
    Timeline,
    between,
    client_moments,
    timeline,
    total,
    totals,
)
from fuseforks.projections.words import call_end, images_shown
from fuseforks.stores.store import Record

HERE = Path(__file__).parent
AUDIT_SHOWN = 500
"""Audit rows a page shows at most, the newest; the rest is counted (`fuseforks audit --csv`
has them all)."""
_LISTED_WIRES = (*WIRE_NAMES, "gateway")
"""The wires the turns page filters by: a gateway session is listed with the wire `gateway`."""
_STOPS = (*STOP_REASONS, *SESSION_END_CAUSES, "cut")
OUTCOMES: tuple[str, ...] = get_args(Outcome)
"""What became of a request that carried tool images, as the audit's rows say."""


class Refused(Exception):
    """A page that cannot be shown as asked: its status and one sentence."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def _templates() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
        undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    environment.filters["size"] = format_size
    environment.filters["short"] = lambda digest, n=12: digest[:n]
    environment.filters["segment"] = lambda text: quote(text, safe="")
    environment.filters["call_end"] = call_end
    environment.filters["images_shown"] = images_shown
    environment.globals["image_series"] = IMAGE_SERIES
    environment.globals["byte_series"] = BYTE_SERIES
    environment.globals["query"] = lambda args: urlencode(
        {k: v for k, v in args.items() if v not in (None, "")})
    return environment


class Console:
    """The pages over one record."""

    def __init__(self, record: RecordSource, *, now: Callable[[], datetime] | None = None) -> None:
        self.record = record
        self.templates = _templates()
        for name in self.templates.list_templates():  # compiled now, not on a first visit
            self.templates.get_template(name)
        self.now = now or (lambda: datetime.now(UTC))

    def app(self, *, token: str | None, loopback_only: bool) -> Guard:
        routes = [
            Route("/", self.turns),
            Route("/turns/{turn_id:path}", self.turn),
            Route("/audit", self.audit),
            Route("/audit.csv", self.audit_csv),
            Route("/clients", self.clients),
            Route("/clients/{name:path}", self.client),
            Route("/capabilities", self.capabilities),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ]
        return Guard(Starlette(routes=routes), token=token, loopback_only=loopback_only)

    # --- pages ----------------------------------------------------------------------------------

    async def turns(self, request: Request) -> Response:
        args = dict(request.query_params)

        def build(reader: Record) -> dict[str, Any]:
            where = TurnFilter(
                wire=_choice(args, "wire", _LISTED_WIRES), model=args.get("model") or None,
                stop=_choice(args, "stop", _STOPS),
                conversation=args.get("conversation") or None,
                since=self._moment(args, "since"), until=self._moment(args, "until"))
            listing = page(reader, where, _page_number(args.get("page")))
            return {"listing": listing, "args": args, "wires": _LISTED_WIRES, "stops": _STOPS}

        return await self._page("turns.html", build, args=args)

    async def turn(self, request: Request) -> Response:
        given = request.path_params["turn_id"]

        def build(reader: Record) -> dict[str, Any] | str:
            envelopes = reader.read(given)
            if not envelopes:
                matches = [i.turn_id for i in self.record.turns(reader)
                           if i.turn_id.startswith(given)]
                if len(matches) == 1:
                    return f"/turns/{quote(matches[0], safe='')}"
                if not matches:
                    raise Refused(404, f"No turn {given!r} in {self.record.location}.")
                return {"ambiguous": matches, "given": given}
            return {"turn": turn_page(envelopes)}

        return await self._page("turn.html", build)

    async def audit(self, request: Request) -> Response:
        args = dict(request.query_params)

        def build(reader: Record) -> dict[str, Any]:
            prefix, candidates, rows = self._audit(reader, args)
            return {"rows": rows, "shown": rows.deliveries[::-1][:AUDIT_SHOWN],
                    "sent": rows.client_deliveries[::-1][:AUDIT_SHOWN], "args": args,
                    "wires": WIRE_NAMES, "outcomes": OUTCOMES, "prefix": prefix,
                    "candidates": candidates}

        return await self._page("audit.html", build, args=args)

    async def audit_csv(self, request: Request) -> Response:
        """One table of the audit page, every row and in its order, as `fuseforks audit --csv`
        prints it: the provider deliveries, or with `of=clients` the images sent to clients."""
        args = dict(request.query_params)

        def build(reader: Record) -> dict[str, Any]:
            clients = _choice(args, "of", ("deliveries", "clients")) == "clients"
            _, _, rows = self._audit(reader, args)
            return {"csv": csv_text(rows.client_deliveries[::-1], ClientDeliveryRow) if clients
                    else csv_text(rows.deliveries[::-1])}

        return await self._page("audit.html", build, args=args, as_csv="audit.csv")

    def _audit(self, reader: Record,
               args: dict[str, str]) -> tuple[str | None, list[str], AuditRows]:
        """The digest prefix asked for, the digests it matches and the rows the audit page
        shows (none when the prefix matches no image or several)."""
        given = args.get("digest", "").strip()
        prefix = _parsed(digest_prefix, given) if given else None
        where = AuditFilter(wire=_choice(args, "provider", WIRE_NAMES),
                            model=args.get("model") or None, tool=args.get("tool") or None,
                            since=self._moment(args, "since"),
                            until=self._moment(args, "until"),
                            outcome=_choice(args, "outcome", OUTCOMES),  # type: ignore[arg-type]
                            client=args.get("client", "").strip() or None)
        candidates = reader.digests(prefix) if prefix is not None else []
        if prefix is not None and len(candidates) != 1:
            return prefix, candidates, AuditRows(origins=[], deliveries=[])
        rows = reader.audit(msgspec.structs.replace(
            where, digest=candidates[0] if candidates else None))
        return prefix, candidates, rows

    async def clients(self, request: Request) -> Response:
        """Every gateway client the record names, with what the gateway did for it."""
        args = dict(request.query_params)

        def build(reader: Record) -> dict[str, Any]:
            moments = between(client_moments(reader.of_kinds(KINDS)),
                              self._moment(args, "since"), self._moment(args, "until"))
            return {"totals": totals(moments), "args": args}

        return await self._page("clients.html", build, args=args)

    async def client(self, request: Request) -> Response:
        """One gateway client: what the gateway did for it over time, as charts and tables."""
        name = request.path_params["name"]
        args = dict(request.query_params)

        def build(reader: Record) -> dict[str, Any]:
            every = [m for m in client_moments(reader.of_kinds(KINDS)) if m.client == name]
            if not every:
                raise Refused(404, f"No gateway client {name!r} in {self.record.location}.")
            moments = between(every, self._moment(args, "since"), self._moment(args, "until"))
            shown = timeline(moments)
            labels = [_bucket_label(b.start) for b in shown.buckets]
            return {"name": name, "args": args, "total": total(moments), "timeline": shown,
                    "labels": labels, "charts": _client_charts(name, shown, labels)}

        return await self._page("client.html", build, args=args)

    async def capabilities(self, request: Request) -> Response:
        def build(reader: Record) -> dict[str, Any]:
            return {"rows": capabilities(reader.of_kinds(["PlacementLearned"]))}

        return await self._page("capabilities.html", build)

    # --- rendering ------------------------------------------------------------------------------

    async def _page(self, template: str,
                    build: Callable[[Record], dict[str, Any] | str],
                    args: dict[str, str] | None = None, as_csv: str = "") -> Response:
        def render() -> Response:
            try:
                with self.record.reading() as reader:
                    context = build(reader)
                    notices = reader.notices()
            except Refused as refused:
                return self._message(refused.status, str(refused), template, args)
            except (FuseforksError, OSError) as error:
                reason = str(error) if isinstance(error, FuseforksError) else \
                    f"{self.record.location}: cannot read it ({error.strerror or error})"
                return self._message(503, reason, template, args)
            if isinstance(context, str):
                return RedirectResponse(context, status_code=302)
            if as_csv:
                return Response(context["csv"], media_type="text/csv; charset=utf-8", headers={
                    "content-disposition": f'attachment; filename="{as_csv}"'})
            return HTMLResponse(self._render(template, {**context, "notices": notices}))

        return await anyio.to_thread.run_sync(render)

    def _render(self, template: str, context: dict[str, Any]) -> str:
        return self.templates.get_template(template).render(
            source=str(self.record.location), **context)

    def _message(self, status: int, reason: str, template: str,
                 args: dict[str, str] | None) -> Response:
        page = {"turns.html": "turns", "audit.html": "audit", "clients.html": "clients",
                "client.html": "clients"}.get(template, "")
        return HTMLResponse(self._render("message.html", {
            "status": status, "reason": reason, "page": page, "args": args or {},
            "wires": _LISTED_WIRES if page == "turns" else WIRE_NAMES, "stops": _STOPS,
            "outcomes": OUTCOMES}),
            status_code=status)

    def _moment(self, args: dict[str, str], name: str) -> str | None:
        text = args.get(name, "").strip()
        return _parsed(lambda t: moment_key(t, self.now()), text, name) if text else None




def _bucket_label(start: str) -> str:
    """A bucket as the page names it: `2026-11-30 08:00` (an hour, UTC) or `2026-11-30`."""
    return start.replace("T", " ").removesuffix("Z")


def _client_charts(name: str, shown: Timeline, labels: list[str]) -> list[Any]:
    if not shown.buckets:
        return []
    per = (f"per {shown.unit} (UTC), {labels[0]} to {labels[-1]}" if len(labels) > 1
           else f"in the {shown.unit} of {labels[0]} (UTC)")

    def series(fields: tuple[tuple[str, str], ...]) -> list[Series]:
        return [Series(name=field, label=label,
                       values=[getattr(b.tally, field) for b in shown.buckets])
                for field, label in fields]

    images = series(IMAGE_SERIES)
    return [
        bar_chart(id="images-chart", title=f"Images the gateway handled for {name}",
                  description=f"Images of the results sent to {name} {per}, stacked by what "
                  f"became of them: {', '.join(s.label for s in images)}. The table below "
                  "has the numbers.", buckets=labels, series=images, stacked=True),
        bar_chart(id="bytes-chart", title=f"Image bytes for {name}: from servers, sent on",
                  description=f"Bytes of the servers' images against bytes sent on to {name} "
                  f"{per}, side by side. The table below has the numbers.", buckets=labels,
                  series=series(BYTE_SERIES), stacked=False, shown=format_size,
                  units=BYTES),
    ]


def _parsed(parse: Callable[[str], str], text: str, name: str = "digest") -> str:
    try:
        return parse(text)
    except ValueError as error:
        raise Refused(400, f"{name}: {error}.") from None


def _choice(args: dict[str, str], name: str, allowed: tuple[str, ...]) -> str | None:
    value = args.get(name) or None
    if value is not None and value not in allowed:
        raise Refused(400, f"{name}: {value!r} is not one of {', '.join(allowed)}.")
    return value


def _page_number(text: str | None) -> int:
    try:
        return max(int(text or 1), 1)
    except ValueError:
        raise Refused(400, f"page: {text!r} is not a page number.") from None
