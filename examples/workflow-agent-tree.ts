/**
 * An agent tree as one step of a workflow: the `research` step is a conversation whose tools are
 * agents (`agentTool`) — a lead that asks a researcher two questions at once, each call a child
 * conversation with a real tool — and the `format` step is a second conversation that turns the
 * lead's notes into a list. The workflow hears the whole tree: every event of every agent call
 * comes as `agent.event` with its full path, the invoke id then the call's id
 * (`[research/call_0_0] tool.result …`).
 *
 *   npx tsx examples/workflow-agent-tree.ts
 *
 * Offline a scripted model plays the lead, the researcher and the formatter; with OPENAI_API_KEY,
 * ANTHROPIC_API_KEY or OPENAI_BASE_URL set, a live one does (see examples/support/model.ts).
 */
import { pathToFileURL } from 'node:url';
import { type AgentEventEvent, agentTool, conversationInput, createConversationMachine, defineTool, type Provider } from 'actorloop';
import { assign, createActor, setup, toPromise } from 'xstate';
import { z } from 'zod';
import { chooseModel, printMode } from './support/model.js';
import { failureOf, outputOf } from './support/workflow-outcome.js';

export type AgentTreeOutput = { status: 'done' | 'failed'; notes: string; list: string; failure?: string };

type AgentTreeContext = Omit<AgentTreeOutput, 'status'> & { topic: string; status?: AgentTreeOutput['status'] };

/** Stands in for a knowledge base. */
const facts: Record<string, string> = {
  'pharos of alexandria': 'The Pharos of Alexandria, finished around 280 BC, stood for about 1,500 years.',
  'fresnel lens': 'A Fresnel lens, introduced in 1823, lets a lighthouse beam reach more than 30 km.',
};

const lookUp = defineTool({
  name: 'look_up',
  description: 'Look a topic up in the archive',
  parameters: z.object({ topic: z.string() }),
  execute: ({ topic }) => facts[topic.toLowerCase()] ?? `nothing on ${topic}`,
});

export function agentTreeWorkflow(provider: Provider) {
  const researcher = createConversationMachine({
    provider,
    tools: [lookUp],
    system: 'You research one question: look the topic up, then answer in one sentence.',
  });
  return setup({
    types: {
      context: {} as AgentTreeContext,
      input: {} as { topic: string },
      emitted: {} as AgentEventEvent,
      output: {} as AgentTreeOutput,
    },
    actors: {
      lead: createConversationMachine({
        provider,
        name: 'lead',
        tools: [agentTool(researcher, { name: 'ask_researcher', description: 'Ask the researcher one question' })],
        system: 'You lead research: ask the researcher two questions at once, then give the two facts as notes.',
      }),
      formatter: createConversationMachine({ provider, system: 'You format notes as a short bulleted list, one fact a line.' }),
    },
    guards: {
      finished: ({ event }) => outputOf(event).status === 'done',
    },
    actions: {
      recordFailure: assign({ failure: ({ event }) => failureOf(event) }),
    },
  }).createMachine({
    id: 'agent-tree',
    context: ({ input }) => ({ topic: input.topic, notes: '', list: '' }),
    initial: 'research',
    states: {
      research: {
        invoke: {
          id: 'research',
          src: 'lead',
          input: ({ context }) => conversationInput(`Find two facts about ${context.topic}.`),
          onDone: [
            { guard: 'finished', target: 'format', actions: assign({ notes: ({ event }) => event.output.text }) },
            { target: 'failed', actions: 'recordFailure' },
          ],
          onError: { target: 'failed', actions: 'recordFailure' },
        },
      },
      format: {
        invoke: {
          id: 'format',
          src: 'formatter',
          input: ({ context }) => conversationInput(`Format these notes:\n\n${context.notes}`),
          onDone: [
            { guard: 'finished', target: 'done', actions: assign({ list: ({ event }) => event.output.text }) },
            { target: 'failed', actions: 'recordFailure' },
          ],
          onError: { target: 'failed', actions: 'recordFailure' },
        },
      },
      done: { type: 'final', entry: assign({ status: 'done' as const }) },
      failed: { type: 'final', entry: assign({ status: 'failed' as const }) },
    },
    output: ({ context: { status = 'failed', notes, list, failure } }) => ({ status, notes, list, ...(failure ? { failure } : {}) }),
  });
}

async function main() {
  // One script for the three roles, told apart by what each is asked.
  const model = await chooseModel(({ userText, toolResults }) => {
    if (userText.startsWith('Format')) {
      const notes = userText.split('\n\n')[1] ?? '';
      return {
        text: notes
          .replace(/^Notes: /, '')
          .replace(/(?<=\.) /g, '\n')
          .replace(/^/gm, '- '),
      };
    }
    const topic = /^Look up the (.+)\.$/.exec(userText)?.[1];
    if (topic) return toolResults.length === 0 ? { toolCalls: [{ name: 'look_up', args: { topic } }] } : { text: toolResults[0] };
    return toolResults.length === 0
      ? {
          toolCalls: [
            { name: 'ask_researcher', args: { prompt: 'Look up the Pharos of Alexandria.' } },
            { name: 'ask_researcher', args: { prompt: 'Look up the Fresnel lens.' } },
          ],
        }
      : { text: `Notes: ${toolResults.join(' ')}` };
  });
  printMode('workflow-agent-tree', model);

  const actor = createActor(agentTreeWorkflow(model.provider), { input: { topic: 'lighthouses' } });
  actor.on('agent.event', ({ path, event }) => {
    const at = `[${path.join('/')}]`;
    if (event.type === 'request.started') console.log(`${at} request.started`);
    if (event.type === 'tool.call') console.log(`${at} tool.call ${event.name}(${JSON.stringify(event.args)})`);
    if (event.type === 'tool.result') console.log(`${at} tool.result ${event.name} → ${event.result}`);
    if (event.type === 'agent.started') console.log(`${at} agent.started ${event.agent} (${event.toolCallId})`);
    if (event.type === 'agent.finished') console.log(`${at} agent.finished ${event.agent} (${event.toolCallId}): ${event.output.status}`);
  });
  actor.start();

  const output = await toPromise(actor);
  console.log(`[output] ${output.status}${output.failure ? `: ${output.failure}` : ''}`);
  console.log(`[list]\n${output.list}`);
  if (output.status !== 'done') process.exitCode = 1;
}

// Run as a program, not when a test imports the workflow.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
