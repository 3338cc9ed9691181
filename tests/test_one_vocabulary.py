"""One answer to "which images went where", in one vocabulary, whoever asks: `turns`, the
audit, the log, the console's turns page and the demo's table count a turn's images alike and
name a stop, a refusal and a retry alike — read from the read model written with the events."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

import httpx
from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.core.canonical import Usage
from fuseforks.events.codec import Envelope
from fuseforks.events.sequencer import FixedClock, Sequencer
from fuseforks.events.types import (
    ImageDelivery,
    ImageMeta,
    ImagesNormalized,
    RequestSent,
    ResponseReceived,
    RoundStarted,
    ToolCalled,
    ToolCallRecord,
    ToolResultRecorded,
    TurnEnded,
    TurnStarted,
)
from fuseforks.stores.sqlite import SqliteStore
from tests.cli.crafted import REPLAYS, digest
from tests.console.servers import serving
from tests.helpers.streams import import_stream

PICTURES = [digest(1), digest(2), digest(3)]


def two_tools_one_set_of_pictures() -> list[Envelope]:
    """A round in which two tools returned the same three pictures: one request carries six
    image blocks, three pictures twice."""
    def meta(d: str) -> ImageMeta:
        return ImageMeta(digest=d, source_format="JPEG", media_type="image/jpeg",
                         path="pass_through", width=64, height=48, size=1000, source_size=1000)

    events = [TurnStarted(agent="cam", wire="anthropic", model="m", endpoint_host="h",
                          language="en", request="Look twice.", max_rounds=8, image_cap=20,
                          placement="native", summary_instruction="Sum up."),
              RoundStarted(round=1),
              RequestSent(round=1, wire="anthropic", model="m", endpoint_host="h",
                          message_count=1),
              ResponseReceived(round=1, tool_calls=[ToolCallRecord(call_id=c, name=t)
                                                    for c, t in (("c1", "a__shot"),
                                                                 ("c2", "b__shot"))],
                               usage=Usage(), stop_reason="tool_use")]
    for call, tool in (("c1", "a__shot"), ("c2", "b__shot")):
        events += [ToolCalled(round=1, call_id=call, server=tool[0], name=tool),
                   ImagesNormalized(round=1, call_id=call, images=[meta(d) for d in PICTURES]),
                   ToolResultRecorded(round=1, call_id=call, name=tool, ok=True, body="shots",
                                      image_digests=PICTURES)]
    events += [RoundStarted(round=2),
               RequestSent(round=2, wire="anthropic", model="m", endpoint_host="h",
                           message_count=5, images=[
                               ImageDelivery(digest=d, call_id=c, placement="native")
                               for c in ("c1", "c2") for d in PICTURES]),
               ResponseReceived(round=2, text="Same.", usage=Usage(), stop_reason="end_turn"),
               TurnEnded(rounds=2, stop="answered", answer="Same.")]
    return Sequencer("twice", FixedClock("2026-12-05T00:00:00.000Z"), 0).seal(events)


def store(tmp_path: Path) -> Path:
    path = tmp_path / "s.db"
    with SqliteStore(path) as opened:
        opened.append(two_tools_one_set_of_pictures())
        import_stream(opened, REPLAYS / "p4-image-refusing.jsonl")
    return path


def invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert (result.exit_code, result.stderr) == (0, ""), result.output
    return result.stdout


def test_images_sent_are_the_image_blocks_the_requests_carried(tmp_path: Path) -> None:
    path = store(tmp_path)
    summaries = {s["turn_id"]: s for s in json.loads(invoke("turns", str(path), "--json"))}
    deliveries = json.loads(invoke("audit", str(path), "--json"))["deliveries"]
    assert summaries["twice"]["images_sent"] == 6 == len(
        [d for d in deliveries if d["turn_id"] == "twice"])
    assert summaries["twice"]["images_received"] == 6


def test_a_refused_and_stripped_turn_says_so_in_every_list(tmp_path: Path) -> None:
    path = store(tmp_path)
    summary = {s["turn_id"]: s for s in json.loads(invoke("turns", str(path), "--json"))}[
        "p4-image-refusing"]
    assert (summary["images_sent"], summary["images_received"], summary["refusals"],
            summary["stripped"], summary["stop"]) == (1, 0, 2, 1, "answered")
    [row] = [line for line in invoke("turns", str(path)).splitlines()
             if line.startswith("p4-image-refusing")]
    assert "answered  1 (refused 2×, 1 stripped)" in row
    with serving(path) as url:
        page = httpx.get(url).text
    [cell] = re.findall(r'<tr data-turn="p4-image-refusing">.*?<td class="n images([^"]*)"'
                        r'[^>]*>([^<]*)</td>', page, re.DOTALL)
    assert (cell[0], unescape(cell[1])) == (" problem", "1 (refused 2×, 1 stripped)")


def test_a_stop_and_a_refusal_have_one_name_in_the_log(tmp_path: Path) -> None:
    log = invoke("log", str(store(tmp_path)), "--turn", "p4-image-refusing").splitlines()
    assert [line.split(":")[0] for line in log] == [
        "tool", "llm refused", "tool image placement", "llm refused", "tool image fallback",
        "turn"]
    assert log[-1].endswith(" stop=answered")
    assert not any("retry" in line for line in log)  # nothing was retried
