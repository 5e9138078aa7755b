/**
 * `actorloop/mcp`: the Model Context Protocol both ways. `mcpTools` gives a conversation the tools
 * of MCP servers (src/tools/mcp); `serveMcp` serves a conversation or workflow as an MCP server.
 *
 * @packageDocumentation
 */
export * from '../../tools/mcp/index.js';
