import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine, defineTool, type Message, type Tool } from '../src/index.js';
import { type AiSdkProviderOptions, aiSdkProvider } from '../src/providers/ai-sdk/index.js';
import { generatedAsStream, recordedCassettes } from './support/ai-sdk-recorded.js';
import { expectValidHistory } from './support/run-conversation.js';
import { serveEachTest } from './support/serve-each-test.js';

type ChatMessage = {
  role: string;
  content?: string | null;
  reasoning_content?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
};
type ChatBody = {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  reasoning_effort?: string;
  tools?: Array<{ function: { name: string; description?: string; parameters?: Record<string, unknown> } }>;
};
type Response = { status: number; headers: Record<string, string>; body: string };
type Cassette = { name: string; vendor: string; interactions: Array<{ request: { path: string; body: ChatBody }; response: Response }> };

const cassettes: Cassette[] = ['deepseek', 'zai'].flatMap((vendor) =>
  recordedCassettes<Omit<Cassette, 'vendor'>>(vendor, { prefixed: true }).map((cassette) => ({ ...cassette, vendor })),
);
const conversations = cassettes.filter((cassette) => cassette.interactions.every((interaction) => interaction.response.status === 200));
const errors = cassettes.filter((cassette) => cassette.interactions.some((interaction) => interaction.response.status >= 400));

const serve = serveEachTest();

type Choice = { delta?: ChatMessage; message?: ChatMessage };
type ChatUsage = {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number };
  completion_tokens_details?: { reasoning_tokens?: number };
};
type Chunk = { choices: Choice[]; usage?: ChatUsage | null };

/** The answer of a recorded response, streamed or not: its text, its `reasoning_content`, its usage. */
function answerOf(response: Response): { text: string; reasoning: string; usage?: ChatUsage } {
  const chunks: Chunk[] = response.headers['content-type']?.includes('text/event-stream')
    ? response.body
        .split('\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => JSON.parse(line.slice(6)) as Chunk)
    : [JSON.parse(response.body) as Chunk];
  const messages = chunks.flatMap((chunk) => chunk.choices).map((choice) => choice.delta ?? choice.message ?? { role: '' });
  const usage = chunks.findLast((chunk) => chunk.usage)?.usage ?? undefined;
  return {
    text: messages.map((message) => message.content ?? '').join(''),
    reasoning: messages.map((message) => message.reasoning_content ?? '').join(''),
    ...(usage ? { usage } : {}),
  };
}

/** The usage a run of these recorded responses adds up to, in actorloop's terms (cached tokens are part of the input). */
function usageOf(responses: Response[]) {
  const usages = responses.map((response) => answerOf(response).usage!);
  const sum = (count: (usage: ChatUsage) => number | undefined) => usages.reduce((total, usage) => total + (count(usage) ?? 0), 0);
  const cached = sum((usage) => usage.prompt_tokens_details?.cached_tokens);
  const reasoning = sum((usage) => usage.completion_tokens_details?.reasoning_tokens);
  return {
    inputTokens: sum((usage) => usage.prompt_tokens),
    outputTokens: sum((usage) => usage.completion_tokens),
    ...(cached ? { cachedInputTokens: cached } : {}),
    ...(reasoning ? { reasoningTokens: reasoning } : {}),
  };
}

/**
 * A request's conversation as both clients must agree on it: per message its role, text (trimmed;
 * an assistant turn with only calls is `""` from one client and `null` from another), reasoning
 * exactly, tool calls (id, name, parsed arguments) and the result's call id. Fields a client adds of
 * its own (ruby_llm's copy of the reasoning under `reasoning`) are left out.
 */
function conversationOf(body: ChatBody) {
  return body.messages.map((message) => ({
    role: message.role,
    text: (message.content ?? '').trim(),
    ...(message.reasoning_content ? { reasoning: message.reasoning_content } : {}),
    calls: (message.tool_calls ?? []).map((call) => ({ id: call.id, name: call.function.name, args: JSON.parse(call.function.arguments) })),
    ...(message.tool_call_id ? { result: message.tool_call_id } : {}),
  }));
}

/** The tools of the first request, each answering with what the recording's last request sent back for it, in order. */
function recordedTools(cassette: Cassette): Tool[] {
  const messages = cassette.interactions.at(-1)!.request.body.messages;
  const names = new Map(messages.flatMap((message) => message.tool_calls ?? []).map((call) => [call.id, call.function.name]));
  const answers = new Map<string, string[]>();
  for (const message of messages) {
    if (message.role !== 'tool') continue;
    const name = names.get(message.tool_call_id ?? '') ?? '';
    answers.set(name, [...(answers.get(name) ?? []), message.content ?? '']);
  }
  return (cassette.interactions[0]!.request.body.tools ?? []).map(({ function: declared }) =>
    defineTool({
      name: declared.name,
      description: declared.description ?? declared.name,
      parameters: declared.parameters ?? { type: 'object', properties: {} },
      execute: () => answers.get(declared.name)?.shift() ?? 'no recorded answer',
    }),
  );
}

/** The vendor's model at the recorded path, streamed when the recording streamed, with the recorded reasoning effort. */
function compatibleProvider(cassette: Cassette, url: string, request: { path: string; body: ChatBody }) {
  const baseURL = url + request.path.replace(/\/chat\/completions$/, '');
  const model = createOpenAICompatible({
    baseURL,
    name: cassette.vendor,
    apiKey: 'recorded',
    includeUsage: request.body.stream_options?.include_usage === true,
  })(request.body.model);
  const options: AiSdkProviderOptions = request.body.reasoning_effort
    ? { providerOptions: { [cassette.vendor]: { reasoningEffort: request.body.reasoning_effort } } }
    : {};
  return aiSdkProvider(request.body.stream === true ? model : generatedAsStream(model), options);
}

describe('recorded OpenAI-compatible traffic through aiSdkProvider(@ai-sdk/openai-compatible)', () => {
  it('holds a streamed tool loop with reasoning, a streamed tool loop, reasoning across turns, and errors to replay', () => {
    const streamed = conversations.filter((cassette) => cassette.interactions[0]!.request.body.stream === true);
    expect(streamed.map((cassette) => cassette.name)).toEqual([
      'deepseek/rubyllm-deepseek-chat-tools-multiturn-streaming',
      'zai/fantasy-glm-4.7-flash-thinking-tool-streaming',
    ]);
    const reasoned = conversations.filter((cassette) => cassette.interactions.some(({ response }) => answerOf(response).reasoning !== ''));
    expect(reasoned).toHaveLength(2);
    expect(errors).toHaveLength(2);
  });

  for (const cassette of conversations) {
    it(`${cassette.name}: every user turn runs to its recorded answer; each request carries the recorded conversation, reasoning included`, async () => {
      const first = cassette.interactions[0]!.request;
      const server = await serve(cassette.interactions.map((interaction) => interaction.response));
      const system = first.body.messages.find((message) => message.role === 'system')?.content ?? undefined;
      const machine = createConversationMachine({
        provider: compatibleProvider(cassette, server.url, first),
        tools: recordedTools(cassette),
        retry: false,
        ...(system ? { system } : {}),
      });
      const questions = cassette.interactions.at(-1)!.request.body.messages.filter((message) => message.role === 'user');
      let history: Message[] = [];
      for (const question of questions) {
        const before = server.requests.length;
        const actor = createActor(machine, { input: { messages: history } }).start();
        actor.send({ type: 'user.message', content: question.content ?? '' });
        const output = await toPromise(actor);
        expect(output.status, JSON.stringify(output.error)).toBe('done');
        const answered = cassette.interactions.slice(before, server.requests.length).map((interaction) => interaction.response);
        expect(output.text).toBe(answerOf(answered.at(-1)!).text);
        // The run's usage is the recorded one, cache reads and reasoning tokens included.
        expect(output.usage).toMatchObject(usageOf(answered));
        history = output.messages;
      }
      expect(server.requests).toHaveLength(cassette.interactions.length);
      expectValidHistory(history);
      cassette.interactions.forEach((interaction, index) => {
        const sent = server.requests[index]!;
        expect(sent.path).toBe(interaction.request.path);
        expect(sent.headers.authorization).toBe('Bearer recorded');
        expect(conversationOf(sent.body as ChatBody)).toEqual(conversationOf(interaction.request.body));
      });
    });
  }

  for (const cassette of errors) {
    it(`${cassette.name}: the recorded error ends the run, classified, not retried`, async () => {
      const interaction = cassette.interactions[0]!;
      const server = await serve([interaction.response]);
      const actor = createActor(createConversationMachine({ provider: compatibleProvider(cassette, server.url, interaction.request) }), {
        input: {},
      }).start();
      actor.send({ type: 'user.message', content: 'Hello' });
      const output = await toPromise(actor);
      const status = interaction.response.status;
      // DeepSeek's context-length 400 comes as `application/octet-stream`: the body is read as JSON all the same.
      expect(output).toMatchObject({
        status: 'error',
        error: { status, retryable: false, code: status === 401 ? 'authentication' : 'context_length' },
      });
      expect(server.requests).toHaveLength(1);
    });
  }
});
