/**
 * actorloop/mcp — the tools of Model Context Protocol servers as actorloop tools. Needs the
 * optional peer `@modelcontextprotocol/sdk`.
 *
 * @example
 * ```ts
 * import { mcpTools } from 'actorloop/mcp';
 * const files = await mcpTools({ command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] }, { prefix: 'fs_' });
 * ```
 * @packageDocumentation
 */
export { mcpTools, type McpTool, type McpToolSet } from './mcp-tools.js';
export type { McpToolsOptions } from './options.js';
export type { McpSource, McpStdioSource, McpHttpSource } from './source.js';
export type { McpToolDefinition, McpCallToolResult, McpContent } from './mcp-types.js';
export { mcpResultContent, mcpResultText } from './result-text.js';
export { McpToolError, type McpToolErrorKind } from './mcp-tool-error.js';
