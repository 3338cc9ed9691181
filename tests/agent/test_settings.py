"""How an agent and a worker run is one settings object each, with every default in one place:
the command line's options take their defaults from it, and bad values fail at once."""

from __future__ import annotations

from datetime import timedelta

import pytest

from fuseforks import AgentSettings, HistoryBudget, UnknownName
from fuseforks.cli.chat import chat
from fuseforks.cli.run import run
from fuseforks.cli.worker import worker
from fuseforks.wires.http import RetryPolicy
from fuseforks.workers import WorkerSettings


def test_the_defaults() -> None:
    assert AgentSettings() == AgentSettings(
        name="agent", language="en", system="", max_rounds=8, image_cap=20,
        history=HistoryBudget(max_exchanges=16, max_chars=32_000), retry=RetryPolicy(),
        mcp_start_timeout=30.0, reprobe_after=timedelta(days=7))
    assert WorkerSettings() == WorkerSettings(concurrency=4, grace=30.0, max_agents=32,
                                              agents=AgentSettings())


@pytest.mark.parametrize("command", [run, chat], ids=["run", "chat"])
def test_the_command_line_takes_its_defaults_from_the_settings(command) -> None:
    defaults = {p.name: p.default for p in command.params}
    settings = AgentSettings()
    assert (defaults["agent"], defaults["language"], defaults["system"], defaults["max_rounds"],
            defaults["image_cap"], defaults["mcp_start_timeout"]) == (
        settings.name, settings.language, settings.system, settings.max_rounds,
        settings.image_cap, settings.mcp_start_timeout)


def test_the_worker_command_takes_its_defaults_from_the_settings() -> None:
    defaults = {p.name: p.default for p in worker.params}
    settings = WorkerSettings()
    assert (defaults["concurrency"], defaults["grace"], defaults["max_agents"],
            defaults["max_rounds"], defaults["image_cap"]) == (
        settings.concurrency, settings.grace, settings.max_agents, settings.agents.max_rounds,
        settings.agents.image_cap)


def test_bad_settings_fail_when_they_are_made() -> None:
    with pytest.raises(ValueError, match="max_rounds must be at least 1, got 0"):
        AgentSettings(max_rounds=0)
    with pytest.raises(ValueError, match="image_cap must not be negative, got -1"):
        AgentSettings(image_cap=-1)
    with pytest.raises(UnknownName, match="unknown village language 'fr'"):
        AgentSettings(language="fr")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="concurrency must be at least 1, got 0"):
        WorkerSettings(concurrency=0)
