/**
 * Replays every recorded Anthropic cassette (`../shared/fixtures/recorded/anthropic`, never copied
 * into the repository) through a local HTTP server into the real `@anthropic-ai/sdk`, via
 * `anthropicProvider`. Checks each response's events against the recording's bytes, the requests
 * we build against the recorded ones, and that our own parsed output, fed back as history,
 * reproduces the next recorded request (thinking signatures byte-identical).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { anthropicProvider } from '../src/providers/anthropic/index.js';
import type { AnthropicRequestParams } from '../src/providers/anthropic/index.js';
import { toAnthropicFinishReason } from '../src/providers/anthropic/index.js';
import { ProviderError } from '../src/providers/errors/provider-error.js';
import type { Message } from '../src/providers/messages.js';
import type { ProviderEvent } from '../src/providers/provider.js';
import {
  assertRequestMatches,
  cassetteSteps,
  listCassettes,
  recordedFixturesDir,
  startWireServer,
  type Cassette,
  type WireServer,
} from './support/wire-server.js';
import {
  assistantMessageFrom,
  expectedResponse,
  recordedRequestToNeutral,
  type RecordedRequest,
} from './support/anthropic-recorded.js';

const anthropicDir = path.join(recordedFixturesDir, 'anthropic');
const present = existsSync(anthropicDir);
if (!present) console.warn(`conformance-anthropic: recorded cassettes not found at ${anthropicDir}; skipping the replay suite`);

const secretKey = 'sk-ant-api03-conformance-secret-DO-NOT-LEAK';
type FinishEvent = Extract<ProviderEvent, { type: 'finish' }>;

const servers: WireServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function collect(iterable: AsyncIterable<ProviderEvent>): Promise<ProviderEvent[]> {
  const events: ProviderEvent[] = [];
  for await (const event of iterable) events.push(event);
  return events;
}

const isStreamResponse = (headers: Record<string, string>) => (headers['content-type'] ?? '').includes('event-stream');

/** For a cassette without recorded requests: any small request will do, the server does not look. */
const placeholderRequest: RecordedRequest = {
  model: 'claude-placeholder',
  maxTokens: 1024,
  stream: false,
  messages: [{ role: 'user', content: 'Hello' }],
  tools: [],
  params: {},
};

/** Index of the assistant message in `body` that answers the previous request of `previousLength` wire messages. */
function neutralIndexOfReply(body: unknown, previousLength: number): number {
  const messages = (body as { messages: unknown[] }).messages;
  return recordedRequestToNeutral({ ...(body as object), messages: messages.slice(0, previousLength) }).messages.length;
}

/** Facts stated in each cassette's description, checked on top of the byte-level comparison. */
const statedFacts: Record<string, (finishes: FinishEvent[]) => void> = {
  'rubyllm-haiku-4.5-prompt-cache-write-then-read': ([write, read]) => {
    expect(write?.usage.cacheCreationInputTokens).toBe(7351);
    expect(write?.usage.cachedInputTokens).toBe(0);
    expect(read?.usage.cachedInputTokens).toBe(7351);
    expect(read?.usage.inputTokens).toBeGreaterThanOrEqual(7351);
  },
  'mirascope-ts-haiku-4.5-stop-sequence': ([finish]) => {
    expect(finish?.finishReason).toBe('stop');
    expect(finish?.rawFinishReason).toBe('stop_sequence');
  },
  'mirascope-ts-haiku-4.5-max-tokens': ([finish]) => expect(finish?.finishReason).toBe('length'),
  'mirascope-ts-haiku-4.5-stream-max-tokens': ([finish]) => {
    expect(finish?.finishReason).toBe('length');
    expect(finish?.rawFinishReason).toBe('max_tokens');
  },
  'vercel-sonnet-4.5-tool-no-args': ([finish]) => {
    expect(finish?.content.map((part) => part.type)).toEqual(['text', 'tool-call']);
    expect(finish?.content[1]).toMatchObject({ toolName: 'updateIssueList', argsText: '{}' });
    expect(finish?.finishReason).toBe('tool-calls');
  },
  'vercel-opus-3-tool-no-args': ([finish]) => {
    expect(finish?.content[1]).toMatchObject({ type: 'tool-call', toolName: 'updateIssueList', argsText: '{}' });
  },
  'vercel-haiku-4.5-tool-input-json-delta': ([finish]) => {
    const call = finish?.content[0];
    expect(call?.type).toBe('tool-call');
    if (call?.type === 'tool-call') expect(JSON.parse(call.argsText)).toEqual({ location: 'San Francisco' });
  },
  'rubyllm-haiku-4.5-thinking-streaming': ([finish]) => {
    expect(finish?.content.map((part) => part.type)).toEqual(['reasoning', 'text']);
    const reasoning = finish?.content[0];
    if (reasoning?.type === 'reasoning') expect(reasoning.signature?.length).toBeGreaterThan(100);
  },
  'pydanticai-sonnet-4.5-redacted-thinking': (finishes) => {
    for (const finish of finishes) expect(finish.content.map((part) => part.type)).toEqual(['redacted-reasoning', 'text']);
  },
  'fantasy-sonnet-4-multi-tool-streaming': ([first, second]) => {
    expect(first?.content.map((part) => part.type)).toEqual(['text', 'tool-call', 'tool-call']);
    expect(first?.content.slice(1).map((part) => (part.type === 'tool-call' ? part.toolName : ''))).toEqual(['add', 'multiply']);
    expect(second?.finishReason).toBe('stop');
  },
  'fantasy-sonnet-4-thinking-tool-streaming': ([first]) => {
    expect(first?.content.map((part) => part.type)).toEqual(['reasoning', 'tool-call']);
  },
  'rubyllm-haiku-4.5-parallel-tools': ([first]) => {
    expect(first?.content.map((part) => (part.type === 'tool-call' ? part.toolName : part.type))).toEqual(['weather', 'best_language_to_learn']);
  },
};

const expectedErrorCodes: Record<number, string> = { 400: 'bad_request', 401: 'authentication', 404: 'not_found' };

async function replay(cassette: Cassette): Promise<void> {
  const server = await startWireServer(cassetteSteps(cassette));
  servers.push(server);
  const streaming = isStreamResponse(cassette.interactions[0]!.response.headers) || (cassette.interactions[0]!.request.body as { stream?: unknown } | null)?.stream === true;
  const finishes: FinishEvent[] = [];

  for (const [index, interaction] of cassette.interactions.entries()) {
    const recorded = interaction.request.body === null ? placeholderRequest : recordedRequestToNeutral(interaction.request.body);
    let history: Message[] = recorded.messages;
    // Feed our own parsed previous response back in place of the recorded assistant message, so
    // the comparison below proves the round trip (thinking signatures included), not just the mapping.
    const previousFinish = finishes[index - 1];
    const previousBody = cassette.interactions[index - 1]?.request.body as { messages?: unknown[] } | null | undefined;
    const currentBody = interaction.request.body as { messages?: unknown[] } | null;
    const continues = (currentBody?.messages?.length ?? 0) > (previousBody?.messages?.length ?? Infinity);
    if (index > 0 && previousFinish && interaction.request.body !== null && previousBody?.messages && continues) {
      const replyIndex = neutralIndexOfReply(interaction.request.body, previousBody.messages.length);
      expect(history[replyIndex]?.role).toBe('assistant');
      history = [...history.slice(0, replyIndex), assistantMessageFrom(previousFinish.content), ...history.slice(replyIndex + 1)];
    }

    const provider = anthropicProvider({
      model: recorded.model,
      apiKey: secretKey,
      baseURL: server.url,
      maxTokens: recorded.maxTokens,
      stream: streaming,
      ...(recorded.thinking ? { thinking: recorded.thinking } : {}),
      params: recorded.params as AnthropicRequestParams,
    });
    const request = {
      ...(recorded.system === undefined ? {} : { system: recorded.system }),
      messages: history,
      tools: recorded.tools,
      signal: new AbortController().signal,
    };

    if (interaction.response.status >= 400) {
      const error = await collect(provider.stream(request)).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(ProviderError.isInstance(error), `${cassette.name}: expected a ProviderError`).toBe(true);
      if (!ProviderError.isInstance(error)) return;
      const body = JSON.parse(interaction.response.body) as { error: { message: string } };
      expect(error.status).toBe(interaction.response.status);
      expect(error.code).toBe(expectedErrorCodes[interaction.response.status]);
      expect(error.retryable).toBe(false);
      expect(error.message).toContain(body.error.message);
      expect(`${error.message} ${error.stack ?? ''}`).not.toContain(secretKey);
    } else {
      const events = await collect(provider.stream(request));
      const finish = events.at(-1);
      expect(finish?.type).toBe('finish');
      if (finish?.type !== 'finish') return;
      expect(events.filter((event) => event.type === 'finish')).toHaveLength(1);
      const expected = expectedResponse(interaction.response);
      expect(finish.content).toEqual(expected.content);
      expect(finish.rawFinishReason).toBe(expected.stopReason ?? undefined);
      expect(finish.finishReason).toBe(toAnthropicFinishReason(expected.stopReason));
      expect(finish.usage).toEqual(expected.usage);

      // Deltas are a faithful live view of the final content.
      const text = events.flatMap((event) => (event.type === 'text.delta' ? [event.delta] : [])).join('');
      expect(text).toBe(finish.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(''));
      const reasoning = events.flatMap((event) => (event.type === 'reasoning.delta' ? [event.delta] : [])).join('');
      expect(reasoning).toBe(finish.content.flatMap((part) => (part.type === 'reasoning' ? [part.text] : [])).join(''));
      for (const part of finish.content) {
        if (part.type !== 'tool-call') continue;
        const deltas = events.filter(
          (event): event is Extract<ProviderEvent, { type: 'tool.call.delta' }> => event.type === 'tool.call.delta' && event.toolCallId === part.toolCallId,
        );
        expect(deltas[0]?.name).toBe(part.toolName);
        expect(deltas.slice(1).every((delta) => delta.name === undefined)).toBe(true);
        const streamed = deltas.map((delta) => delta.argsDelta).join('');
        expect(streamed === '' ? '{}' : streamed).toBe(part.argsText);
      }
      finishes.push(finish);
    }

    const received = server.requests[index];
    expect(received?.path).toBe('/v1/messages');
    // SDK 1.x sends `Authorization: Bearer`, older ones `x-api-key`.
    expect([received?.headers['x-api-key'], received?.headers.authorization]).toContainEqual(expect.stringContaining(secretKey));
    const sent = received?.body as Record<string, unknown>;
    expect(sent.stream ?? false).toBe(streaming);
    if (interaction.request.body !== null) {
      assertRequestMatches(interaction.request, received);
      const recordedBody = interaction.request.body as Record<string, unknown>;
      expect(sent.max_tokens).toBe(recordedBody.max_tokens);
      expect(sent.thinking).toEqual(recordedBody.thinking);
      if (recordedBody.stop_sequences !== undefined) expect(sent.stop_sequences).toEqual(recordedBody.stop_sequences);
    }
  }
  expect(server.requests).toHaveLength(cassette.interactions.length);
  statedFacts[cassette.name]?.(finishes);
}

describe.skipIf(!present)('conformance: recorded Anthropic traffic through @anthropic-ai/sdk', () => {
  const cassettes = present ? listCassettes('anthropic') : [];

  test('the folder holds the cassettes this suite was written against', () => {
    expect(cassettes.length).toBeGreaterThanOrEqual(25);
    for (const name of Object.keys(statedFacts)) expect(cassettes.map((cassette) => cassette.name)).toContain(name);
  });

  for (const cassette of cassettes) {
    test(`${cassette.name}: ${cassette.description ?? ''}`, () => replay(cassette));
  }
});
