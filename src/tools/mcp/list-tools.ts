import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { requestFailure } from './call-failure.js';
import { McpToolError } from './mcp-tool-error.js';
import type { McpToolDefinition } from './mcp-types.js';

/** More pages than any real server sends: a server that keeps sending new cursors is stopped here. */
const maxPages = 1_000;

/** Every tool the server offers, following `nextCursor` from page to page; `label` names the server in errors. */
export async function listAllTools(client: Client, timeoutMs: number, label: string): Promise<McpToolDefinition[]> {
  const tools: McpToolDefinition[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  for (let page = 1; ; page++) {
    let result: Awaited<ReturnType<Client['listTools']>>;
    try {
      result = await client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
    } catch (error) {
      const method = page === 1 ? 'tools/list' : `tools/list (page ${page})`;
      throw new McpToolError(`could not list the tools of the ${label}: ${requestFailure(error, method, timeoutMs)}`, {
        kind: 'server',
        cause: error,
      });
    }
    tools.push(...(result.tools as McpToolDefinition[]));
    cursor = result.nextCursor || undefined;
    if (cursor === undefined) return tools;
    if (seen.has(cursor)) {
      throw new McpToolError(`the server's tools/list sent the cursor ${JSON.stringify(cursor)} twice; its list never ends`, {
        kind: 'server',
      });
    }
    if (page >= maxPages) throw new McpToolError(`the server's tools/list goes on past ${maxPages} pages`, { kind: 'server' });
    seen.add(cursor);
  }
}
