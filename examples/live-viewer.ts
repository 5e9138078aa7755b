/**
 * The live viewer, offline: open the printed address and watch conversations move through the
 * statechart. The model is a SCRIPTED stand-in that takes its time (so there is something to see):
 * each conversation asks for a tool call that needs approval (approved a moment later), the first
 * request of every third one fails once and is retried, then the answer streams in.
 *
 *   npx tsx examples/live-viewer.ts            # a new conversation every few seconds, until Ctrl-C
 *   npx tsx examples/live-viewer.ts --once     # one conversation, then exit (what the test runs)
 *   PORT=4400 npx tsx examples/live-viewer.ts  # a fixed port
 */
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { createConversationMachine, defineTool, handlerProvider } from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { startLiveViewer } from '../src/observe/inspect/index.js';

const once = process.argv.includes('--once');
const pace = once ? 5 : 400;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): OpenAIChatCompletionChunk => ({
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});

const multiply = defineTool({
  name: 'multiply',
  description: 'Multiply two numbers',
  parameters: z.object({ a: z.number(), b: z.number() }),
  needsApproval: true,
  execute: async ({ a, b }) => {
    await sleep(pace * 3);
    return a * b;
  },
});

/** SCRIPTED: asks for `multiply` first, answers with the result once it has it. */
function scriptedModel(a: number, b: number, failFirst: boolean) {
  let requests = 0;
  return handlerProvider(async function* ({ messages }) {
    requests += 1;
    await sleep(pace * 2);
    if (failFirst && requests === 1) throw Object.assign(new Error('service busy'), { status: 503 });
    const result = messages.find((message) => message.role === 'tool');
    if (!result) {
      for (const word of ['Let ', 'me ', 'multiply ', 'that.']) {
        yield chunk({ content: word });
        await sleep(pace / 2);
      }
      yield chunk(
        { tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'multiply', arguments: JSON.stringify({ a, b }) } }] },
        'tool_calls',
      );
      return;
    }
    for (const word of `${a} × ${b} = ${String(result.content)}.`.split(' ')) {
      yield chunk({ content: `${word} ` });
      await sleep(pace / 2);
    }
    yield chunk({}, 'stop');
  });
}

const viewer = await startLiveViewer({ port: Number(process.env.PORT ?? 0), title: 'actorloop live — example' });
console.log(`live viewer: ${viewer.url}`);

async function converse(index: number) {
  const a = 3 + index;
  const b = 7;
  const machine = createConversationMachine({
    provider: scriptedModel(a, b, index % 3 === 0),
    tools: [multiply],
    retry: { maxRetries: 2, initialDelayMs: pace * 2, maxDelayMs: pace * 4 },
  });
  const actor = createActor(machine, { input: { messages: [] } });
  viewer.watch(actor, { id: `c-${index}`, label: `${a} × ${b}` });
  actor.on('tool.approval.requested', async ({ toolCallId }) => {
    await sleep(pace * 4);
    actor.send({ type: 'tool.approve', toolCallId });
  });
  actor.start();
  actor.send({ type: 'user.message', content: `What is ${a} × ${b}?` });
  return toPromise(actor);
}

if (once) {
  const output = await converse(0);
  const runs = (await (await fetch(`${viewer.url}api/conversations`)).json()) as Array<{ id: string }>;
  const views = await Promise.all(
    runs.map(
      async ({ id }) => (await (await fetch(`${viewer.url}api/conversations/${encodeURIComponent(id)}`)).json()) as { value: unknown },
    ),
  );
  const stateOf = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));
  console.log(`[output] status=${output.status} text=${output.text.trim()}`);
  console.log(`[viewer] ${runs.map((run, index) => `${run.id}:${stateOf(views[index]?.value)}`).join(' ')}`);
  await viewer.close();
} else {
  for (let index = 0; ; index++) {
    void converse(index);
    await sleep(pace * 15);
  }
}
