"""A local stand-in for the seven providers: strict, scripted, and able to see images."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fuseforks.simulator.brain import (
    DEFAULT_SCRIPT,
    FUNCTION_RESPONSE_PARTS_REFUSING_PREFIXES,
    IMAGE_IGNORING_MODELS,
    IMAGE_REFUSING_MODELS,
    MAX_TOKENS_REFUSING_PREFIXES,
    TOOL_OUTPUT_IMAGE_REFUSING_MODELS,
    Script,
)
from fuseforks.simulator.models import KNOWN_MODELS, PROFILE_MODELS
from fuseforks.simulator.server import WIRE_PREFIXES, Fault, Received, Simulator

__all__ = [
    "FUNCTION_RESPONSE_PARTS_REFUSING_PREFIXES", "IMAGE_IGNORING_MODELS", "IMAGE_REFUSING_MODELS",
    "KNOWN_MODELS", "MAX_TOKENS_REFUSING_PREFIXES", "PROFILE_MODELS",
    "TOOL_OUTPUT_IMAGE_REFUSING_MODELS", "WIRE_PREFIXES", "Fault", "Received", "Script",
    "Simulator", "run_simulator",
]


@asynccontextmanager
async def run_simulator(
    *, script: Script = DEFAULT_SCRIPT, record_dir: Path | str | None = None, port: int = 0,
    require_key: bool = True, any_model: bool = False,
) -> AsyncIterator[Simulator]:
    """Start a simulator on 127.0.0.1 (a free port by default) for the duration of the block;
    `any_model` answers every model name, not only those each wire knows."""
    simulator = Simulator(script=script, record_dir=record_dir, require_key=require_key,
                          any_model=any_model)
    await simulator.start(port=port)
    try:
        yield simulator
    finally:
        await simulator.stop()
