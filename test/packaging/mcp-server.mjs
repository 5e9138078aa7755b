// A small MCP server written with the SDK's own classes, started over stdio by mcp-check.ts.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'packaging-check', version: '1.0.0' });
server.registerTool('add', { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() } }, ({ a, b }) => ({
  content: [{ type: 'text', text: String(a + b) }],
}));
await server.connect(new StdioServerTransport());
