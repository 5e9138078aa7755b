/**
 * Anthropic Messages through the official `@anthropic-ai/sdk`, with extended thinking and a real
 * tool (days between two dates). Thinking blocks and their signatures stay in the history
 * verbatim, as Anthropic requires within a tool loop.
 *
 *   ANTHROPIC_API_KEY=sk-ant-… npx tsx examples/anthropic.ts   live (ANTHROPIC_MODEL, default claude-sonnet-4-5)
 *   npx tsx examples/anthropic.ts                             offline: a scripted model on a local replay server
 *
 * Offline, the same `anthropicProvider` talks to a replay server on 127.0.0.1 that answers in the
 * Messages wire format (SSE events, a thinking block with a signature), so the real SDK runs.
 */
import { anthropicProvider, createConversationMachine, defineTool } from 'actorloop';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { logRun, printOutput } from './support/log.js';
import { printMode } from './support/model.js';
import { startReplayServer } from './support/replay-server.js';

const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a date as YYYY-MM-DD');

const daysBetween = defineTool({
  name: 'days_between',
  description: 'Whole days from one date to another (negative when `to` is earlier)',
  parameters: z.object({ from: isoDate, to: isoDate }),
  execute: ({ from, to }) => ({ from, to, days: Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000) }),
});

const question = 'How many days passed between the Apollo 11 landing (1969-07-20) and the first ISS module launch (1998-11-20)?';

const live = Boolean(process.env.ANTHROPIC_API_KEY);
const replay = live
  ? undefined
  : await startReplayServer(({ toolResults }) => {
      if (toolResults.length === 0) {
        return {
          reasoning: 'Two dates; the tool counts the days exactly.',
          text: 'Let me count.',
          toolCalls: [{ name: 'days_between', args: { from: '1969-07-20', to: '1998-11-20' } }],
        };
      }
      const { days } = JSON.parse(toolResults[0] ?? '{}') as { days?: number };
      return { text: `${days} days passed between the two.` };
    });

const model = process.env.ANTHROPIC_MODEL ?? 'claude-sonnet-4-5';
printMode('anthropic', {
  live,
  label: replay ? `a SCRIPTED model on the local replay server ${replay.url} (set ANTHROPIC_API_KEY to go live)` : `Anthropic ${model}`,
});

const machine = createConversationMachine({
  provider: anthropicProvider({
    model: replay ? 'scripted-model' : model,
    maxTokens: 2048,
    thinking: { type: 'enabled', budget_tokens: 1024 },
    // Live: the key comes from ANTHROPIC_API_KEY (read by the SDK). Offline: the replay server.
    ...(replay ? { baseURL: replay.anthropicBaseURL, apiKey: 'offline' } : {}),
  }),
  tools: [daysBetween],
  system: 'You are terse. Use the tool for date arithmetic.',
});

const actor = createActor(machine, { input: { messages: [] } });
// Thinking streams first, on its own line; registered before logRun so the line ends before the answer starts.
let thinkingLine = false;
actor.on('reasoning.delta', (event) => {
  if (!thinkingLine) process.stdout.write('[thinking] ');
  thinkingLine = true;
  process.stdout.write(event.delta);
});
actor.on('text.delta', () => {
  if (thinkingLine) process.stdout.write('\n');
  thinkingLine = false;
});
logRun(actor);
actor.start();
console.log(`[user] ${question}`);
actor.send({ type: 'user.message', content: question });
const output = await toPromise(actor);
printOutput(output);

// The thinking the model did before its tool call is in the history, signature and all, ready for the next turn.
const thinkingParts = output.messages
  .flatMap((message) => (message.role === 'assistant' ? message.content : []))
  .filter((part) => part.type === 'reasoning');
console.log(`[history] ${thinkingParts.length} thinking block(s), signed: ${thinkingParts.every((part) => Boolean(part.signature))}`);
await replay?.close();
