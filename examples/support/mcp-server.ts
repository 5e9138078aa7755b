/**
 * A small MCP server for examples/mcp.ts, written with the MCP SDK's own server class: notes kept
 * in memory, a chart as an image, and a tool that unlocks one more tool (the server then tells
 * its clients `notifications/tools/list_changed`). It speaks MCP over stdin/stdout:
 *
 *   node --import tsx examples/support/mcp-server.ts
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const notes = new Map<string, string>();
const count = () => `${notes.size} ${notes.size === 1 ? 'note' : 'notes'}`;
const server = new McpServer({ name: 'notes', version: '1.0.0' });

server.registerTool(
  'add_note',
  { description: 'Save a note under a title', inputSchema: { title: z.string().min(1), text: z.string() } },
  ({ title, text }) => {
    notes.set(title, text);
    return { content: [{ type: 'text', text: `Saved "${title}" (${count()}).` }] };
  },
);

server.registerTool(
  'delete_note',
  { description: 'Delete a note', inputSchema: { title: z.string() }, annotations: { destructiveHint: true } },
  ({ title }) => {
    if (!notes.delete(title)) return { content: [{ type: 'text', text: `There is no note "${title}".` }], isError: true };
    return { content: [{ type: 'text', text: `Deleted "${title}".` }] };
  },
);

server.registerTool('chart_notes', { description: 'Draw a chart of the note lengths (PNG)' }, () => ({
  content: [
    { type: 'text', text: `Chart of ${count()}:` },
    // A 1×1 PNG stands in for a real chart.
    {
      type: 'image',
      mimeType: 'image/png',
      data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
    },
  ],
}));

server.registerTool('enable_export', { description: 'Unlock the export_notes tool' }, () => {
  // Registering a tool on a connected server sends notifications/tools/list_changed.
  server.registerTool('export_notes', { description: 'All notes as Markdown' }, () => ({
    content: [{ type: 'text', text: [...notes].map(([title, text]) => `# ${title}\n${text}`).join('\n\n') }],
  }));
  return { content: [{ type: 'text', text: 'export_notes is now available.' }] };
});

await server.connect(new StdioServerTransport());
