/**
 * OpenAI Chat Completions through the official `openai` SDK, with a real tool (the time in any
 * IANA time zone).
 *
 *   OPENAI_API_KEY=sk-… npx tsx examples/openai.ts     live (OPENAI_MODEL, default gpt-4o-mini)
 *   npx tsx examples/openai.ts                         offline: a scripted model on a local replay server
 *
 * Offline, the same `openaiProvider` talks to a replay server on 127.0.0.1 that answers in the
 * Chat Completions wire format, so the real SDK, HTTP and SSE parsing all run.
 */
import { createConversationMachine, defineTool, openaiProvider } from 'actorloop';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { logRun, printOutput } from './support/log.js';
import { printMode } from './support/model.js';
import { startReplayServer } from './support/replay-server.js';

const getTime = defineTool({
  name: 'get_time',
  description: 'The current local time in an IANA time zone, e.g. Europe/Lisbon',
  parameters: z.object({ timeZone: z.string().describe('IANA time zone name') }),
  // An unknown zone throws a RangeError: the model gets it as an error result and can correct itself.
  execute: ({ timeZone }) => new Intl.DateTimeFormat('en-GB', { timeZone, dateStyle: 'medium', timeStyle: 'short' }).format(new Date()),
});

const question = 'What time is it in Tokyo and in Lisbon right now?';

const live = Boolean(process.env.OPENAI_API_KEY);
const replay = live
  ? undefined
  : await startReplayServer(({ toolResults }) =>
      toolResults.length === 0
        ? {
            toolCalls: [
              { name: 'get_time', args: { timeZone: 'Asia/Tokyo' } },
              { name: 'get_time', args: { timeZone: 'Europe/Lisbon' } },
            ],
          }
        : { text: `In Tokyo it is ${toolResults[0]}; in Lisbon it is ${toolResults[1]}.` },
    );

const model = process.env.OPENAI_MODEL ?? 'gpt-4o-mini';
printMode('openai', {
  live,
  label: replay
    ? `a SCRIPTED model on the local replay server ${replay.url} (set OPENAI_API_KEY to go live)`
    : `OpenAI ${model}${process.env.OPENAI_BASE_URL ? ` at ${process.env.OPENAI_BASE_URL}` : ''}`,
});

const machine = createConversationMachine({
  // Live: the key comes from OPENAI_API_KEY (read by the SDK). Offline: the replay server.
  provider: replay
    ? openaiProvider({ model: 'scripted-model', baseURL: replay.openaiBaseURL, apiKey: 'offline' })
    : openaiProvider({ model }),
  tools: [getTime],
  system: 'You are terse. Use the tools for anything time-related.',
});

const actor = createActor(machine, { input: { messages: [] } });
logRun(actor);
actor.start();
console.log(`[user] ${question}`);
actor.send({ type: 'user.message', content: question });
const output = await toPromise(actor);
printOutput(output);
await replay?.close();
