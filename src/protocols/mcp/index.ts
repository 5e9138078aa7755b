/**
 * `actorloop/mcp`: the Model Context Protocol both ways. `mcpTools` gives a conversation the tools
 * of MCP servers (src/tools/mcp); `serveMcp` serves a conversation or workflow as an MCP server.
 *
 * @packageDocumentation
 */
export * from '../../tools/mcp/index.js';
export { serveMcp, type ServedMcp, type McpListenOptions, type McpStdioSession } from './serve-mcp.js';
export type { ServeMcpOptions, McpSessionInfo, McpServedTool, McpObjectSchema, McpAuthorize } from './serve-mcp-options.js';
export type { McpResumability } from './event-store.js';
