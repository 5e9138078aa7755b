/**
 * Whole actorloop conversations over recorded Responses traffic: each recorded tool loop is replayed
 * through the wire server, the real `openai` SDK, `openaiProvider({ api: 'responses' })` and the
 * conversation machine, with tools that return the recorded tool outputs. Every request we send
 * is compared with the recorded one — reasoning items included: where the recorded client did not
 * send its reasoning back, we check that ours goes back verbatim, right before its follower.
 */
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { fetchOption, replayTransports } from './support/transports.js';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import type { Message } from '../src/model/messages.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import type { FinishReason } from '../src/model/provider.js';
import { addUsage, emptyUsage, type Usage } from '../src/model/usage.js';
import { defineTool } from '../src/tools/define-tool.js';
import { expectValidHistory } from './support/history.js';
import {
  assertResponsesRequestMatches,
  callIdAliases,
  parseRecordedResponsesOutput,
  pinnedResponsesFacts,
  pinnedUsage,
  recordedCalls,
  recordedResponsesRequestToNeutral,
  recordedText,
  recordedToolOutputs,
  type RecordedOutput,
} from './support/openai-responses-recorded.js';
import {
  cassetteSteps,
  hasRecordedFixtures,
  listCassettes,
  missingRecordedFixturesNote,
  startWireServer,
  type Cassette,
} from './support/wire-server.js';

if (!hasRecordedFixtures) console.warn(missingRecordedFixturesNote);

type Json = Record<string, unknown>;
type InputItem = {
  type?: string;
  role?: string;
  call_id?: string;
  content?: unknown;
  encrypted_content?: string;
  summary?: Array<{ text: string }>;
};
const inputOf = (body: unknown): InputItem[] => (body as { input: InputItem[] }).input;

/** Recorded tool loops: two or more successful requests, at least one answered with function calls. */
const toolLoops: Cassette[] = hasRecordedFixtures
  ? listCassettes('openai-responses').filter(
      (cassette) =>
        cassette.interactions.length >= 2 &&
        cassette.interactions.every((interaction) => interaction.response.status === 200 && interaction.request.body !== null) &&
        cassette.interactions.some((interaction) => recordedCalls(parseRecordedResponsesOutput(interaction.response)).length > 0),
    )
  : [];

/** A new user turn starts at each request whose last input item is a user message. */
function turnsOf(cassette: Cassette): Array<{ first: number; last: number }> {
  const turns: Array<{ first: number; last: number }> = [];
  cassette.interactions.forEach((interaction, index) => {
    const last = inputOf(interaction.request.body).at(-1);
    if ((last?.role === 'user' && last.type !== 'function_call_output') || turns.length === 0) turns.push({ first: index, last: index });
    else turns.at(-1)!.last = index;
  });
  return turns;
}

/** Whether an input item stands for a recorded output item (the follower a reasoning item must precede). */
function standsFor(input: InputItem | undefined, output: RecordedOutput['items'][number]): boolean {
  if (!input) return false;
  if (output.type === 'function_call') return input.type === 'function_call' && input.call_id === output.callId;
  if (output.type === 'message')
    return input.role === 'assistant' && JSON.stringify(input.content).includes(JSON.stringify(output.text).slice(1, -1));
  return false;
}

const transports = replayTransports();

describe.skipIf(!hasRecordedFixtures)('conformance: recorded Responses tool loops as whole conversations', () => {
  it('finds the recorded tool loops', () => {
    expect(toolLoops.map((cassette) => cassette.name)).toEqual([
      'fantasy-gpt-4o-parallel-tools',
      'fantasy-gpt-5-reasoning-summary-tool-streaming',
      'fantasy-gpt-5-reasoning-summary-tool',
      'pydanticai-gpt-4.1-previous-response-id-tool-chain',
      'pydanticai-gpt-4o-stream-tool-loop',
      'rubyllm-gpt-5-nano-parallel-tools',
      'rubyllm-gpt-5-nano-tool-no-args-multiturn-streaming',
    ]);
  });

  for (const cassette of toolLoops)
    for (const transport of transports) {
      it(`${cassette.name} (${transport.name})`, async () => {
        const server = await startWireServer(cassetteSteps(cassette));
        try {
          const interactions = cassette.interactions;
          const aliases = callIdAliases(cassette);
          const first = recordedResponsesRequestToNeutral(interactions[0]!.request.body, aliases);
          const chained = interactions.some((interaction) => (interaction.request.body as Json).previous_response_id !== undefined);
          const pinned = pinnedResponsesFacts[cassette.name]!;
          const outputs = interactions.map((interaction) => parseRecordedResponsesOutput(interaction.response));

          // Tools answer with what the recording sent back, and record the arguments they were given.
          const results = new Map<string, string>();
          for (const interaction of interactions)
            for (const [id, result] of recordedToolOutputs(interaction.request.body, aliases)) results.set(id, result);
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

          const provider = openaiProvider({
            api: 'responses',
            model: first.model,
            apiKey: 'sk-replay',
            ...fetchOption(transport),
            baseURL: `${server.url}/v1`,
            ...first.options,
            ...(chained ? { previousResponseId: true } : {}),
          });

          let history: Message[] = [];
          const expectedCalls: Array<{ toolCallId: string; name: string; args: unknown }> = [];
          for (const turn of turnsOf(cassette)) {
            const turnRequest = recordedResponsesRequestToNeutral(interactions[turn.first]!.request.body, aliases);
            const userMessage = turnRequest.messages.at(-1);
            if (userMessage?.role !== 'user') throw new Error('a turn must start with a user message');
            if (turn.first === 0) history = turnRequest.messages.slice(0, -1);

            const responses = outputs.slice(turn.first, turn.last + 1);
            const lastResponse = responses.at(-1)!;
            const rounds = responses.filter((response, index) => recordedCalls(response).length > 0 && index < responses.length - 1).length;
            expect(recordedCalls(lastResponse)).toEqual([]);

            const machine = createConversationMachine({
              provider,
              tools,
              ...(first.system === undefined ? {} : { system: first.system }),
              maxToolIterations: Math.max(rounds, 1),
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
              recordedCalls(response).map((call) => ({
                toolCallId: call.callId,
                name: call.name,
                args: JSON.parse(call.arguments === '' ? '{}' : call.arguments) as unknown,
              })),
            );
            expect(emittedCalls, `tool calls of the turn at request ${turn.first}`).toEqual(turnCalls);
            expectedCalls.push(...turnCalls);

            const turnUsage = pinned.slice(turn.first, turn.last + 1).map((facts) => {
              if (!('usage' in facts)) throw new Error('no usage pinned for an error response');
              return pinnedUsage(facts.usage);
            });
            expect(usageSteps).toEqual(turnUsage);
            expect(output.usage).toEqual(turnUsage.reduce(addUsage, emptyUsage()));
            expect(output.iterations).toBe(rounds);
            expect(output.finishReason).toBe<FinishReason>('stop');
            expect(output.status, JSON.stringify(output.error)).toBe('done');
            expect(output.text).toBe(recordedText(lastResponse));
            expectValidHistory(output.messages);
            history = output.messages;
          }

          expect(executed).toEqual(expectedCalls);
          expect(server.requests).toHaveLength(interactions.length);
          const stateless = first.options.store === false;
          interactions.forEach((interaction, index) => {
            expect(server.requests[index]!.path).toBe(interaction.request.path);
            const recordedInput = inputOf(interaction.request.body);
            const recordedSendsReasoning = recordedInput.some((item) => item.type === 'reasoning');
            assertResponsesRequestMatches(interaction.request, server.requests[index], {
              aliases,
              reasoning: recordedSendsReasoning || !stateless ? 'exact' : 'skip',
            });
            if (!stateless) return;
            // Stateless: every earlier reasoning item goes back verbatim (the `output_item.done` form),
            // right before the item that followed it in its response; no other reasoning is sent.
            const sent = inputOf(server.requests[index]!.body);
            const sentReasoning = sent.filter((item) => item.type === 'reasoning');
            const earlier = outputs
              .slice(0, index)
              .flatMap((output) =>
                output.items.flatMap((item, position) =>
                  item.type === 'reasoning' ? [{ item, follower: output.items[position + 1] }] : [],
                ),
              );
            expect(sentReasoning.map((item) => item.encrypted_content)).toEqual(earlier.map(({ item }) => item.encrypted));
            for (const { item, follower } of earlier) {
              const at = sent.findIndex((candidate) => candidate.encrypted_content === item.encrypted);
              expect(sent[at]!.summary?.map((part) => part.text)).toEqual(item.summary);
              expect(follower && standsFor(sent[at + 1], follower), `reasoning ${at} of request ${index} is followed by its item`).toBe(
                true,
              );
            }
          });
        } finally {
          await server.close();
        }
      });
    }
});
