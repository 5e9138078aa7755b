/**
 * Whole actorloop conversations over recorded Chat Completions traffic: each recorded tool loop is
 * replayed through the wire server, the real `openai` SDK, `openaiProvider` and the conversation
 * machine, with tools that return the recorded tool results. Every request we send is compared with
 * the recorded one, and the run's output with the recording.
 */
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import type { Message } from '../src/model/messages.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import type { FinishReason } from '../src/model/provider.js';
import { addUsage, emptyUsage, type Usage } from '../src/model/usage.js';
import { defineTool } from '../src/tools/define-tool.js';
import { expectValidHistory } from './support/history.js';
import { fetchOption, replayTransports } from './support/transports.js';
import {
  parseRecordedResponse,
  pinnedResponses,
  recordedRequestToNeutral,
  recordedToolResults,
  type PinnedResponse,
} from './support/openai-recorded.js';
import {
  assertRequestMatches,
  cassetteSteps,
  hasRecordedFixtures,
  listCassettes,
  missingRecordedFixturesNote,
  startWireServer,
  type Cassette,
} from './support/wire-server.js';

if (!hasRecordedFixtures) console.warn(missingRecordedFixturesNote);

const transports = replayTransports();

const finishReasons: Record<string, FinishReason> = { stop: 'stop', tool_calls: 'tool-calls', length: 'length' };

/** Recorded tool loops: two or more successful requests, at least one of them answered with tool calls. */
const toolLoops: Cassette[] = hasRecordedFixtures
  ? [...listCassettes('openai'), ...listCassettes('openai-compatible')].filter(
      (cassette) =>
        cassette.interactions.length >= 2 &&
        cassette.interactions.every((interaction) => interaction.response.status === 200 && interaction.request.body !== null) &&
        cassette.interactions.some((interaction) => parseRecordedResponse(interaction.response).toolCalls.length > 0),
    )
  : [];

type Turn = { first: number; last: number };

/** A new user turn starts at each request whose last message is the user's. */
function turnsOf(cassette: Cassette): Turn[] {
  const turns: Turn[] = [];
  cassette.interactions.forEach((interaction, index) => {
    const body = interaction.request.body as { messages: Array<{ role: string }> };
    if (body.messages.at(-1)?.role === 'user' || turns.length === 0) turns.push({ first: index, last: index });
    else turns.at(-1)!.last = index;
  });
  return turns;
}

function usageOf(pinned: PinnedResponse): Usage {
  if (!('usage' in pinned)) throw new Error('no usage pinned for an error response');
  const [inputTokens, outputTokens, totalTokens, cached, reasoning] = pinned.usage;
  return {
    inputTokens,
    outputTokens,
    totalTokens,
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
  };
}

describe.skipIf(!hasRecordedFixtures)('conformance: recorded Chat Completions tool loops as whole conversations', () => {
  it('finds the recorded tool loops', () => {
    expect(toolLoops.map((cassette) => `${cassette.provider}/${cassette.name}`)).toEqual([
      'openai/fantasy-gpt-4o-mini-multi-tool-streaming',
      'openai/fantasy-gpt-4o-mini-multi-tool',
      'openai/fantasy-gpt-4o-mini-tool-streaming',
      'openai/fantasy-gpt-4o-tool',
      'openai/fantasy-o4-mini-tool-streaming',
      'openai/mirascope-ts-gpt-4o-mini-tool-loop',
      'openai/pydanticai-gpt-4o-mini-stream-tool-call',
      'openai/pydanticai-gpt-4o-parallel-tools-stream-loop',
      'openai/rubyllm-gpt-5-nano-parallel-tools',
      'openai/rubyllm-gpt-5-nano-tools-multiturn-streaming',
      'openai-compatible/fantasy-groq-kimi-k2-multi-tool-streaming',
      'openai-compatible/fantasy-llama-cpp-gpt-oss-tool-streaming',
    ]);
  });

  for (const cassette of toolLoops)
    for (const transport of transports) {
      const name = `${cassette.provider}/${cassette.name}`;
      it(`${name} (${transport.name})`, async () => {
        const server = await startWireServer(cassetteSteps(cassette));
        try {
          const interactions = cassette.interactions;
          const first = recordedRequestToNeutral(interactions[0]!.request.body);
          const pinned = pinnedResponses[name]!;

          // Tools answer with what the recording sent back, and record the arguments they were given.
          const results = new Map<string, string>();
          for (const interaction of interactions)
            for (const [id, result] of recordedToolResults(interaction.request.body)) results.set(id, result);
          const executed: Array<{ toolCallId: string; name: string; args: unknown }> = [];
          const tools = first.tools.map((description) =>
            defineTool({
              name: description.name,
              description: description.description,
              parameters: description.inputSchema as { type: 'object' },
              execute: (args: unknown, { toolCallId }: { toolCallId: string }) => {
                executed.push({ toolCallId, name: description.name, args });
                const result = results.get(toolCallId);
                if (result === undefined) throw new Error(`no recorded result for ${toolCallId}`);
                return result;
              },
            }),
          );

          // The recorded client sent reasoning back (llama.cpp gpt-oss): so do we, and compare it below.
          const recordedReasoning = interactions.map((interaction) =>
            (interaction.request.body as { messages: Array<{ role: string; reasoning_content?: unknown }> }).messages
              .filter((message) => message.role === 'assistant')
              .map((message) => message.reasoning_content ?? null),
          );
          const sendsReasoning = recordedReasoning.some((list) => list.some((reasoning) => reasoning !== null));

          const provider = openaiProvider({
            sendReasoning: sendsReasoning,
            model: first.model,
            apiKey: 'sk-replay',
            ...fetchOption(transport),
            baseURL: server.url + interactions[0]!.request.path.replace(/\/chat\/completions$/, ''),
            stream: first.stream,
            ...(first.strict === undefined ? {} : { strict: first.strict }),
          });

          let history: Message[] = [];
          const expectedCalls: Array<{ toolCallId: string; name: string; args: unknown }> = [];
          for (const turn of turnsOf(cassette)) {
            const turnRequest = recordedRequestToNeutral(interactions[turn.first]!.request.body);
            const userMessage = turnRequest.messages.at(-1);
            if (userMessage?.role !== 'user') throw new Error('a turn must start with a user message');
            if (turn.first === 0) history = turnRequest.messages.slice(0, -1);

            const responses = interactions
              .slice(turn.first, turn.last + 1)
              .map((interaction) => parseRecordedResponse(interaction.response));
            const lastResponse = responses.at(-1)!;
            // The recording stops where the recorded client stopped: a last response with tool calls
            // (pydantic-ai's `final_result`) is one round more than the recording holds.
            const rounds = responses.filter((response, index) => response.toolCalls.length > 0 && index < responses.length - 1).length;
            const endsWithCalls = lastResponse.toolCalls.length > 0;

            const machine = createConversationMachine({
              provider,
              tools,
              ...(first.system === undefined ? {} : { system: first.system }),
              maxToolIterations: endsWithCalls ? rounds : Math.max(rounds, 1),
              retry: false,
              doomLoop: false,
            });
            const actor = createActor(machine, { input: { messages: history } });
            const emittedCalls: Array<{ toolCallId: string; name: string; args: unknown }> = [];
            const usageSteps: Usage[] = [];
            actor.on('tool.call', (event) => emittedCalls.push({ toolCallId: event.toolCallId, name: event.name, args: event.args }));
            actor.on('usage', (event) => usageSteps.push(event.step));
            actor.start();
            actor.send({ type: 'user.message', content: userMessage.content });
            const output = await toPromise(actor);

            const turnCalls = responses.flatMap((response) =>
              response.toolCalls.map((call) => ({
                toolCallId: call.id,
                name: call.name,
                args: JSON.parse(call.argsText === '' ? '{}' : call.argsText) as unknown,
              })),
            );
            expect(emittedCalls, `${name}: tool calls of turn at request ${turn.first}`).toEqual(turnCalls);
            expectedCalls.push(...turnCalls.slice(0, endsWithCalls ? turnCalls.length - lastResponse.toolCalls.length : undefined));

            const turnUsage = pinned.slice(turn.first, turn.last + 1).map(usageOf);
            expect(usageSteps).toEqual(turnUsage);
            expect(output.usage).toEqual(turnUsage.reduce(addUsage, emptyUsage()));
            expect(output.iterations).toBe(rounds);
            expect(output.finishReason).toBe(finishReasons[(pinned[turn.last] as { finish: string }).finish]);
            if (endsWithCalls) {
              expect(output).toMatchObject({ status: 'halted', reason: 'max_iterations' });
            } else {
              expect(output.status, JSON.stringify(output.error)).toBe('done');
              expect(output.text).toBe(lastResponse.text);
            }
            expectValidHistory(output.messages);
            history = output.messages;
          }

          expect(executed).toEqual(expectedCalls);
          expect(server.requests).toHaveLength(interactions.length);
          interactions.forEach((interaction, index) => {
            expect(server.requests[index]!.path).toBe(interaction.request.path);
            assertRequestMatches(interaction.request, server.requests[index]);
            if (sendsReasoning) {
              const sentReasoning = (
                server.requests[index]!.body as { messages: Array<{ role: string; reasoning_content?: unknown }> }
              ).messages
                .filter((message) => message.role === 'assistant')
                .map((message) => message.reasoning_content ?? null);
              expect(sentReasoning, `reasoning_content sent back in request ${index}`).toEqual(recordedReasoning[index]);
            }
          });
          if (name.includes('llama-cpp')) expect(sendsReasoning).toBe(true);
        } finally {
          await server.close();
        }
      });
    }
});
