/**
 * Replays every recorded OpenAI Responses cassette (`recorded/openai-responses/`) through the wire
 * server into the real `openai` SDK via `openaiProvider({ api: 'responses' })`, one provider request
 * per recorded interaction: the request we send is compared with the recorded one, the events
 * with what the recorded bytes say.
 */
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../src/model/errors/provider-error.js';
import type { Message } from '../src/model/messages.js';
import { openaiProvider, type OpenAIReasoningMetadata, type OpenAITextMetadata } from '../src/providers/openai/index.js';
import type { FinishReason, ProviderContentPart, ProviderEvent, ProviderRequest } from '../src/model/provider.js';

/** What the Responses wire kept on a part (`providerMetadata.openai`). */
const openaiOf = (part: ProviderContentPart) => part.providerMetadata?.openai as (OpenAITextMetadata & OpenAIReasoningMetadata) | undefined;
import {
  assertResponsesRequestMatches,
  callIdAliases,
  parseRecordedResponsesOutput,
  pinnedResponsesFacts,
  pinnedUsage,
  recordedAssistantMessage,
  recordedResponsesRequestToNeutral,
  recordedText,
  type ResponsesPinned,
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

const cassettes: Cassette[] = hasRecordedFixtures ? listCassettes('openai-responses') : [];

const finishReasons: Record<string, FinishReason> = { 'incomplete:max_output_tokens': 'length' };

describe.skipIf(!hasRecordedFixtures)('conformance: recorded Responses traffic through openaiProvider({ api: "responses" })', () => {
  it('covers all 20 recorded cassettes', () => {
    expect(cassettes.map((cassette) => cassette.name).sort()).toEqual(Object.keys(pinnedResponsesFacts).sort());
    expect(cassettes).toHaveLength(20);
  });

  for (const cassette of cassettes) {
    it(`${cassette.name}: ${cassette.description ?? ''}`.slice(0, 200), async () => {
      const server = await startWireServer(cassetteSteps(cassette));
      const aliases = callIdAliases(cassette);
      try {
        const pinned = pinnedResponsesFacts[cassette.name]!;
        // What a client holds after each interaction: for requests that continue a stored response.
        let history: Message[] = [];
        for (const [index, interaction] of cassette.interactions.entries()) {
          const body = interaction.request.body;
          const isStream = (interaction.response.headers['content-type'] ?? '').includes('event-stream');
          const recorded = body === null ? undefined : recordedResponsesRequestToNeutral(body, aliases);
          const chained = recorded?.previousResponseId !== undefined;
          const messages = recorded
            ? chained
              ? [...history, ...recorded.messages]
              : recorded.messages
            : [{ role: 'user' as const, content: 'Hello' }];
          const stored = recorded?.options.store ?? true;
          const provider = openaiProvider({
            api: 'responses',
            model: recorded?.model ?? 'gpt-5-nano',
            apiKey: 'sk-replay',
            baseURL: `${server.url}/v1`,
            ...(recorded ? recorded.options : { stream: isStream, store: true }),
            ...(chained ? { previousResponseId: true } : {}),
          });
          const request: ProviderRequest = {
            ...(recorded?.system === undefined ? {} : { system: recorded.system }),
            messages,
            tools: recorded?.tools ?? [],
            signal: new AbortController().signal,
          };

          const events: ProviderEvent[] = [];
          let failure: unknown;
          try {
            for await (const event of provider.stream(request)) events.push(event);
          } catch (error) {
            failure = error;
          }

          const sent = server.requests[index]!;
          expect(sent.path, `request ${index} path`).toBe(interaction.request.path);
          if (body !== null) assertResponsesRequestMatches(interaction.request, sent, { aliases });

          const expected: ResponsesPinned = pinned[index]!;
          if ('httpStatus' in expected) {
            expect(ProviderError.isInstance(failure), `request ${index}: expected a ProviderError, got ${String(failure)}`).toBe(true);
            const error = failure as ProviderError;
            expect(error.status).toBe(expected.httpStatus);
            const classification: Record<number, { code: string; retryable: boolean }> = {
              400: { code: 'bad_request', retryable: false },
              401: { code: 'authentication', retryable: false },
            };
            // A prompt over the context window is a 400 of its own kind: compacting, not retrying, helps.
            const recordedCode = (JSON.parse(interaction.response.body) as { error?: { code?: unknown } }).error?.code;
            const wanted =
              recordedCode === 'context_length_exceeded'
                ? { code: 'context_length', retryable: false }
                : classification[expected.httpStatus];
            expect({ code: error.code, retryable: error.retryable }).toEqual(wanted);
            expect(error.message).not.toContain('sk-replay');
            continue;
          }
          if ('inBandError' in expected) {
            expect(ProviderError.isInstance(failure), `request ${index}: expected a ProviderError, got ${String(failure)}`).toBe(true);
            // A spent quota is not worth retrying, although it reads like a rate limit.
            expect(failure).toMatchObject({ code: 'rate_limit', retryable: false });
            expect((failure as ProviderError).message).toContain(expected.inBandError);
            expect(events.some((event) => event.type === 'finish')).toBe(false);
            continue;
          }

          expect(failure, `request ${index} failed: ${String(failure)}`).toBeUndefined();
          const finish = events.at(-1);
          if (finish?.type !== 'finish') throw new Error(`request ${index}: the last event is not finish`);
          expect(events.filter((event) => event.type === 'finish')).toHaveLength(1);
          const output = parseRecordedResponsesOutput(interaction.response);

          // The pinned facts, read from the recording by an independent script.
          const calls = finish.content.flatMap((part) => (part.type === 'tool-call' ? [part] : []));
          expect(calls.map((call) => `${call.toolCallId}:${call.toolName}:completed`)).toEqual(expected.toolCalls);
          expect(finish.finishReason).toBe(finishReasons[expected.status] ?? (calls.length > 0 ? 'tool-calls' : 'stop'));
          expect(finish.rawFinishReason).toBe(expected.status.replace(/^incomplete:/, ''));
          expect(finish.usage).toEqual(pinnedUsage(expected.usage));
          expect({ model: finish.model, responseId: finish.responseId }).toEqual({ model: output.model, responseId: output.responseId });
          expect(finish.model).toMatch(/^(gpt|o4)/);
          const texts = finish.content.flatMap((part) => (part.type === 'text' ? [part] : []));
          expect([...texts.map((part) => part.text).join('')].length).toBe(expected.textLength);
          const reasoning = finish.content.flatMap((part) => (part.type === 'reasoning' ? [part] : []));
          expect(reasoning).toHaveLength(expected.reasoningItems);

          // The whole content, against the recording's bytes: text, phase, reasoning verbatim, calls.
          expect(texts.map((part) => part.text).join('')).toBe(recordedText(output));
          const recordedMessages = output.items.flatMap((item) => (item.type === 'message' && item.text !== '' ? [item] : []));
          expect(texts.map((part) => openaiOf(part)?.phase)).toEqual(recordedMessages.map((item) => item.phase));
          const recordedReasoning = output.items.flatMap((item) => (item.type === 'reasoning' ? [item] : []));
          expect(reasoning.map((part) => openaiOf(part)?.encryptedContent)).toEqual(recordedReasoning.map((item) => item.encrypted));
          expect(reasoning.map((part) => openaiOf(part)?.summary ?? (part.text === '' ? [] : [part.text]))).toEqual(
            recordedReasoning.map((item) => item.summary),
          );
          const recordedCallItems = output.items.flatMap((item) => (item.type === 'function_call' ? [item] : []));
          expect(calls.map((call) => call.argsText)).toEqual(recordedCallItems.map((item) => item.arguments));
          // Ids only when the response was stored: only then can they be referred to.
          const ids = finish.content.map((part) => openaiOf(part)?.itemId);
          const recordedIds = output.items.flatMap((item) =>
            (item.type === 'message' && item.text !== '') || item.type === 'reasoning' || item.type === 'function_call' ? [item.id] : [],
          );
          expect(ids).toEqual(stored ? recordedIds : recordedIds.map(() => undefined));
          for (const part of finish.content) {
            if (openaiOf(part)?.responseId !== undefined) expect(openaiOf(part)?.responseId).toBe(output.responseId);
          }

          // Deltas add up to the content, and to what the recorded deltas say.
          const deltaText = events.flatMap((event) => (event.type === 'text.delta' ? [event.delta] : [])).join('');
          const deltaReasoning = events.flatMap((event) => (event.type === 'reasoning.delta' ? [event.delta] : [])).join('');
          expect(deltaText).toBe(texts.map((part) => part.text).join(''));
          expect(deltaReasoning).toBe(reasoning.map((part) => part.text).join(''));
          if (isStream) {
            expect(deltaText).toBe(output.streamedText);
            expect(deltaReasoning).toBe(output.streamedReasoning);
          }
          for (const call of calls) {
            const argsDeltas = events.flatMap((event) =>
              event.type === 'tool.call.delta' && event.toolCallId === call.toolCallId ? [event.argsDelta] : [],
            );
            expect(argsDeltas.join('')).toBe(call.argsText);
            if (isStream) expect(output.streamedArgs.get(call.toolCallId)).toBe(call.argsText);
            expect(events.find((event) => event.type === 'tool.call.delta' && event.toolCallId === call.toolCallId)).toMatchObject({
              name: call.toolName,
            });
          }

          history = [...messages, recordedAssistantMessage(output, stored)];
        }
        expect(server.remainingSteps()).toBe(0);
      } finally {
        await server.close();
      }
    });
  }
});
