"""The console's gateway clients: a page listing each client with what the gateway did for it,
and a page per client with charts over time (inline SVG) and the same numbers as tables.

The store is a real one: two `fuseforks gateway` processes recording into one SQLite file, each
called by an SDK client of another name, in front of a server whose result holds an image every
client gets as it is, one the gateway must re-encode or shrink, and one it must drop."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

import anyio
import httpx
import msgspec
import pytest
from playwright.sync_api import ConsoleMessage, Page, expect

from fuseforks.core.texts import format_size
from fuseforks.events.codec import Envelope
from fuseforks.events.types import ImagesNormalized, ResultSent
from fuseforks.stores.jsonl import read_stream
from fuseforks.stores.sqlite import SqliteStore
from tests.cli.crafted import make_store
from tests.console.servers import serving
from tests.console.test_guard import SECURITY_HEADERS
from tests.console.test_sessions import REPLAYS, SESSION, rows, text
from tests.gateway.conftest import PYTHON, REPO, stdio_gateway, write_config
from tests.gateway.pictures import small_jpeg, tiny_png

OPTIONS = {"claude-code": ("--max-image-bytes", "25000"),  # the 27 KB PNG is re-encoded
           "cursor": ("--max-edge", "320")}  # the JPEG is shrunk to 320 px
FROM_SERVERS = len(tiny_png()) + len(small_jpeg())
"""The bytes of the two readable images of `every_kind` (the third is broken base64)."""


@pytest.fixture(scope="module")
def gateway_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("clients")
    store = folder / "gateway.db"
    config = write_config(folder, blocks={
        "command": PYTHON, "args": ["-m", "tests.gateway.servers.blocks"], "cwd": str(REPO)})

    async def call() -> None:
        for client, options in OPTIONS.items():
            async with stdio_gateway(config, "--db", str(store), "--profile", "api-limits",
                                     *options, client=client, version="2.1.0") as session:
                await session.call_tool("blocks__every_kind", {})

    anyio.run(call)
    return store


def recorded(store: Path, client: str) -> tuple[str, list[int]]:
    """When the result went to `client` and the size of each image it got, from the events."""
    with SqliteStore(store, read_only=True) as reader:
        sent = [e for e in reader.of_kinds(["ResultSent"]) if isinstance(e.event, ResultSent)
                and e.event.client == client]
        assert len(sent) == 1
        kept = next(e.event for e in reader.read(sent[0].turn_id)
                    if isinstance(e.event, ImagesNormalized))
    return sent[0].at, [image.size for image in kept.images]


def hour_of(at: str) -> str:
    return f"{at[:10]} {at[11:13]}:00"


def test_the_clients_page_lists_each_client_with_what_it_got(gateway_store: Path) -> None:
    sent = {client: sum(recorded(gateway_store, client)[1]) for client in OPTIONS}
    with serving(gateway_store) as url, httpx.Client(base_url=url) as client:
        listed = client.get("/clients")
        later = client.get("/clients", params={"since": "2999-01-01"})
        turns = client.get("/")
    assert [r.status_code for r in (listed, later, turns)] == [200] * 3
    assert rows(listed.text, "client-totals") == [
        # client, sessions, results, passed through, re-encoded, shrunk, dropped, bytes in, out
        ["claude-code", "1", "1", "1", "1", "0", "1", format_size(FROM_SERVERS),
         format_size(sent["claude-code"])],
        ["cursor", "1", "1", "1", "0", "1", "1", format_size(FROM_SERVERS),
         format_size(sent["cursor"])],
    ]
    assert re.findall(r'<td class="n" title="(\d+) bytes">', listed.text) == [
        str(FROM_SERVERS), str(sent["claude-code"]), str(FROM_SERVERS), str(sent["cursor"])]
    assert re.findall(r'<a href="(/clients/[^"]+)">', listed.text) == [
        "/clients/claude-code", "/clients/cursor"]
    assert '<a href="/clients" aria-current="page">Clients</a>' in listed.text
    assert '<a href="/clients">Clients</a>' in turns.text  # every page's navigation
    assert text(later.text).count("No gateway client in this time range.") == 1


def test_a_clients_page_charts_each_hour_and_tables_the_numbers(gateway_store: Path) -> None:
    at, sizes = recorded(gateway_store, "cursor")
    hour = hour_of(at)
    with serving(gateway_store) as url, httpx.Client(base_url=url) as client:
        page = client.get("/clients/cursor")
        unknown = client.get("/clients/nobody")
        wrong = client.get("/clients/cursor", params={"until": "yesterday"})
    assert page.status_code == 200
    assert {k: page.headers.get(k) for k in SECURITY_HEADERS} == SECURITY_HEADERS
    assert rows(page.text, "client-buckets") == [
        [hour, "1", "1", "1", "0", "1", "1", format_size(FROM_SERVERS), format_size(sum(sizes))]]
    images = re.search(r'<svg id="images-chart".*?</svg>', page.text, re.S)
    assert images is not None
    assert re.findall(r"<title[^>]*>([^<]*)</title>", images.group(0)) == [
        "Images the gateway handled for cursor", f"{hour}: 1 passed through",
        f"{hour}: 1 shrunk", f"{hour}: 1 dropped"]
    assert 'role="img" aria-labelledby="images-chart-title images-chart-desc"' in images.group(0)
    data = re.findall(r'data-series="(\w+)" data-bucket="([^"]+)" data-value="(\d+)"',
                      page.text)
    assert data == [("passed", hour, "1"), ("shrunk", hour, "1"), ("dropped", hour, "1"),
                    ("received_bytes", hour, str(FROM_SERVERS)),
                    ("sent_bytes", hour, str(sum(sizes)))]
    assert "style=" not in page.text  # the policy refuses inline styles: colours are classes
    assert re.search(r'<a id="client-audit" href="/audit\?client=cursor">', page.text)
    assert unknown.status_code == 404
    assert "No gateway client 'nobody' in " in text(unknown.text)
    assert wrong.status_code == 400
    assert "until: 'yesterday' is neither" in text(wrong.text)


def test_the_audit_page_leads_to_each_clients_page(gateway_store: Path) -> None:
    with serving(gateway_store) as url:
        audit = httpx.get(f"{url}audit", params={"client": "cursor"})
    assert audit.status_code == 200
    assert re.findall(r'<p id="client-page">What the gateway did for <a href="([^"]+)">',
                      audit.text) == ["/clients/cursor"]
    cells = re.findall(r'<td><a href="(/clients/[^"]+)" title="what the gateway did for',
                       audit.text)
    assert cells == ["/clients/cursor"] * 2  # the two images cursor was sent


def sessions_over_hours(path: Path, hours: tuple[int, ...]) -> Path:
    """The recorded claude-ai session again at each of these hours after its own."""
    first = read_stream(REPLAYS / f"{SESSION}.jsonl")
    turns: list[list[Envelope]] = []
    for hour in hours:
        shifted = []
        for envelope in first:
            at = datetime.fromisoformat(envelope.at) + timedelta(hours=hour)
            shifted.append(msgspec.structs.replace(
                envelope, turn_id=f"{SESSION}-{hour}",
                at=at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"))
        turns.append(shifted)
    return make_store(path, *turns)


@pytest.fixture
def violations(page: Page) -> Iterator[list[str]]:
    """Every content security policy violation the page reports, as it reports them."""
    found: list[str] = []
    page.add_init_script("""document.addEventListener("securitypolicyviolation",
        (e) => console.error(`CSP violation: ${e.violatedDirective} ${e.blockedURI}`));""")

    def heard(message: ConsoleMessage) -> None:
        if "Content Security Policy" in message.text or "CSP violation" in message.text:
            found.append(message.text)

    page.on("console", heard)
    yield found


def test_the_chart_is_drawn_in_the_browser_without_a_policy_violation(
        tmp_path: Path, page: Page, violations: list[str]) -> None:
    store = sessions_over_hours(tmp_path / "hours.db", (0, 1, 3))
    with serving(store) as url:
        page.goto(f"{url}clients")
        page.click("#client-totals a")
        expect(page).to_have_url(f"{url}clients/claude-ai")
        chart = page.get_by_role("img", name="Images the gateway handled for claude-ai")
        expect(chart).to_be_visible()
        box = chart.bounding_box()
        assert box is not None and box["width"] > 400 and box["height"] > 100
        bars = page.locator("#images-chart rect.bar")
        expect(bars).to_have_count(6)
        titles = bars.evaluate_all("bars => bars.map(b => b.querySelector('title').textContent)")
        assert titles == [f"2026-11-30 {h:02d}:00: {n}" for h in (0, 1, 3)
                          for n in ("1 passed through", "2 re-encoded")]
        heights = bars.evaluate_all("bars => bars.map(b => b.getBBox().height)")
        assert heights[1] == pytest.approx(2 * heights[0])  # 2 re-encoded, 1 passed through
        assert page.locator("#bytes-chart rect.bar").count() == 6
        assert page.locator("#client-buckets tbody tr").evaluate_all(
            "rows => rows.map(r => [r.cells[0].textContent, r.cells[3].textContent,"
            " r.cells[4].textContent])") == [
            ["2026-11-30 00:00", "1", "2"], ["2026-11-30 01:00", "1", "2"],
            ["2026-11-30 02:00", "0", "0"], ["2026-11-30 03:00", "1", "2"]]
        fill = bars.first.evaluate("b => getComputedStyle(b).fill")
        assert fill == "rgb(29, 122, 58)"  # the stylesheet's colour of passed images
        page.goto(f"{url}audit?client=claude-ai")  # and the way back, from the audit page
        page.click("#client-page a")
        expect(page).to_have_url(f"{url}clients/claude-ai")
    assert violations == []
