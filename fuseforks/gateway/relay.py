"""The upstream servers behind a gateway session: a call goes to the hub, its result through the
engine's image pipeline with the client's limits.

A result is rendered exactly as the engine renders it for a model (`render_tool_output_async`),
with the profile's `ImageLimits` and, when the client limits a whole result, a budget for its
images: the result's size without its images, and room for the notes, come off the client's
limit first. The output keeps the server's own result beside it (`RelayedOutput.result`), from
which the reply is built block by block (`fuseforks.gateway.reply`).
"""

from __future__ import annotations

from typing import Any

import msgspec

from fuseforks.core.media import ImageLimits, ResultLimits
from fuseforks.core.names import Language
from fuseforks.core.texts import texts
from fuseforks.engine.session import ProgressListener
from fuseforks.events.types import ToolSpecRecord
from fuseforks.gateway.names import Names, ToolNaming
from fuseforks.gateway.reply import frame_size, size_without_images
from fuseforks.mcp.hub import ToolHub, result_content
from fuseforks.mcp.render import render_tool_output_async
from fuseforks.ports.tools import ToolOutput, fault_output
from fuseforks.projections.session import NOTE_RESERVE_BYTES

_json = msgspec.json.Encoder()


class RelayedOutput(ToolOutput, frozen=True, kw_only=True):
    """A tool output with the server's own result it was rendered from."""

    result: Any = None
    """The server's `CallToolResult` (None when the server produced none: the output is a
    fault)."""


class RelayTools:
    """The hub's tools, as one client session sees them (names, limits, language)."""

    def __init__(self, hub: ToolHub, naming: ToolNaming, limits: ImageLimits,
                 result_limits: ResultLimits) -> None:
        self.hub = hub
        self.naming: ToolNaming = naming
        self.limits = limits
        self.result_limits = result_limits

    def names(self) -> Names:
        return Names(((d.name, d.tool) for d in self.hub.list_tools()), self.naming)

    def tool_specs(self) -> list[ToolSpecRecord]:
        names = self.names()
        return [ToolSpecRecord(name=names.exposed(d.name), description=d.description,
                               input_schema=_json.encode(d.input_schema).decode())
                for d in self.hub.list_tools()]

    def server_of(self, name: str) -> str:
        resolved = self.hub.resolve(self.names().prefixed(name))
        return resolved[0] if resolved is not None else ""

    async def call(self, name: str, arguments: dict[str, Any], language: Language,
                   on_progress: ProgressListener | None = None) -> ToolOutput:
        outcome = await self.hub.call_result(self.names().prefixed(name), arguments, on_progress)
        if isinstance(outcome, str):
            return fault_output(outcome, language)
        budget = self.result_limits.budget()
        image_budget = None
        if budget is not None:
            image_budget = budget - frame_size(outcome) - 2 * NOTE_RESERVE_BYTES
        output = await render_tool_output_async(result_content(outcome), outcome.is_error,
                                                language, self.limits, image_budget)
        t = texts(language)
        notes = [t.dropped_note(d.reason, d.index, self.limits.max_images)
                 for d in output.dropped]
        return RelayedOutput(
            text=output.text, images=output.images, dropped=output.dropped,
            is_error=output.is_error, image_offsets=output.image_offsets, result=outcome,
            bytes_without_images=size_without_images(outcome, output, notes))
