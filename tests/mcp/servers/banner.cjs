// An MCP server written as many are: the official TypeScript SDK, its settings read from a .env
// file with dotenv, and a "server starting" line with console.log. Both lines go to stdout, where
// only JSON-RPC belongs (dotenv 17 prints "◇ injected env (0) from .env // tip: ..."); the
// handshake follows at once. Run with NODE_PATH naming the node_modules that hold the packages.
const dotenv = require("dotenv");
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");

dotenv.config();
console.log("Banner MCP server starting on stdio");

const server = new McpServer({ name: "banner", version: "1.0.0" });
server.registerTool("ping", { description: "Answers pong." }, async () => ({
  content: [{ type: "text", text: "pong" }],
}));
server.connect(new StdioServerTransport());
