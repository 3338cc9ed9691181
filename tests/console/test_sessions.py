"""Gateway sessions in the console: listed among the turns (wire `gateway`, the client where a
model would be), each with a page of its calls and the images its client was sent, and the
audit page naming the clients — the same rows `turns` and `audit` print."""

from __future__ import annotations

import json
import re
from datetime import datetime, timedelta
from html import unescape
from pathlib import Path
from typing import Any

import httpx
import msgspec
from click.testing import CliRunner
from playwright.sync_api import Page, expect

from fuseforks.cli import main
from fuseforks.events.codec import Envelope
from fuseforks.events.types import ResultSent, SessionStarted
from fuseforks.stores.jsonl import read_stream
from tests.cli.crafted import write_jsonl
from tests.console.servers import serving

REPLAYS = Path(__file__).resolve().parents[2] / "replays"
SESSION = "gateway-claude-desktop"


def record(tmp_path: Path) -> Path:
    """A stream with a turn and a gateway session, the session started last."""
    envelopes: list[Envelope] = []
    for name in ("p4-anthropic", SESSION):
        envelopes += read_stream(REPLAYS / f"{name}.jsonl")
    return write_jsonl(tmp_path / "mixed.jsonl", envelopes)


def command(*args: str) -> Any:
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def rows(html: str, table: str) -> list[list[str]]:
    body = re.search(rf'<table[^>]*id="{table}"[^>]*>.*?<tbody>(.*?)</tbody>', html, re.S)
    assert body is not None, table
    return [[unescape(re.sub(r"<[^>]+>", "", cell)).strip()
             for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body.group(1), re.S)]


def text(html: str) -> str:
    return re.sub(r"\s+", " ", unescape(re.sub(r"<[^>]+>", "", html)))


def test_a_session_is_listed_with_the_turns_and_found_by_its_wire_and_stop(
        tmp_path: Path) -> None:
    source = record(tmp_path)
    listed_by_turns = command("turns", str(source))
    newest_first = [t["turn_id"] for t in reversed(listed_by_turns)]
    assert set(newest_first) == {SESSION, "p4-anthropic"}
    session = next(t for t in listed_by_turns if t["turn_id"] == SESSION)
    assert (session["wire"], session["model"], session["rounds"], session["stop"],
            session["images_sent"]) == ("gateway", "claude-ai 0.14.10", 3, "closed", 3)
    with serving(source) as url, httpx.Client(base_url=url) as client:
        listed = client.get("/")
        gateways = client.get("/", params={"wire": "gateway"})
        closed = client.get("/", params={"stop": "closed"})
        answered = client.get("/", params={"stop": "answered"})
    assert [r.status_code for r in (listed, gateways, closed, answered)] == [200] * 4
    assert re.findall(r'<tr data-turn="([^"]+)">', listed.text) == newest_first
    shown = re.search(rf'<tr data-turn="{SESSION}">(.*?)</tr>', listed.text, re.S)
    assert shown is not None
    cells = [text(c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", shown.group(1), re.S)]
    assert cells[1:] == [session["agent"], "gateway", "claude-ai 0.14.10", session["started"],
                         "3", "closed", "3", str(session["events"])]
    assert re.findall(r'<tr data-turn="([^"]+)">', gateways.text) == [SESSION]
    assert re.findall(r'<tr data-turn="([^"]+)">', closed.text) == [SESSION]
    assert re.findall(r'<tr data-turn="([^"]+)">', answered.text) == ["p4-anthropic"]


def test_a_sessions_page_shows_its_calls_and_what_its_client_was_sent(tmp_path: Path) -> None:
    source = record(tmp_path)
    audit = command("audit", str(source))
    sent = [d for d in audit["client_deliveries"] if d["session_id"] == SESSION]
    with serving(source) as url:
        page = httpx.get(f"{url}turns/{SESSION}")
    assert page.status_code == 200
    assert 'data-settled="yes"' in page.text
    said = text(page.text)
    assert f"Gateway session {SESSION}" in said
    facts = dict(re.findall(r"<dt>([^<]+)</dt><dd[^>]*>(.*?)</dd>", page.text))
    assert {k: text(v) for k, v in facts.items() if k in (
        "wire", "model", "transport", "profile", "language", "stop", "calls", "rounds",
        "input tokens")} == {"wire": "gateway", "model": "claude-ai 0.14.10",
                             "transport": "stdio", "profile": "claude-desktop",
                             "language": "en", "stop": "closed", "calls": "3"}
    assert rows(page.text, "client-deliveries") == [
        [d["digest"][:12], f"#{d['call']}", d["tool"], "claude-ai 0.14.10"] for d in sent]
    assert 'id="deliveries"' not in page.text  # no image went to a provider
    for d in sent:
        card = re.search(rf'<li class="card" id="image-{d["digest"][:16]}".*?</li>\s*</ul>',
                         page.text, re.S)
        assert card is not None
        assert f"sent to the client claude-ai 0.14.10 with call {d['call']}" in text(card.group(0))
    assert "Gateway session ended: closed after 3 calls." in said


def test_the_audit_page_names_the_clients_that_received_images(tmp_path: Path) -> None:
    source = record(tmp_path)
    audit = command("audit", str(source))
    assert len(audit["client_deliveries"]) == 3
    with serving(source) as url:
        page = httpx.get(f"{url}audit")
    assert page.status_code == 200
    assert "3 images sent to gateway clients · newest first" in text(page.text)
    assert rows(page.text, "client-rows") == [
        [d["at"], d["digest"][:12], d["tool"], d["server"], "claude-ai 0.14.10", str(d["call"]),
         d["session_id"]] for d in reversed(audit["client_deliveries"])]


def two_clients(tmp_path: Path) -> Path:
    """The claude-ai session and a copy an hour later, as if claude-code had made the calls."""
    first = read_stream(REPLAYS / f"{SESSION}.jsonl")
    second: list[Envelope] = []
    for envelope in first:
        event = envelope.event
        if isinstance(event, (SessionStarted, ResultSent)):
            event = msgspec.structs.replace(event, client="claude-code", client_version="2.1.0")
        at = datetime.fromisoformat(envelope.at) + timedelta(hours=1)
        second.append(msgspec.structs.replace(
            envelope, turn_id="gateway-claude-code", event=event,
            at=at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"))
    return write_jsonl(tmp_path / "two-clients.jsonl", first + second)


def test_the_audit_page_finds_what_one_client_was_sent(tmp_path: Path, page: Page) -> None:
    source = two_clients(tmp_path)
    expected = command("audit", str(source), "--client", "claude-code")["client_deliveries"]
    assert len(expected) == 3
    assert {d["session_id"] for d in expected} == {"gateway-claude-code"}
    with serving(source) as url:
        page.goto(f"{url}audit")
        expect(page.locator("#client-rows tbody tr")).to_have_count(6)
        page.fill("input[name=client]", "claude-code")
        page.click("form.filters button[type=submit]")
        expect(page).to_have_url(re.compile(r"[?&]client=claude-code(&|$)"))
        assert page.locator("#client-rows tbody tr").evaluate_all(
            "rows => rows.map(r => [...r.cells].map(c => c.textContent.trim()))") == [
            [d["at"], d["digest"][:12], d["tool"], d["server"], "claude-code 2.1.0",
             str(d["call"]), d["session_id"]] for d in reversed(expected)]
        assert page.input_value("input[name=client]") == "claude-code"
        page.goto(f"{url}audit?client=nobody")
        expect(page.locator("#no-match")).to_have_text("No image matches.")



def test_each_audit_table_downloads_as_the_csv_audit_prints(tmp_path: Path, page: Page) -> None:
    source = two_clients(tmp_path)
    printed = CliRunner().invoke(main, ["audit", str(source), "--client", "claude-code", "--csv"])
    assert printed.exit_code == 0, printed.output
    header, *lines = printed.stdout.splitlines()
    assert len(lines) == 3
    with serving(source) as url:
        page.goto(f"{url}audit?client=claude-code&tool=")
        link = page.locator("#client-csv")
        expect(link).to_have_text("CSV")
        href = link.get_attribute("href")
        assert href == "/audit.csv?client=claude-code&of=clients"
        got = page.request.get(f"{url}{href[1:]}")
        assert got.status == 200
        assert got.headers["content-type"].startswith("text/csv")
        assert got.text().splitlines() == [header, *reversed(lines)]  # as the page: newest first
        providers = page.request.get(f"{url}audit.csv?client=claude-code")
        every = CliRunner().invoke(main, ["audit", str(source), "--csv"])
        assert providers.text().splitlines() == every.stdout.splitlines()  # the header alone
        assert page.locator("#delivery-csv").count() == 0  # no provider table on this page
        assert page.request.get(f"{url}audit.csv?of=everything").status == 400


def test_the_audit_page_filters_by_outcome_and_time_range(tmp_path: Path, page: Page) -> None:
    envelopes: list[Envelope] = []
    for name in ("p4-anthropic", "p4-image-refusing", SESSION):
        envelopes += read_stream(REPLAYS / f"{name}.jsonl")
    source = write_jsonl(tmp_path / "three.jsonl", envelopes)
    every = command("audit", str(source))
    assert {d["outcome"] for d in every["deliveries"]} == {"received", "refused"}
    until = "2026-11-30T00:00:00.100Z"
    with serving(source) as url:
        page.goto(f"{url}audit")
        page.select_option("select[name=outcome]", "refused")
        page.click("form.filters button[type=submit]")
        expect(page).to_have_url(re.compile(r"[?&]outcome=refused(&|$)"))
        shown = page.locator("#audit-rows tbody tr").evaluate_all(
            "rows => rows.map(r => [r.dataset.turn, r.dataset.outcome, r.cells[0].textContent])")
        assert shown == [[d["turn_id"], "refused", d["at"]] for d in reversed(every["deliveries"])
                         if d["outcome"] == "refused"]
        assert len(shown) == 2
        assert page.locator("#client-rows").count() == 0  # an image sent to a client has none
        page.goto(f"{url}audit?since=2026-11-30T00:00:00.080Z&until={until}")
        assert page.input_value("input[name=until]") == until
        assert page.locator("#audit-rows tbody tr").evaluate_all(
            "rows => rows.map(r => r.dataset.turn)") == ["p4-image-refusing", "p4-anthropic"]
        assert page.locator("#client-rows tbody tr").evaluate_all(
            "rows => rows.map(r => r.cells[0].textContent)") == [
            d["at"] for d in reversed(every["client_deliveries"])
            if "2026-11-30T00:00:00.080Z" <= d["at"] < until]
        refused = page.goto(f"{url}audit?until=yesterday")
        assert refused is not None and refused.status == 400
        expect(page.locator("main")).to_contain_text("until: 'yesterday' is neither")
