"""The console over a PostgreSQL store: the same pages as over SQLite, a turn recorded by another
process appears on the open list, and the password is never shown."""

from __future__ import annotations

from pathlib import Path

import msgspec
from click.testing import CliRunner
from playwright.sync_api import Page, expect

from fuseforks.cli import main
from fuseforks.projections.summary import TurnSummary
from fuseforks.projections.words import images_shown
from fuseforks.stores.postgres import PostgresStore
from fuseforks.stores.urls import redact_url
from tests.cli.crafted import camera_turn, digest
from tests.console.servers import start, stop
from tests.console.test_pages import cells, command
from tests.stores.server import PASSWORD


def test_the_demo_in_postgres_reads_as_in_sqlite_and_follows_new_turns(
        demo_store: Path, pg_url: str, page: Page) -> None:
    copied = CliRunner().invoke(main, ["copy", str(demo_store), pg_url])
    assert copied.exit_code == 0, copied.output
    console, url = start(pg_url)
    try:
        page.goto(url)
        expected = list(reversed(command("turns", pg_url)))
        assert [row[1:] for row in cells(page, "table.turns tbody tr")] == [
            [t["agent"], t["wire"], t["model"], t["started"], str(t["rounds"]), t["stop"],
             images_shown(msgspec.convert(t, TurnSummary)), str(t["events"])] for t in expected]
        expect(page.locator("header .source")).to_have_text(f"{redact_url(pg_url)} · read-only")
        page.evaluate("window.stayed = 'yes'")
        with PostgresStore(pg_url) as writer:
            writer.append(camera_turn("written-elsewhere", [digest(7)],
                                      start="2999-01-01T00:00:00.000Z"))
        first = page.locator("tr[data-turn]").first
        expect(first).to_have_attribute("data-turn", "written-elsewhere")
        expect(page.locator("#turn-count")).to_have_text(
            f"{len(expected) + 1} of {len(expected) + 1} turns · newest first")
        assert page.evaluate("window.stayed") == "yes"
        first.get_by_role("link", name="written-elsewhere").click()
        expect(page.locator("#turn-stop")).to_have_text("answered")
        assert PASSWORD not in page.content()
    finally:
        code, out, errors = stop(console)
    assert (code, errors) == (0, "")
    assert PASSWORD not in out + errors
