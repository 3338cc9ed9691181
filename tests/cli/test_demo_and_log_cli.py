from __future__ import annotations

from click.testing import CliRunner

from fuseforks.cli import main


def test_demo_records_a_turn_and_log_reads_it_back(tmp_path) -> None:
    db = tmp_path / "fuseforks.db"
    runner = CliRunner()
    demo = runner.invoke(main, ["demo", "--db", str(db)])
    assert demo.exit_code == 0, demo.output
    expected = [
        "tool: agent=agent_9 round=1 name=nik__live_view_image ok=true body_chars=57 images=1",
        "turn: agent=agent_9 backend=anthropic model=claude-sonnet-5-5 rounds=2 stop=-",
    ]
    assert demo.output.splitlines()[1:] == expected
    log = runner.invoke(main, ["log", str(db)])
    assert log.exit_code == 0, log.output
    assert log.output.splitlines() == expected


def test_log_on_a_file_that_is_not_a_store_is_a_clear_error(tmp_path) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_text('{"turn_id": "t"\n')
    result = CliRunner().invoke(main, ["log", str(junk)])
    assert result.exit_code == 1
    assert f"Error: {junk}:1: unreadable line" in result.output
