/**
 * Replays every recorded Chat Completions cassette (`recorded/openai/`, `recorded/openai-compatible/`)
 * into the real `openai` SDK via `openaiProvider`, through `replayTraffic` (actorloop/testing) as the
 * SDK's `fetch`, serving the interactions in order (`match: 'order'`: other clients recorded the
 * request bodies). `recorded/openai-responses/` is left out: the Responses API is not what
 * `openaiProvider` speaks.
 */
import { describe, expect, it } from 'vitest';
import { ProviderError } from '../src/model/errors/provider-error.js';
import { openaiProvider, type OpenAIReasoningEffort } from '../src/providers/openai/index.js';
import type { FinishReason, ProviderEvent, ProviderRequest } from '../src/model/provider.js';
import type { Usage } from '../src/model/usage.js';
import { replayTraffic } from '../src/testing/index.js';
import { parseRecordedResponse, pinnedResponses, recordedRequestToNeutral, type PinnedResponse } from './support/openai-recorded.js';
import {
  assertRequestMatches,
  hasRecordedFixtures,
  listCassettes,
  missingRecordedFixturesNote,
  recordedFixturesDir,
  type Cassette,
} from './support/wire-server.js';

if (!hasRecordedFixtures) console.warn(missingRecordedFixturesNote);

const cassettes: Cassette[] = hasRecordedFixtures ? [...listCassettes('openai'), ...listCassettes('openai-compatible')] : [];
const key = (cassette: Cassette) => `${cassette.provider}/${cassette.name}`;

const finishReasons: Record<string, FinishReason> = {
  stop: 'stop',
  tool_calls: 'tool-calls',
  length: 'length',
  content_filter: 'content-filter',
};

function pinnedUsage(usage: [number, number, number, number | undefined, number | undefined]): Usage {
  const [inputTokens, outputTokens, totalTokens, cached, reasoning] = usage;
  return {
    inputTokens,
    outputTokens,
    totalTokens,
    ...(cached === undefined ? {} : { cachedInputTokens: cached }),
    ...(reasoning === undefined ? {} : { reasoningTokens: reasoning }),
  };
}

/** The base URL that makes our request path equal the recorded one (`/openai/v1`, `/api/v1`, `/v1`). */
function baseURLFor(recordedPath: string): string {
  // Never reached: the replaying fetch answers every request itself.
  return `https://replay.invalid${recordedPath.replace(/\/chat\/completions$/, '')}`;
}

describe.skipIf(!hasRecordedFixtures)('conformance: recorded Chat Completions traffic through openaiProvider', () => {
  it('covers every recorded cassette of both folders', () => {
    expect(cassettes.map(key).sort()).toEqual(Object.keys(pinnedResponses).sort());
  });

  for (const cassette of cassettes) {
    it(`${key(cassette)}: ${cassette.description ?? ''}`.slice(0, 200), async () => {
      const replay = replayTraffic({ dir: recordedFixturesDir, name: key(cassette), match: 'order' });
      const pinned = pinnedResponses[key(cassette)]!;
      for (const [index, interaction] of cassette.interactions.entries()) {
        const recordedBody = interaction.request.body;
        const isStream = (interaction.response.headers['content-type'] ?? '').includes('event-stream');
        const recorded = recordedBody === null ? undefined : recordedRequestToNeutral(recordedBody);
        const provider = openaiProvider({
          model: recorded?.model ?? 'recorded-model',
          apiKey: 'sk-replay',
          baseURL: baseURLFor(interaction.request.path),
          fetch: replay,
          stream: recorded ? recorded.stream : isStream,
          ...(recorded?.reasoningEffort ? { reasoningEffort: recorded.reasoningEffort as OpenAIReasoningEffort } : {}),
          ...(recorded?.strict === undefined ? {} : { strict: recorded.strict }),
        });
        const request: ProviderRequest = {
          ...(recorded?.system === undefined ? {} : { system: recorded.system }),
          messages: recorded?.messages ?? [{ role: 'user', content: 'Hello' }],
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

        const sent = replay.requests[index]!;
        expect(sent.path, `request ${index} path`).toBe(interaction.request.path);
        if (recordedBody !== null) {
          assertRequestMatches(interaction.request, sent.body);
          if (recorded?.reasoningEffort) expect(sent.body).toMatchObject({ reasoning_effort: recorded.reasoningEffort });
        }

        const expected: PinnedResponse = pinned[index]!;
        if ('status' in expected) {
          expect(ProviderError.isInstance(failure), `request ${index}: expected a ProviderError, got ${String(failure)}`).toBe(true);
          const error = failure as ProviderError;
          expect(error.status).toBe(expected.status);
          const classification: Record<number, { code: string; retryable: boolean }> = {
            400: { code: 'bad_request', retryable: false },
            401: { code: 'authentication', retryable: false },
            404: { code: 'not_found', retryable: false },
            429: { code: 'rate_limit', retryable: true },
          };
          expect({ code: error.code, retryable: error.retryable }).toEqual(classification[expected.status]);
          expect(error.message).not.toContain('sk-replay');
          continue;
        }

        const parsed = parseRecordedResponse(interaction.response);
        const deltaText = events.flatMap((event) => (event.type === 'text.delta' ? [event.delta] : [])).join('');
        const deltaReasoning = events.flatMap((event) => (event.type === 'reasoning.delta' ? [event.delta] : [])).join('');
        expect(deltaText, `request ${index} streamed text`).toBe(parsed.text);
        expect(deltaReasoning, `request ${index} streamed reasoning`).toBe(parsed.reasoning);

        if ('inBandError' in expected) {
          expect(ProviderError.isInstance(failure)).toBe(true);
          expect(failure).toMatchObject({ code: 'bad_request', retryable: false, status: expected.inBandError });
          expect(events.some((event) => event.type === 'finish')).toBe(false);
          continue;
        }

        expect(failure, `request ${index} failed: ${String(failure)}`).toBeUndefined();
        const finish = events.at(-1);
        if (finish?.type !== 'finish') throw new Error(`request ${index}: the last event is not finish`);
        expect(events.filter((event) => event.type === 'finish')).toHaveLength(1);

        // The pinned facts, read from the recording by an independent script.
        expect(finish.rawFinishReason).toBe(expected.finish);
        expect(finish.finishReason).toBe(finishReasons[expected.finish] ?? 'other');
        expect(finish.usage).toEqual(pinnedUsage(expected.usage));
        const calls = finish.content.flatMap((part) => (part.type === 'tool-call' ? [part] : []));
        expect(calls.map((call) => `${call.toolCallId}:${call.toolName}`)).toEqual(expected.toolCalls);
        expect([...parsed.text].length).toBe(expected.textLength);

        // The whole content, against the recording's bytes.
        expect(calls.map((call) => call.argsText)).toEqual(parsed.toolCalls.map((call) => call.argsText));
        expect(finish.content.filter((part) => part.type === 'text')).toEqual(
          parsed.text === '' ? [] : [{ type: 'text', text: parsed.text }],
        );
        expect(finish.content.filter((part) => part.type === 'reasoning')).toEqual(
          parsed.reasoning === '' ? [] : [{ type: 'reasoning', text: parsed.reasoning }],
        );
        // Tool-call deltas add up to the arguments, per call id.
        for (const call of calls) {
          const argsDeltas = events.flatMap((event) =>
            event.type === 'tool.call.delta' && event.toolCallId === call.toolCallId ? [event.argsDelta] : [],
          );
          expect(argsDeltas.join('')).toBe(call.argsText);
        }
      }
      expect(replay.remaining()).toBe(0);
    });
  }
});
