"""The gateway as an MCP server (the `mcp` SDK's low-level `Server`): its handlers.

Tools are the upstream servers' tools under the names the user chose; a call is recorded in the
client's session and answered with the reply built from the server's result (`reply`). Resources,
resource templates and prompts pass through (`fuseforks.mcp.catalog`), unchanged and unrecorded.
Progress an upstream server reports for a call goes to the client that made it; a client that
cancels a call cancels it upstream too (the SDK sends `notifications/cancelled` for the abandoned
request). The server announces `listChanged` for all three lists: the book tells clients.
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
from fuseforks.core.errors import FuseforksError, McpUnavailable
from fuseforks.gateway.names import Names
from fuseforks.gateway.relay import RelayedOutput
from fuseforks.gateway.reply import fault_reply, reply
from fuseforks.gateway.sessions import SessionBook
from fuseforks.mcp.catalog import Catalog
from fuseforks.ports.tools import fault_output

Context = ServerRequestContext[Any, Any]
NAME = "fuseforks-gateway"


def _unavailable(error: McpUnavailable) -> MCPError:
    return MCPError(code=INTERNAL_ERROR, message=str(error))


def gateway_server(book: SessionBook) -> Server[Any]:
    catalog = Catalog(book.hub)

    async def list_tools(ctx: Context, params: PaginatedRequestParams | None) -> ListToolsResult:
        live = await book.session_for(ctx)
        names = live.tools.names()
        return ListToolsResult(tools=[tool.model_copy(update={"name": names.exposed(prefixed)})
                                      for prefixed, tool in book.hub.listed_tools()])

    async def call_tool(ctx: Context, params: CallToolRequestParams) -> CallToolResult:
        live = await book.session_for(ctx)
        call_id = f"call-{uuid.uuid4().hex[:16]}"
        try:
            result = await live.session.call(call_id, params.name, params.arguments or {},
                                             ctx.session.report_progress)
        except FuseforksError as error:  # not recorded, so not sent on: the client hears why
            text = fault_output(f"the gateway could not record the call: {error}",
                                book.settings.language).text
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
        output = result.output
        if isinstance(output, RelayedOutput) and output.result is not None:
            return reply(output.result, output, result.keep, result.notes)
        return fault_reply(output)

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
        await book.session_for(ctx)
        try:
            return await catalog.read_resource(str(params.uri))
        except McpUnavailable as error:
            raise _unavailable(error) from None

    async def list_prompts(ctx: Context,
                           params: PaginatedRequestParams | None) -> ListPromptsResult:
        live = await book.session_for(ctx)
        prompts = await catalog.list_prompts()
        names = Names(((p.name, p.prompt.name) for p in prompts), live.tools.naming)
        return ListPromptsResult(prompts=[p.prompt.model_copy(update={"name": names.exposed(p.name)})
                                          for p in prompts])

    async def get_prompt(ctx: Context, params: GetPromptRequestParams) -> GetPromptResult:
        live = await book.session_for(ctx)
        prompts = await catalog.list_prompts()
        names = Names(((p.name, p.prompt.name) for p in prompts), live.tools.naming)
        try:
            return await catalog.get_prompt(names.prefixed(params.name), params.arguments)
        except McpUnavailable as error:
            raise _unavailable(error) from None

    return Server(
        NAME, version=__version__,
        on_list_tools=list_tools, on_call_tool=call_tool,
        on_list_resources=list_resources, on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts, on_get_prompt=get_prompt,
        on_subscriptions_listen=ListenHandler(book.listeners),
    )


def initialization_options(server: Server[Any]) -> InitializationOptions:
    return server.create_initialization_options(NotificationOptions(
        prompts_changed=True, resources_changed=True, tools_changed=True))
