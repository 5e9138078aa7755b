/**
 * The tools of an MCP server in a conversation, offline. actorloop starts the small MCP server of
 * examples/support/mcp-server.ts as a child process and talks MCP to it over stdio; the "model" is
 * a SCRIPTED stand-in (a deterministic handlerProvider). The server, the MCP connection, the
 * engine and the tool calls are real.
 *
 *   node --import tsx examples/mcp.ts
 *
 * Swap the source for any MCP server (`{ command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] }`,
 * or `{ url: 'https://…/mcp', headers }`) and `scriptedModel` for `openaiProvider({ model: 'gpt-4o-mini' })`.
 */
import { fileURLToPath } from 'node:url';
import { createActor, toPromise } from 'xstate';
import {
  type ConversationMachine,
  createConversationMachine,
  handlerProvider,
  type HandlerRequest,
  type Message,
  type OpenAIChatCompletionChunk,
} from '../src/index.js';
import { type McpTool, mcpTools } from '../src/tools/mcp/index.js';

const examples = fileURLToPath(new URL('.', import.meta.url));

const notes = await mcpTools(
  { command: process.execPath, args: ['--import', 'tsx', 'support/mcp-server.ts'], cwd: examples },
  {
    prefix: 'notes_',
    needsApproval: ['delete_note'],
    onError: (error) => console.error(`[mcp] ${error.message}`),
  },
);
const names = (tools: ReadonlyArray<McpTool>) => tools.map((tool) => tool.name).join(', ');
console.log('actorloop + MCP — the model is SCRIPTED (deterministic, offline); the MCP server and the engine are real.');
console.log(`[mcp] tools: ${names(notes.tools)}`);

/** The scripted model: what it "decides" for each user message, then an answer from the results. */
const plans: Record<string, Array<{ name: string; args: Record<string, unknown> }>> = {
  'Save my shopping list and chart my notes.': [
    { name: 'notes_add_note', args: { title: 'shopping', text: 'eggs, flour, milk' } },
    { name: 'notes_chart_notes', args: {} },
  ],
  'Delete the shopping list.': [{ name: 'notes_delete_note', args: { title: 'shopping' } }],
  'Add a note about the meeting, then unlock export.': [
    { name: 'notes_add_note', args: { title: 'meeting', text: 'Tuesday 10:00' } },
    { name: 'notes_enable_export', args: {} },
  ],
  'Export my notes.': [{ name: 'notes_export_notes', args: {} }],
};

async function* scriptedModel(request: HandlerRequest): AsyncGenerator<OpenAIChatCompletionChunk> {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): OpenAIChatCompletionChunk => ({
    object: 'chat.completion.chunk',
    model: 'scripted-mcp-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const last = request.messages.at(-1);
  if (last?.role === 'user') {
    for (const [index, call] of (plans[String(last.content)] ?? []).entries()) {
      const toolCall = {
        index,
        id: `call_${index}`,
        type: 'function',
        function: { name: call.name, arguments: JSON.stringify(call.args) },
      };
      yield chunk({ tool_calls: [toolCall] });
    }
    yield chunk({}, 'tool_calls');
    return;
  }
  // After the tool results: answer with the first line of each.
  const results = request.messages.slice(request.messages.findLastIndex((message) => message.role === 'assistant') + 1);
  yield chunk({ content: `Done: ${results.map((message) => String(message.content).split('\n')[0]).join(' ')}` });
  yield chunk({}, 'stop');
}

const createMachine = (tools: ReadonlyArray<McpTool>): ConversationMachine =>
  // One call at a time, so the chart sees the note saved just before it.
  createConversationMachine({ provider: handlerProvider(scriptedModel), tools, system: 'You keep notes.', maxConcurrentTools: 1 });

// A machine's tools are fixed when it is created: when the server's list changes, later runs get a new machine.
let machine = createMachine(notes.tools);
const changed = new Promise<void>((resolve) =>
  notes.onToolsChanged((tools) => {
    console.log(`[mcp] the server's tool list changed: ${names(tools)}`);
    machine = createMachine(tools);
    resolve();
  }),
);

let history: Message[] = [];
async function say(content: string): Promise<void> {
  console.log(`\n[user] ${content}`);
  const actor = createActor(machine, { input: { messages: history } });
  actor.on('tool.call', (event) => console.log(`[tool.call] ${event.name}(${JSON.stringify(event.args)})`));
  actor.on('tool.result', (event) => console.log(`[tool.result] ${event.name} → ${event.result}${event.isError ? ' (error)' : ''}`));
  actor.on('tool.approval.requested', (event) => {
    console.log(`[approval] ${event.name}(${JSON.stringify(event.args)}) — approved`);
    actor.send({ type: 'tool.approve', toolCallId: event.toolCallId });
  });
  actor.start();
  actor.send({ type: 'user.message', content });
  const output = await toPromise(actor);
  history = output.messages;
  console.log(`[answer] (${output.status}) ${output.text}`);
}

await say('Save my shopping list and chart my notes.');
await say('Delete the shopping list.');
await say('Add a note about the meeting, then unlock export.');
// The list refreshes in the background after the server's notification; a real user's next
// message comes later than that, this script waits for it.
await changed;
await say('Export my notes.');
await notes.close();
console.log('\n[mcp] closed: the server process has ended.');
