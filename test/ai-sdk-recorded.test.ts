import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createGoogleGenerativeAI as createGoogleGenerativeAIv2 } from '@ai-sdk/google-v2';
import { createMistral } from '@ai-sdk/mistral';
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine, defineTool, type Message, type Tool } from '../src/index.js';
import { aiSdkProvider } from '../src/providers/ai-sdk/index.js';
import { intendedVersion, recordedCassettes, replayedSpecification } from './support/ai-sdk-recorded.js';
import { expectValidHistory } from './support/run-conversation.js';
import { serveEachTest } from './support/serve-each-test.js';

type GeminiPart = {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  functionCall?: { name: string; args?: unknown };
  functionResponse?: { name: string; response?: unknown };
};
type GeminiBody = {
  contents: Array<{ role?: string; parts: GeminiPart[] }>;
  systemInstruction?: { parts: Array<{ text?: string }> };
  tools?: Array<{ functionDeclarations?: Array<{ name: string; description?: string; parameters?: Record<string, unknown> }> }>;
};
type Interaction = {
  request: { method: string; path: string; query?: string; body: GeminiBody };
  response: { status: number; headers: Record<string, string>; body: string };
};
type Cassette = { name: string; description?: string; interactions: Interaction[] };

const cassettes = recordedCassettes<Cassette>('google');

const streamed = cassettes.filter(
  (cassette) =>
    cassette.interactions.every((interaction) => interaction.response.status === 200) &&
    cassette.interactions[0]?.request.query === 'alt=sse',
);
const errors = cassettes.filter((cassette) => cassette.interactions.some((interaction) => interaction.response.status >= 400));

const serve = serveEachTest();

/** Gemini's OpenAPI-style schema (`"type": "STRING"`) as the JSON Schema a tool is defined with. */
function jsonSchemaOf(schema: unknown): Record<string, unknown> {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf) as never;
  if (typeof schema !== 'object' || schema === null) return schema as never;
  return Object.fromEntries(
    Object.entries(schema).map(([key, value]) => [
      key,
      key === 'type' && typeof value === 'string' ? value.toLowerCase() : jsonSchemaOf(value),
    ]),
  );
}

/** The parts of every chunk of a recorded answer (streamed SSE or one JSON body). */
function answerParts(body: string): GeminiPart[] {
  const chunks = body.includes('data:')
    ? body
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => JSON.parse(line.slice(5)) as { candidates?: Array<{ content?: { parts?: GeminiPart[] } }> })
    : [JSON.parse(body) as { candidates?: Array<{ content?: { parts?: GeminiPart[] } }> }];
  return chunks.flatMap((chunk) => chunk.candidates?.[0]?.content?.parts ?? []);
}

/** The tools of the first request, each answering as the recording's later requests show it did (in order). */
function recordedTools(cassette: Cassette): Tool[] {
  const answers = new Map<string, unknown[]>();
  for (const interaction of cassette.interactions.slice(1)) {
    const last = interaction.request.body.contents.at(-1);
    for (const part of last?.parts ?? []) {
      if (!part.functionResponse) continue;
      const queue = answers.get(part.functionResponse.name) ?? [];
      queue.push(part.functionResponse.response);
      answers.set(part.functionResponse.name, queue);
    }
  }
  const declarations = cassette.interactions[0]?.request.body.tools?.flatMap((tool) => tool.functionDeclarations ?? []) ?? [];
  return declarations.map((declaration) =>
    defineTool({
      name: declaration.name,
      description: declaration.description ?? declaration.name,
      parameters: jsonSchemaOf(declaration.parameters ?? { type: 'object', properties: {} }),
      execute: () => answers.get(declaration.name)?.shift() ?? 'no recorded answer',
    }),
  );
}

/**
 * The package at ai 6's version (specification v3; ai 7's, v4, on the run with the newest majors:
 * test/ai-sdk-recorded-versions.test.ts) and at ai 5's (v2): the same recordings through both.
 */
const googlePackages = [
  [`@ai-sdk/google ${intendedVersion('@ai-sdk/google')} (specification ${replayedSpecification})`, createGoogleGenerativeAI],
  ['@ai-sdk/google 2 (specification v2)', createGoogleGenerativeAIv2],
] as const;

describe.each(googlePackages)('recorded Gemini traffic through aiSdkProvider(%s)', (_label, createGoogle) => {
  it('holds streamed conversations and errors to replay', () => {
    expect(streamed.length).toBeGreaterThanOrEqual(4);
    expect(errors.length).toBeGreaterThanOrEqual(2);
  });

  for (const cassette of streamed) {
    it(`${cassette.name}: runs to the recorded answer; every thought signature goes back byte for byte`, async () => {
      const server = await serve(cassette.interactions.map((interaction) => interaction.response));
      const first = cassette.interactions[0]!.request;
      const modelId = /models\/([^:]+):/.exec(first.path)?.[1] ?? 'gemini-2.5-flash';
      const model = createGoogle({ apiKey: 'recorded', baseURL: `${server.url}/v1beta` })(modelId);
      const system = first.body.systemInstruction?.parts.map((part) => part.text ?? '').join('') || undefined;
      const machine = createConversationMachine({
        provider: aiSdkProvider(model),
        tools: recordedTools(cassette),
        retry: false,
        maxToolIterations: cassette.interactions.length + 1,
        ...(system ? { system } : {}),
      });
      const actor = createActor(machine, { input: {} }).start();
      const question = first.body.contents[0]?.parts.map((part) => part.text ?? '').join('') ?? '';
      actor.send({ type: 'user.message', content: question });
      const output = await toPromise(actor);
      expect(output.status, JSON.stringify(output.error)).toBe('done');
      expect(server.requests).toHaveLength(cassette.interactions.length);
      const last = cassette.interactions.at(-1)!;
      const answer = answerParts(last.response.body)
        .filter((part) => part.text !== undefined && part.thought !== true)
        .map((part) => part.text)
        .join('');
      expect(output.text.trim()).toBe(answer.trim());
      expectValidHistory(output.messages);
      // Each signature the model sent goes out again in every later request, exactly as it came.
      cassette.interactions.slice(0, -1).forEach((interaction, index) => {
        for (const part of answerParts(interaction.response.body)) {
          if (!part.thoughtSignature) continue;
          for (const later of server.requests.slice(index + 1)) expect(later.rawBody).toContain(JSON.stringify(part.thoughtSignature));
        }
      });
    });
  }

  for (const cassette of errors) {
    it(`${cassette.name}: the recorded error ends the run, classified`, async () => {
      const interaction = cassette.interactions.find((each) => each.response.status >= 400)!;
      const server = await serve([interaction.response]);
      const modelId = /models\/([^:]+):/.exec(interaction.request.path)?.[1] ?? 'gemini-2.5-flash';
      const model = createGoogle({ apiKey: 'recorded', baseURL: `${server.url}/v1beta` })(modelId);
      const actor = createActor(createConversationMachine({ provider: aiSdkProvider(model), retry: false }), { input: {} }).start();
      actor.send({ type: 'user.message', content: 'hi' });
      const output = await toPromise(actor);
      expect(output.status).toBe('error');
      const status = interaction.response.status;
      expect(output.error).toMatchObject({
        status,
        retryable: status === 429,
        code: status === 429 ? 'rate_limit' : status === 404 ? 'not_found' : 'bad_request',
      });
    });
  }
});

type ChatMessage = { role: string; content?: string | null; tool_calls?: Array<{ function: { name: string } }>; tool_call_id?: string };
type ChatInteraction = {
  request: {
    body: {
      messages: ChatMessage[];
      stream?: boolean;
      tools?: Array<{ function: { name: string; description?: string; parameters?: Record<string, unknown> } }>;
    };
  };
  response: { status: number; headers: Record<string, string>; body: string };
};
type ChatCassette = { name: string; interactions: ChatInteraction[] };

const mistralCassettes = recordedCassettes<ChatCassette>('mistral');

/** The answer text of a recorded Chat Completions stream: string deltas, and Mistral's `text` items of content arrays (not its thinking). */
const streamedText = (body: string) =>
  body
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice(6)) as { choices: Array<{ delta?: { content?: unknown } }> })
    .map((chunk) => {
      const content = chunk.choices[0]?.delta?.content;
      if (typeof content === 'string') return content;
      if (!Array.isArray(content)) return '';
      return content.map((item: { type?: string; text?: string }) => (item.type === 'text' ? (item.text ?? '') : '')).join('');
    })
    .join('');

describe(`recorded Mistral traffic through aiSdkProvider(@ai-sdk/mistral ${intendedVersion('@ai-sdk/mistral')})`, () => {
  const streamedChats = mistralCassettes.filter((cassette) =>
    cassette.interactions.every((interaction) => interaction.request.body?.stream === true),
  );

  for (const cassette of streamedChats) {
    it(`${cassette.name}: each user turn runs to its recorded answer, the tools answering as recorded`, async () => {
      const server = await serve(cassette.interactions.map((interaction) => interaction.response));
      const model = createMistral({ apiKey: 'recorded', baseURL: `${server.url}/v1` })('mistral-small-latest');
      const all = cassette.interactions.map((interaction) => interaction.request.body.messages);
      const last = all.at(-1) ?? [];
      const results = last.filter((message) => message.role === 'tool').map((message) => message.content ?? '');
      const tools = (cassette.interactions[0]?.request.body.tools ?? []).map((tool) =>
        defineTool({
          name: tool.function.name,
          description: tool.function.description ?? tool.function.name,
          parameters: tool.function.parameters ?? { type: 'object', properties: {} },
          execute: () => results.shift() ?? 'no recorded answer',
        }),
      );
      const machine = createConversationMachine({ provider: aiSdkProvider(model), tools, retry: false });
      // The user turns in the order the recording asked them; the answer to each is the response before the next.
      const questions = last.filter((message) => message.role === 'user').map((message) => message.content ?? '');
      let history: Message[] = [];
      let sent = 0;
      for (const question of questions) {
        const actor = createActor(machine, { input: { messages: history } }).start();
        actor.send({ type: 'user.message', content: question });
        const output = await toPromise(actor);
        expect(output.status, JSON.stringify(output.error)).toBe('done');
        sent = server.requests.length;
        expect(output.text).toBe(streamedText(cassette.interactions[sent - 1]!.response.body));
        history = output.messages;
      }
      expect(sent).toBe(cassette.interactions.length);
      expectValidHistory(history);
    });
  }

  it('the recorded 401 is an authentication error, not retried', async () => {
    const cassette = mistralCassettes.find((each) => each.interactions.some((interaction) => interaction.response.status === 401))!;
    const server = await serve([cassette.interactions[0]!.response]);
    const model = createMistral({ apiKey: 'recorded', baseURL: `${server.url}/v1` })('mistral-small-latest');
    const actor = createActor(createConversationMachine({ provider: aiSdkProvider(model) }), { input: {} }).start();
    actor.send({ type: 'user.message', content: 'hi' });
    expect(await toPromise(actor)).toMatchObject({ status: 'error', error: { status: 401, code: 'authentication', retryable: false } });
    expect(server.requests).toHaveLength(1);
  });
});
