/**
 * MCP: the tools of a Model Context Protocol server in a conversation. actorloop starts the small
 * MCP server of examples/support/mcp-server.ts (notes, a chart, a tool that unlocks another) as a
 * child process and talks MCP to it over stdio; the server and every call are real.
 *
 *   npx tsx examples/mcp.ts
 *
 * Shown: `mcpTools` with a prefix and `needsApproval`, an approved call, an image result (sent to
 * the model as an image part), the server's tool list changing mid-conversation (a new machine for the
 * next turn), and `close()`. Any MCP server works the same way:
 * `{ command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '.'] }`, or `{ url, headers }`.
 *
 * Offline a scripted model decides what to call; with OPENAI_API_KEY, ANTHROPIC_API_KEY or
 * OPENAI_BASE_URL set, a live one does (see examples/support/model.ts).
 */
import { fileURLToPath } from 'node:url';
import { type ConversationMachine, createConversationMachine, type Message } from 'actorloop';
import { type McpTool, mcpTools } from 'actorloop/mcp';
import { createActor, toPromise } from 'xstate';
import { logRun, printOutput } from './support/log.js';
import { chooseModel, printMode } from './support/model.js';

/** What the scripted model calls for each request of the user; then it reports the results. */
const plans: Record<string, Array<{ name: string; args: Record<string, unknown> }>> = {
  'Save my shopping list (eggs, flour, milk) and chart my notes.': [
    { name: 'notes_add_note', args: { title: 'shopping', text: 'eggs, flour, milk' } },
    { name: 'notes_chart_notes', args: {} },
  ],
  'Delete the shopping list.': [{ name: 'notes_delete_note', args: { title: 'shopping' } }],
  'Note that the meeting is on Tuesday at 10:00, then unlock export.': [
    { name: 'notes_add_note', args: { title: 'meeting', text: 'Tuesday 10:00' } },
    { name: 'notes_enable_export', args: {} },
  ],
  'Export my notes.': [{ name: 'notes_export_notes', args: {} }],
};
const planned = new Set<string>();

const model = await chooseModel(({ userText, toolResults }) => {
  const plan = plans[userText] ?? [];
  if (!planned.has(userText)) {
    planned.add(userText);
    return { toolCalls: plan };
  }
  return { text: `Done: ${(plan.length > 0 ? toolResults.slice(-plan.length) : []).join(' | ')}` };
});
printMode('mcp', model);

const notes = await mcpTools(
  { command: process.execPath, args: ['--import', 'tsx', 'support/mcp-server.ts'], cwd: fileURLToPath(new URL('.', import.meta.url)) },
  { prefix: 'notes_', needsApproval: ['delete_note'], onError: (error) => console.log(`[mcp] ${error.message}`) },
);
const names = (tools: ReadonlyArray<McpTool>) => tools.map((tool) => tool.name).join(', ');
console.log(`[mcp] tools: ${names(notes.tools)}`);

// A machine's tools are fixed when it is created; when the server's list changes, later turns get a new one.
const createMachine = (tools: ReadonlyArray<McpTool>): ConversationMachine =>
  createConversationMachine({
    provider: model.provider,
    tools,
    system: 'You keep the user’s notes with the notes_ tools. Call each tool once, then say in one sentence what happened.',
    // One call at a time, so the chart sees the note saved just before it.
    maxConcurrentTools: 1,
  });
let machine = createMachine(notes.tools);
const changed = new Promise<void>((resolve) =>
  notes.onToolsChanged((tools) => {
    console.log(`[mcp] the server's tool list changed: ${names(tools)}`);
    machine = createMachine(tools);
    resolve();
  }),
);

let history: Message[] = [];
async function turn(content: string): Promise<void> {
  console.log(`\n[user] ${content}`);
  const actor = createActor(machine, { input: { messages: history } });
  logRun(actor);
  actor.on('tool.approval.requested', (request) => {
    console.log(`[tool.approve] ${request.toolCallId}`);
    actor.send({ type: 'tool.approve', toolCallId: request.toolCallId });
  });
  actor.start();
  actor.send({ type: 'user.message', content });
  const output = await toPromise(actor);
  printOutput(output);
  history = output.messages;
}

try {
  for (const [index, content] of Object.keys(plans).entries()) {
    // The list refreshes in the background after the server's notification; a person's next
    // message comes later than that, this script waits for it (briefly: a live model may not unlock).
    if (index === 3) await Promise.race([changed, new Promise((resolve) => setTimeout(resolve, 5_000))]);
    await turn(content);
  }
} finally {
  await notes.close();
  console.log('\n[mcp] closed: the server process has ended.');
}
