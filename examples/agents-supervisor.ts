/**
 * Agents as tools: a writer that asks two researchers at once. Each researcher is a conversation
 * machine of its own, with its own tools and system prompt; `agentTool` makes it a tool of the
 * writer, and each call runs it as a child actor (`agent:<toolCallId>`) of the writer's tool round.
 * Both calls of the round run in parallel (under `maxConcurrentTools`); the writer sees every event
 * of its children as `agent.event` (printed with the path of the call), and its usage counts the
 * whole tree — `usageByAgent` splits it.
 *
 *   npx tsx examples/agents-supervisor.ts
 *
 * Offline each agent has a scripted model; with OPENAI_API_KEY, ANTHROPIC_API_KEY or
 * OPENAI_BASE_URL set, one live model serves all three (see examples/support/model.ts).
 */
import { agentTool, createConversationMachine, defineTool } from 'actorloop';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { logRun, printOutput } from './support/log.js';
import { chooseModel, liveModel, printMode } from './support/model.js';

/** Stands in for two knowledge bases. */
const facts: Record<string, Record<string, string>> = {
  history: { lighthouse: 'The Pharos of Alexandria, finished around 280 BC, stood for about 1,500 years.' },
  science: { lighthouse: 'A Fresnel lens, introduced in 1823, lets a lighthouse beam reach more than 30 km.' },
};

const lookupIn = (shelf: 'history' | 'science') =>
  defineTool({
    name: 'look_up',
    description: `Look a topic up in the ${shelf} archive`,
    parameters: z.object({ topic: z.string() }),
    execute: ({ topic }) => facts[shelf]?.[topic.toLowerCase()] ?? `nothing on ${topic}`,
  });

const live = await liveModel();
const researcher = async (shelf: 'history' | 'science') =>
  createConversationMachine({
    provider: (
      live ??
      (await chooseModel(({ toolResults }) =>
        toolResults.length === 0 ? { toolCalls: [{ name: 'look_up', args: { topic: 'lighthouse' } }] } : { text: toolResults[0] },
      ))
    ).provider,
    tools: [lookupIn(shelf)],
    system: `You research ${shelf}. Look the topic up, then answer in one sentence.`,
  });

const writerModel = await chooseModel(({ toolResults }) =>
  toolResults.length === 0
    ? {
        toolCalls: [
          { name: 'ask_historian', args: { prompt: 'What is the oldest famous lighthouse?' } },
          { name: 'ask_scientist', args: { prompt: 'How far can a lighthouse beam reach?' } },
        ],
      }
    : { text: `Two facts for the article: ${toolResults.join(' ')}` },
);
printMode('agents-supervisor', writerModel);

const writer = createConversationMachine({
  provider: writerModel.provider,
  name: 'writer',
  tools: [
    agentTool(await researcher('history'), { name: 'ask_historian', description: 'Ask the historian one question' }),
    agentTool(await researcher('science'), { name: 'ask_scientist', description: 'Ask the scientist one question' }),
  ],
  system: 'You write short articles. Ask both researchers at once, then write two sentences.',
});

const actor = createActor(writer, { input: { messages: [] } });
logRun(actor);
actor.on('agent.started', (event) => console.log(`[agent.started] ${event.agent} (${event.toolCallId})`));
actor.on('agent.event', ({ path, event }) => {
  if (event.type === 'tool.call') console.log(`  [${path.join('/')}] tool.call ${event.name}(${JSON.stringify(event.args)})`);
  if (event.type === 'tool.result') console.log(`  [${path.join('/')}] tool.result ${event.name} → ${event.result}`);
});
actor.on('agent.finished', (event) => console.log(`[agent.finished] ${event.agent}: ${event.output.status} — ${event.output.text}`));
actor.start();
actor.send({ type: 'user.message', content: 'Write two sentences about lighthouses.' });
const output = await toPromise(actor);
printOutput(output);
for (const { path, agent, usage } of output.usageByAgent ?? []) {
  console.log(`[usage] ${path.length === 0 ? '(root)' : path.join('/')} ${agent}: ${usage.totalTokens} tokens`);
}
