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
import { fetchOption, replayTransports, type TransportCase } from './support/transports.js';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import type { RunOutput } from '../src/machines/names/types.js';
import { defineTool } from '../src/tools/define-tool.js';
import type { JSONSchema } from '../src/tools/validate.js';
import { addUsage, emptyUsage } from '../src/model/usage.js';
import { anthropicProvider } from '../src/providers/anthropic/index.js';
import type { AnthropicRequestParams } from '../src/providers/anthropic/index.js';
import { fromAnthropicStopReason } from '../src/providers/anthropic/index.js';
import { ProviderError } from '../src/model/errors/provider-error.js';
import type { Message } from '../src/model/messages.js';
import type { ProviderEvent } from '../src/model/provider.js';
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
  blockText,
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
    expect(first?.content.map((part) => (part.type === 'tool-call' ? part.toolName : part.type))).toEqual([
      'weather',
      'best_language_to_learn',
    ]);
  },
};

const expectedErrorCodes: Record<number, string> = { 400: 'bad_request', 401: 'authentication', 404: 'not_found' };

async function replay(cassette: Cassette): Promise<void> {
  const server = await startWireServer(cassetteSteps(cassette));
  servers.push(server);
  const streaming =
    isStreamResponse(cassette.interactions[0]!.response.headers) ||
    (cassette.interactions[0]!.request.body as { stream?: unknown } | null)?.stream === true;
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
      // A prompt over the context window is a 400 of its own kind: compacting, not retrying, helps.
      const contextLength = body.error.message.startsWith('prompt is too long');
      expect(error.code).toBe(contextLength ? 'context_length' : expectedErrorCodes[interaction.response.status]);
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
      expect(finish.finishReason).toBe(fromAnthropicStopReason(expected.stopReason));
      expect(finish.usage).toEqual(expected.usage);

      // Deltas are a faithful live view of the final content.
      const text = events.flatMap((event) => (event.type === 'text.delta' ? [event.delta] : [])).join('');
      expect(text).toBe(finish.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(''));
      const reasoning = events.flatMap((event) => (event.type === 'reasoning.delta' ? [event.delta] : [])).join('');
      expect(reasoning).toBe(finish.content.flatMap((part) => (part.type === 'reasoning' ? [part.text] : [])).join(''));
      for (const part of finish.content) {
        if (part.type !== 'tool-call') continue;
        const deltas = events.filter(
          (event): event is Extract<ProviderEvent, { type: 'tool.call.delta' }> =>
            event.type === 'tool.call.delta' && event.toolCallId === part.toolCallId,
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

// ---------------------------------------------------------------------------------------------
// Whole conversations: every recorded multi-request Anthropic exchange replayed as actorloop runs.

type Json = Record<string, unknown>;
type WireMessage = { role: string; content: unknown };

/** A recorded request that starts a run: its last message is the user's, not tool results. */
function startsRun(body: Json): boolean {
  const last = (body.messages as WireMessage[]).at(-1);
  if (last?.role !== 'user') return false;
  return typeof last.content === 'string' || !(last.content as Json[]).some((block) => block.type === 'tool_result');
}

/**
 * actorloop reports a thrown tool error to the model as `Error: <message>`, where the recording's
 * client sent the bare message: the expected request carries the prefix, nothing else changes.
 */
function withActorloopErrorText(body: Json): Json {
  const messages = (body.messages as WireMessage[]).map((message) => {
    if (!Array.isArray(message.content)) return message;
    return {
      ...message,
      content: (message.content as Json[]).map((block) =>
        block.type === 'tool_result' && block.is_error === true ? { ...block, content: `Error: ${blockText(block.content)}` } : block,
      ),
    };
  });
  return { ...body, messages };
}

const conversationCassettes = (present ? listCassettes('anthropic') : []).filter(
  (cassette) =>
    cassette.interactions.length >= 2 &&
    cassette.interactions.every((interaction) => interaction.request.body !== null && interaction.response.status === 200),
);

const transports = replayTransports();

async function replayConversation(cassette: Cassette, transport: TransportCase): Promise<void> {
  const server = await startWireServer(cassetteSteps(cassette));
  servers.push(server);
  const bodies = cassette.interactions.map((interaction) => interaction.request.body as Json);
  const first = recordedRequestToNeutral(bodies[0]);
  const streaming = isStreamResponse(cassette.interactions[0]!.response.headers);

  // What each tool call returned in the recording, read from the follow-up requests.
  const recordedResults = new Map<string, { text: string; isError: boolean }>();
  for (const body of bodies) {
    for (const message of body.messages as WireMessage[]) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content as Json[]) {
        if (block.type === 'tool_result')
          recordedResults.set(String(block.tool_use_id), { text: blockText(block.content), isError: block.is_error === true });
      }
    }
  }
  const tools = first.tools.map((tool) =>
    defineTool({
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema as JSONSchema,
      execute: (_args, { toolCallId }) => {
        const recorded = recordedResults.get(toolCallId);
        if (!recorded) throw new Error(`no recorded result for ${toolCallId}`);
        if (recorded.isError) throw new Error(recorded.text);
        return recorded.text;
      },
    }),
  );
  const machine = createConversationMachine({
    provider: anthropicProvider({
      model: first.model,
      apiKey: secretKey,
      baseURL: server.url,
      ...fetchOption(transport),
      maxTokens: first.maxTokens,
      stream: streaming,
      ...(first.thinking ? { thinking: first.thinking } : {}),
      params: first.params as AnthropicRequestParams,
    }),
    tools,
    ...(first.system === undefined ? {} : { system: first.system }),
    retry: false,
  });

  // Split the recorded requests into runs: each starts with a user message.
  const runs: number[][] = [];
  bodies.forEach((body, index) => {
    if (startsRun(body) || runs.length === 0) runs.push([index]);
    else runs.at(-1)!.push(index);
  });

  let previous: RunOutput | undefined;
  for (const run of runs) {
    const startBody = bodies[run[0]!]!;
    const wireMessages = startBody.messages as WireMessage[];
    const prefix = recordedRequestToNeutral({ ...startBody, messages: wireMessages.slice(0, -1) }).messages;
    // Continue from our own previous output when the recording continues the same conversation.
    const history = previous && prefix.length > 0 ? previous.messages : prefix;
    const userText = blockText(wireMessages.at(-1)!.content);

    const actor = createActor(machine, { input: { messages: history } });
    const toolCalls: Array<{ toolCallId: string; name: string; args: unknown }> = [];
    actor.on('tool.call', (event) => toolCalls.push({ toolCallId: event.toolCallId, name: event.name, args: event.args }));
    actor.start();
    actor.send({ type: 'user.message', content: userText });
    const output = await toPromise(actor);

    const responses = run.map((index) => expectedResponse(cassette.interactions[index]!.response));
    const last = responses.at(-1)!;
    expect(output.error, `${cassette.name}: run ended with ${JSON.stringify(output.error)}`).toBeUndefined();
    expect(output.status).toBe('done');
    expect(output.text).toBe(last.content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join(''));
    expect(output.finishReason).toBe(fromAnthropicStopReason(last.stopReason));
    expect(output.iterations).toBe(responses.filter((response) => response.content.some((part) => part.type === 'tool-call')).length);
    expect(toolCalls).toEqual(
      responses.flatMap((response) =>
        response.content.flatMap((part) =>
          part.type === 'tool-call'
            ? [{ toolCallId: part.toolCallId, name: part.toolName, args: JSON.parse(part.argsText) as unknown }]
            : [],
        ),
      ),
    );
    expect(output.usage).toEqual(responses.reduce((total, response) => addUsage(total, response.usage), emptyUsage()));
    previous = output;
  }

  expect(server.requests).toHaveLength(cassette.interactions.length);
  for (const [index, body] of bodies.entries()) {
    const received = server.requests[index]!;
    assertRequestMatches(withActorloopErrorText(body), received);
    // Every signed thinking block of the previous response went back byte-for-byte.
    const previousResponse = index > 0 ? expectedResponse(cassette.interactions[index - 1]!.response) : undefined;
    if (previousResponse && (body.messages as unknown[]).length > (bodies[index - 1]!.messages as unknown[]).length) {
      for (const part of previousResponse.content) {
        if (part.type === 'reasoning') {
          expect(received.rawBody).toContain(JSON.stringify(part.signature));
          expect(received.rawBody).toContain(JSON.stringify(part.text));
        }
        if (part.type === 'redacted-reasoning') expect(received.rawBody).toContain(JSON.stringify(part.data));
      }
    }
  }
}

describe.skipIf(!present)('conformance: recorded Anthropic conversations as whole actorloop runs', () => {
  test('the multi-request cassettes are all here', () => {
    expect(conversationCassettes.map((cassette) => cassette.name)).toEqual(
      expect.arrayContaining([
        'fantasy-sonnet-4-multi-tool-streaming',
        'fantasy-sonnet-4-multi-tool',
        'fantasy-sonnet-4-thinking-tool-streaming',
        'fantasy-sonnet-4-thinking-tool',
        'mirascope-ts-haiku-4.5-tool-loop',
        'pydanticai-sonnet-4-tool-with-thinking',
        'pydanticai-sonnet-4.5-redacted-thinking',
        'rubyllm-haiku-4.5-parallel-tools',
        'rubyllm-haiku-4.5-tools-multiturn-streaming',
      ]),
    );
  });

  for (const cassette of conversationCassettes)
    for (const transport of transports) {
      test(`${cassette.name} (${cassette.interactions.length} requests, ${transport.name})`, () => replayConversation(cassette, transport));
    }
});
