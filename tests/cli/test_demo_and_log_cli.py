"""`fuseforks demo` prints the demo scenarios' table, and `fuseforks log` reads it back from the
store."""

from __future__ import annotations

import shlex

import click
from click.testing import CliRunner

from fuseforks.cli import main
from fuseforks.demo.scenarios import DEMO_SCENARIOS
from fuseforks.wires import get_wire

TOOL = "tool: agent=demo round=1 name=nik__live_view_image ok=true body_chars=52 images=1"
# What each provider calls the refusal of images inside a tool result.
LADDER_CODE = {"gemini": "INVALID_ARGUMENT", "bedrock-converse": "ValidationException"}


def expected_lines() -> list[list[str]]:
    turns = []
    for seq, s in enumerate(DEMO_SCENARIOS, 1):  # one camera frame each, numbered in its body
        lines = [TOOL.replace("body_chars=52", f"body_chars={51 + len(str(seq))}")]
        if s.expect == "stripped":
            refused = ("llm refused: agent=demo round=2 status=400 "
                       "class=client_error code=invalid_request")
            lines += [
                refused,
                f"tool image placement: agent=demo round=2 model={s.model} placement=alternate",
                refused,
                f"tool image fallback: agent=demo model={s.model} removed=1 outcome=ok",
            ]
        elif s.expect == "ladder":
            lines += [
                "llm refused: agent=demo round=2 status=400 class=client_error "
                f"code={LADDER_CODE[s.wire]}",
                f"tool image placement: agent=demo round=2 model={s.model} placement=alternate",
            ]
        lines.append(f"turn: agent=demo backend={s.wire} model={s.model} rounds=2 stop=answered")
        turns.append(lines)
    return turns


def test_demo_reproduces_the_p4_table_and_the_log_reads_back(tmp_path) -> None:
    db, log_file = tmp_path / "fuseforks.db", tmp_path / "fuseforks.log"
    runner = CliRunner()
    demo = runner.invoke(main, ["demo", "--db", str(db), "--log", str(log_file)])
    assert demo.exit_code == 0, demo.output
    flat = [line for turn in expected_lines() for line in turn]
    assert log_file.read_text().splitlines() == flat
    assert not any(line.startswith(("tool image dropped:", "attachment fallback:")) for line in flat)
    rows = [line for line in demo.output.splitlines() if line.split(" ")[0] in
            {s.name for s in DEMO_SCENARIOS}]
    assert len(rows) == len(DEMO_SCENARIOS)
    for row, scenario in zip(rows, DEMO_SCENARIOS, strict=True):
        columns = row.split()
        assert columns[1] == scenario.wire
        placement = {"stripped": "-", "ladder": "alternate"}.get(
            scenario.expect, get_wire(scenario.wire).placement)
        images = {"stripped": "1 (refused 2×, 1 stripped)", "ladder": "1 (refused 1×)"}.get(
            scenario.expect, "1")  # as `turns` and the console show the turn's images
        assert columns[3] == placement
        assert f" {placement:<10} {images:<26}  " in row
        if scenario.expect == "stripped":
            assert row.endswith("I received the tool result; it has no image.")
        else:
            truth = demo.output.split(f"[{scenario.name}] turn ")[1].split("camera frame: ")[1]
            truth = truth.splitlines()[0]
            assert row.endswith(f"I see 1 image. image 1: {truth}."), (row, truth)
    assert demo.output.count("(1 image: JPEG 5 KB)") == len(DEMO_SCENARIOS)
    log = runner.invoke(main, ["log", str(db)])
    assert log.exit_code == 0, log.output
    assert log.output.splitlines() == flat


def test_the_demo_ends_with_what_to_try_next_and_each_of_it_works(tmp_path) -> None:
    db = tmp_path / "my demo.db"
    runner = CliRunner()
    demo = runner.invoke(main, ["demo", "--db", str(db), "--log", str(tmp_path / "demo.log")])
    assert demo.exit_code == 0, demo.output
    quoted = shlex.quote(str(db))
    assert demo.stdout.splitlines()[-5:] == [
        "Next, look at what was recorded:",
        f"  fuseforks turns {quoted}            # one line per turn",
        f"  fuseforks audit {quoted}            # which image went where, and what became of it",
        f"  fuseforks replay {quoted} --verify  # every turn replayed and checked",
        f"  fuseforks console {quoted}          # the same in a browser, at "
        "http://127.0.0.1:8470/"]
    for line in demo.stdout.splitlines()[-4:-1]:
        words = shlex.split(line.split("  #")[0])
        assert words[0] == "fuseforks"
        tried = runner.invoke(main, words[1:])
        assert tried.exit_code == 0, (words, tried.output)
        assert len(tried.stdout.splitlines()) >= len(DEMO_SCENARIOS)
    console = main.get_command(click.Context(main), "console")
    assert console is not None
    (port,) = [p.default for p in console.params if p.name == "port"]
    assert port == 8470


def test_log_on_a_file_that_is_not_a_store_is_a_clear_error(tmp_path) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"turn_id": "t"\n')
    result = CliRunner().invoke(main, ["log", str(junk)])
    assert result.exit_code == 1
    assert f"Error: {junk}:1: unreadable line" in result.output


def test_log_of_one_conversation_prints_its_turns_in_order(tmp_path) -> None:
    from fuseforks.events.sequencer import FixedClock, Sequencer
    from fuseforks.events.types import TurnEnded, TurnStarted
    from fuseforks.stores.sqlite import SqliteStore

    def turn(turn_id: str, conversation: str, agent: str) -> list:
        start = TurnStarted(max_rounds=8, image_cap=20, placement="native",
                            summary_instruction="S", agent=agent, wire="gemini", model="g",
                            endpoint_host="h", language="en", request="r",
                            conversation_id=conversation)
        return Sequencer(turn_id, FixedClock()).seal([start, TurnEnded(rounds=1, stop="answered")])

    db = tmp_path / "c.db"
    with SqliteStore(db) as store:
        store.append(turn("t1", "conv-a", "first"))
        store.append(turn("t2", "conv-b", "other"))
        store.append(turn("t3", "conv-a", "second"))
    runner = CliRunner()
    shown = runner.invoke(main, ["log", str(db), "--conversation", "conv-a"])
    assert (shown.exit_code, shown.output.splitlines()) == (0, [
        "turn: agent=first backend=gemini model=g rounds=1 stop=answered",
        "turn: agent=second backend=gemini model=g rounds=1 stop=answered"])
    missing = runner.invoke(main, ["log", str(db), "--conversation", "conv-z"])
    assert (missing.exit_code, missing.output) == (
        1, f"Error: {db}: no turn of conversation 'conv-z'\n")
