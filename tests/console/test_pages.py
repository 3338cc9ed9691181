"""The console in a real browser, over the demo's store: every page shows what the commands
print, read from the same projections — the tests compare them number for number."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from click.testing import CliRunner
from playwright.sync_api import Browser, Page, expect

from fuseforks.cli import main
from fuseforks.demo.scenarios import DEMO_SCENARIOS
from fuseforks.projections.summary import TurnSummary
from fuseforks.projections.words import images_shown

TURNS = len(DEMO_SCENARIOS)
"""The demo store's turns: one a scenario."""


def command(*args: str) -> Any:
    """What a command prints with --json, as data."""
    result = CliRunner().invoke(main, [*args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def cells(page: Page, rows: str) -> list[list[str]]:
    return page.locator(rows).evaluate_all(
        "rows => rows.map(r => Array.from(r.querySelectorAll('td'), td => td.innerText.trim()))")


def the_turn(store: Path, model: str, wire: str | None = None) -> str:
    (turn_id,) = [t["turn_id"] for t in command("turns", str(store))
                  if t["model"] == model and wire in (None, t["wire"])]
    return turn_id


def test_the_turns_list_is_what_turns_prints_newest_first(demo_store: Path, demo_console: str,
                                                          page: Page) -> None:
    page.goto(demo_console)
    expected = list(reversed(command("turns", str(demo_store))))
    assert len(expected) == TURNS
    expect(page.locator("#turn-count")).to_have_text(f"{TURNS} of {TURNS} turns · newest first")
    shown = cells(page, "table.turns tbody tr")
    assert [row[1:] for row in shown] == [
        [t["agent"], t["wire"], t["model"], t["started"], str(t["rounds"]), t["stop"],
         images_shown(msgspec.convert(t, TurnSummary)), str(t["events"])] for t in expected]
    assert page.locator("table.turns tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.turn)") == [t["turn_id"] for t in expected]


def test_the_ladder_turn_shows_the_refused_native_placement_and_the_received_alternate(
        demo_store: Path, demo_console: str, page: Page) -> None:
    turn_id = the_turn(demo_store, "gemini-2.5-flash")
    page.goto(demo_console)
    page.get_by_role("link", name=turn_id).click()
    expect(page).to_have_url(f"{demo_console}turns/{turn_id}")
    expect(page.locator("#turn-stop")).to_have_text("answered")
    refusal = page.locator("li.RequestRefused .refusal")
    expect(refusal).to_have_attribute("data-refusal", "placement")
    expect(refusal).to_contain_text("Refused (HTTP 400, INVALID_ARGUMENT): about placement")
    expect(page.locator("li.RequestRefused blockquote")).to_contain_text(
        "`function_response.parts` is not supported for this model")
    expect(page.locator("li.PlacementChanged")).to_contain_text(
        "Ladder step: the tool images move to the alternate placement")
    card = page.locator("li.card[data-digest]")
    expect(card).to_have_count(1)
    went = card.locator("ul.went li").evaluate_all(
        "items => items.map(i => [i.dataset.placement, i.dataset.outcome, i.innerText])")
    requests = [int(seq) for seq in page.locator("li.RequestSent").evaluate_all(
        "items => items.map(i => i.id.replace('seq-', ''))")]
    native, alternate = requests[1], requests[2]
    assert went == [
        ["native", "refused", f"request #{native} (round, round 2) to gemini gemini-2.5-flash, "
                              "native: refused"],
        ["alternate", "received", f"request #{alternate} (resend, round 2) to gemini "
                                  "gemini-2.5-flash, alternate: received"]]
    digest = card.get_attribute("data-digest")
    assert digest is not None
    assert card.locator("dl > div").evaluate_all(
        "ds => ds.map(d => [d.querySelector('dt').innerText, d.querySelector('dd').innerText])"
    ) == [["digest", digest[:12]], ["format", "JPEG (image/jpeg, passed through)"],
          ["pixels", "640 × 424"], ["bytes", "5108 (5 KB)"],
          ["from", "nik__live_view_image on nik"]]
    expect(page.locator("li.PlacementLearned .body")).to_have_text([
        "Learned: gemini-2.5-flash at 127.0.0.1 refused tool images in the native placement.",
        "Learned: gemini-2.5-flash at 127.0.0.1 received tool images in the alternate "
        "placement."])
    expect(page.locator("#answer")).to_have_text(
        "I see 1 image. image 1: left half red, right half green.")


def test_no_pixels_anywhere_and_the_page_says_so(demo_store: Path, demo_console: str,
                                                 page: Page) -> None:
    page.goto(f"{demo_console}turns/{the_turn(demo_store, 'claude-sonnet-5-5', 'anthropic')}")
    expect(page.locator("li.card .no-pixels-note")).to_have_text(
        "no pixels: the record keeps the digest, not the image")
    html = page.content()
    assert page.locator("img").count() == 0
    assert "base64" not in html and "data:image" not in html


def test_each_turn_page_shows_the_numbers_replay_gives(demo_store: Path, demo_console: str,
                                                       page: Page) -> None:
    reports = command("replay", str(demo_store))
    assert len(reports) == TURNS
    for report in reports:
        page.goto(f"{demo_console}turns/{report['turn_id']}")
        assert page.locator("#turn-events").inner_text() == str(report["events"])
        assert page.locator("#turn-stop").inner_text() == report["stop"]
        assert {name: int(page.locator(f"#usage-{name}").inner_text())
                for name in report["usage"]} == report["usage"]
        assert page.locator("#answer").inner_text() == report["answer"]
        assert page.locator("#log-lines").inner_text().splitlines() == report["log"]
        requests = page.locator("li.RequestSent").evaluate_all(
            "items => items.map(i => Number(i.id.replace('seq-', '')))")
        assert requests == [r["seq"] for r in report["requests"]]
        deliveries = page.locator("#deliveries tbody tr").evaluate_all(
            "rows => rows.map(r => [r.dataset.digest, Number(r.dataset.request), "
            "r.dataset.placement, r.dataset.outcome, r.dataset.stripped === 'true'])")
        assert deliveries == [[d["digest"], d["request_seq"], d["placement"], d["outcome"],
                               d["stripped"]] for d in report["audit"]["deliveries"]]


def test_a_digest_prefix_finds_its_deliveries_each_linking_to_its_turn(
        demo_store: Path, demo_console: str, page: Page) -> None:
    turn_id = the_turn(demo_store, "perplexity/deepseek-v4-pro-0813")
    (digest,) = {d["digest"] for d in command("audit", str(demo_store))["deliveries"]
                 if d["turn_id"] == turn_id}
    prefix = digest[:7].upper()
    expected = command("audit", str(demo_store), "--digest", prefix)
    page.goto(demo_console)
    page.get_by_role("link", name="Audit").click()
    page.get_by_label("digest").fill(prefix)
    page.get_by_role("button", name="Search").click()
    expect(page.locator("#delivery-count")).to_contain_text(
        f"{len(expected['deliveries'])} deliveries")
    rows = page.locator("#audit-rows tbody tr").evaluate_all(
        "rows => rows.map(r => [r.dataset.digest, r.dataset.turn, r.dataset.placement, "
        "r.dataset.outcome])")
    assert rows == [[d["digest"], d["turn_id"], d["placement"], d["outcome"]]
                    for d in reversed(expected["deliveries"])]
    expect(page.locator("#delivery-count")).to_contain_text("· newest first")
    assert page.locator("section.origin").count() == len(expected["origins"])
    refused = page.locator(f"#audit-rows tr[data-turn='{turn_id}'][data-outcome='refused']")
    expect(refused).to_have_count(2)
    refused.first.get_by_role("link", name=turn_id).click()
    seq = next(d["request_seq"] for d in reversed(expected["deliveries"])
               if d["turn_id"] == turn_id and d["outcome"] == "refused")
    expect(page).to_have_url(f"{demo_console}turns/{turn_id}#seq-{seq}")
    expect(page.locator(f"#seq-{seq}")).to_contain_text("Request sent")


def test_an_unknown_or_malformed_digest_says_so(demo_console: str, page: Page) -> None:
    page.goto(f"{demo_console}audit?digest=ffff0000")
    expect(page.locator("#no-match")).to_have_text(
        "No image of this record has a digest beginning with ffff0000.")
    response = page.goto(f"{demo_console}audit?digest=3fa2%E2%80%A6")
    assert response is not None and response.status == 400
    expect(page.locator("#problem")).to_have_text(
        "digest: '3fa2…' is not an image digest: give 4 to 64 hex characters of its SHA-256.")


def test_capabilities_is_the_table_capabilities_prints(demo_store: Path, demo_console: str,
                                                       page: Page) -> None:
    page.goto(demo_console)
    page.get_by_role("link", name="Capabilities").click()
    expected = command("capabilities", str(demo_store))
    assert cells(page, "table.capabilities tbody tr") == [
        [r["wire"], r["model"], r["endpoint_host"], r["placement"], r["last_received"] or "-",
         r["last_refused"] or "-"] for r in expected]


def test_the_filters_narrow_the_list(demo_store: Path, demo_console: str, page: Page) -> None:
    turns = command("turns", str(demo_store))
    page.goto(demo_console)
    page.get_by_label("wire").select_option("gemini")
    page.get_by_role("button", name="List").click()
    expect(page.locator("#turn-count")).to_have_text(f"2 of {TURNS} turns · newest first")
    assert page.locator("tr[data-turn]").evaluate_all("rows => rows.map(r => r.dataset.turn)") \
        == [t["turn_id"] for t in reversed(turns) if t["wire"] == "gemini"]
    page.goto(f"{demo_console}?stop=cut")
    expect(page.locator("p.empty")).to_contain_text("No turn matches.")
    conversation = page.goto(f"{demo_console}turns/{turns[0]['turn_id']}")
    assert conversation is not None
    page.locator("dd a[href^='/?conversation=']").click()
    expect(page.locator("tr[data-turn]")).to_have_count(1)
    expect(page.locator("tr[data-turn]")).to_have_attribute("data-turn", turns[0]["turn_id"])
    page.goto(f"{demo_console}?since=2999-01-01")
    expect(page.locator("#turn-count")).to_have_text(f"0 of {TURNS} turns · newest first")
    page.goto(f"{demo_console}?until=2999-01-01&since=2000-01-01")
    expect(page.locator("#turn-count")).to_have_text(f"{TURNS} of {TURNS} turns · newest first")
    response = page.goto(f"{demo_console}?since=yesterday")
    assert response is not None and response.status == 400
    expect(page.locator("#problem")).to_have_text(
        "since: 'yesterday' is neither an ISO-8601 time (2026-11-30T08:48:54Z, "
        "2026-11-30T09:48+01:00, 2026-11-30) nor a duration back from now (30m, 2h, 7d).")


def test_the_pages_work_without_javascript(browser: Browser, demo_store: Path,
                                           demo_console: str) -> None:
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(demo_console)
        expect(page.locator("tr[data-turn]")).to_have_count(TURNS)
        turn_id = the_turn(demo_store, "gemini-2.5-flash")
        page.get_by_role("link", name=turn_id).click()
        expect(page.locator("li.PlacementChanged")).to_have_count(1)
        page.get_by_role("link", name="Audit").click()
        page.get_by_label("model").fill("gemini-2.5-flash")
        page.get_by_role("button", name="Search").click()
        expect(page.locator("#audit-rows tbody tr")).to_have_count(2)
    finally:
        context.close()


def test_a_turn_is_found_by_a_unique_prefix_of_its_id(demo_store: Path, demo_console: str,
                                                      page: Page) -> None:
    turn_id = the_turn(demo_store, "grok-4.7")
    page.goto(f"{demo_console}turns/{turn_id[:12]}")
    expect(page).to_have_url(f"{demo_console}turns/{turn_id}")
    response = page.goto(f"{demo_console}turns/turn-")
    assert response is not None and response.status == 200
    expect(page.locator("ul.candidates li")).to_have_count(TURNS)
    response = page.goto(f"{demo_console}turns/nope")
    assert response is not None and response.status == 404
    expect(page.locator("#problem")).to_have_text(f"No turn 'nope' in {demo_store}.")
