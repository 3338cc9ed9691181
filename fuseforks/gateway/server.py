"""The gateway as an MCP server (the `mcp` SDK's low-level `Server`): its handlers.

Tools are the upstream servers' tools under the names the user chose. A client's request whose
answer carries content — a tool call, a resource read, a prompt — is recorded in the client's
session and answered with the server's answer as the plan made for this client renders it
(`fuseforks.mcp.reply`): the gateway itself decides nothing about MCP content. Listings of
resources, resource templates and prompts pass through (`fuseforks.mcp.catalog`).
Progress an upstream server reports for a call goes to the client that made it; a client that
cancels a call cancels it upstream too (the SDK sends `notifications/cancelled` for the abandoned
request). The server announces `listChanged` for all three lists, on every transport: the book
tells clients.
"""

from __future__ import annotations

import uuid
from typing import Any

from mcp.server import NotificationOptions, Server
from mcp.server.context import ServerRequestContext
from mcp.server.models import InitializationOptions
from mcp.server.subscriptions import ListenHandler
from mcp.shared.exceptions import MCPError
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    ListResourceTemplatesResult,
    ListToolsResult,
    PaginatedRequestParams,
    ReadResourceRequestParams,
    ReadResourceResult,
    TextContent,
)
from mcp_types import INTERNAL_ERROR

from fuseforks import __version__
from fuseforks.core.errors import FuseforksError
from fuseforks.core.names import McpMethod
from fuseforks.engine.session import ProgressListener
from fuseforks.gateway.sessions import SessionBook
from fuseforks.mcp.reply import ClientOutput, render_reply
from fuseforks.ports.tools import fault_output

Context = ServerRequestContext[Any, Any]
NAME = "fuseforks-gateway"


def gateway_server(book: SessionBook) -> Server[Any]:
    catalog = book.catalog

    async def answer(ctx: Context, method: McpMethod, name: str, arguments: dict[str, Any],
                     on_progress: ProgressListener | None = None) -> Any:
        """A client's request, recorded in its session and answered as the plan of the server's
        answer was rendered for this client (`render_reply`), or the fault."""
        live = await book.session_for(ctx)
        call_id = f"call-{uuid.uuid4().hex[:16]}"
        try:
            result = await live.session.call(call_id, name, arguments, on_progress, method)
        except FuseforksError as error:  # not recorded, so not sent on: the client hears why
            reason = f"the gateway could not record the call: {error}"
            if method != "tools/call":
                raise MCPError(code=INTERNAL_ERROR, message=reason) from None
            text = fault_output(reason, book.settings.language).text
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        output = result.output
        if isinstance(output, ClientOutput) and output.plan is not None:
            return render_reply(output.plan, result.keep, result.notes)
        if method == "tools/call":  # a tool that produced no result: its fault, as a tool error
            return CallToolResult(content=[TextContent(type="text", text=output.text)],
                                  is_error=True)
        refusal = output.refusal if isinstance(output, ClientOutput) else None
        if isinstance(refusal, MCPError):
            raise refusal
        raise MCPError(code=INTERNAL_ERROR, message=output.fault or output.text)

    async def list_tools(ctx: Context, params: PaginatedRequestParams | None) -> ListToolsResult:
        live = await book.session_for(ctx)
        await book.hub.take_up_logins()  # a server a person logged in to since: its tools
        names = live.tools.names()
        # a client that reads structuredContent alone is sent results without it (with images),
        # so it is not told of an output schema its SDK would then hold the result to
        schema = {"output_schema": None} if live.tools.structured_first else {}
        return ListToolsResult(tools=[
            tool.model_copy(update={"name": names.exposed(prefixed), **schema})
            for prefixed, tool in book.hub.listed_tools()])

    async def call_tool(ctx: Context, params: CallToolRequestParams) -> CallToolResult:
        result: CallToolResult = await answer(ctx, "tools/call", params.name,
                                              params.arguments or {},
                                              ctx.session.report_progress)
        return result

    async def list_resources(ctx: Context,
                             params: PaginatedRequestParams | None) -> ListResourcesResult:
        await book.session_for(ctx)
        return ListResourcesResult(resources=await catalog.list_resources())

    async def list_templates(ctx: Context, params: PaginatedRequestParams | None,
                             ) -> ListResourceTemplatesResult:
        await book.session_for(ctx)
        return ListResourceTemplatesResult(
            resource_templates=await catalog.list_resource_templates())

    async def read_resource(ctx: Context,
                            params: ReadResourceRequestParams) -> ReadResourceResult:
        result: ReadResourceResult = await answer(ctx, "resources/read", str(params.uri), {})
        return result

    async def list_prompts(ctx: Context,
                           params: PaginatedRequestParams | None) -> ListPromptsResult:
        live = await book.session_for(ctx)
        return ListPromptsResult(prompts=[p.prompt for p in await live.tools.prompts()])

    async def get_prompt(ctx: Context, params: GetPromptRequestParams) -> GetPromptResult:
        result: GetPromptResult = await answer(ctx, "prompts/get", params.name,
                                               dict(params.arguments or {}))
        return result

    return GatewayServer(
        NAME, version=__version__,
        on_list_tools=list_tools, on_call_tool=call_tool,
        on_list_resources=list_resources, on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts, on_get_prompt=get_prompt,
        on_subscriptions_listen=ListenHandler(book.listeners),
    )


_CHANGES = NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)


class GatewayServer(Server[Any]):
    """The SDK's server whose capabilities say that the lists change unless told otherwise.

    `Server.run` (stdio) is handed initialization options, but the streamable HTTP manager asks
    the server for its own without any, which said `listChanged: false` to an HTTP client the
    gateway then sent list-changed notifications."""

    def create_initialization_options(
            self, notification_options: NotificationOptions | None = None,
            experimental_capabilities: dict[str, dict[str, Any]] | None = None,
            extensions: dict[str, dict[str, Any]] | None = None) -> InitializationOptions:
        return super().create_initialization_options(notification_options or _CHANGES,
                                                     experimental_capabilities, extensions)
