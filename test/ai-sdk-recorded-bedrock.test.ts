import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine, defineTool, type Message, type Tool } from '../src/index.js';
import { type AiSdkProviderOptions, aiSdkProvider } from '../src/providers/ai-sdk/index.js';
import { generatedAsStream, recordedCassettes } from './support/ai-sdk-recorded.js';
import { expectValidHistory } from './support/run-conversation.js';
import { serveEachTest } from './support/serve-each-test.js';

type Block = {
  text?: string;
  toolUse?: { toolUseId: string; name: string; input: unknown };
  toolResult?: { toolUseId: string; content: Array<{ text?: string }> };
  reasoningContent?: { reasoningText?: { text: string; signature?: string }; redactedReasoning?: { data: string } };
};
type ConverseBody = {
  messages: Array<{ role: string; content: Block[] }>;
  system?: Array<{ text?: string }>;
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number };
  toolConfig?: { tools: Array<{ toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } } }> };
  additionalModelRequestFields?: Record<string, { type?: string; budget_tokens?: number } | undefined>;
};
type Response = { status: number; headers: Record<string, string>; body: string; bodyEncoding?: 'base64' };
type Cassette = { name: string; interactions: Array<{ request: { path: string; body: ConverseBody }; response: Response }> };

const cassettes = recordedCassettes<Cassette>('bedrock');
const conversations = cassettes.filter((cassette) => cassette.interactions.every((interaction) => interaction.response.status === 200));
const errors = cassettes.filter((cassette) => cassette.interactions.some((interaction) => interaction.response.status >= 400));

const serve = serveEachTest();

/** The JSON payloads of a recorded AWS event stream (prelude: total length, headers length, CRC; then headers, payload, CRC). */
function eventPayloads(base64: string): Array<Record<string, unknown>> {
  const bytes = Buffer.from(base64, 'base64');
  const payloads: Array<Record<string, unknown>> = [];
  for (let start = 0; start < bytes.length; ) {
    const total = bytes.readUInt32BE(start);
    const headers = bytes.readUInt32BE(start + 4);
    payloads.push(JSON.parse(bytes.subarray(start + 12 + headers, start + total - 4).toString('utf8')) as Record<string, unknown>);
    start += total;
  }
  return payloads;
}

type ConverseUsage = { inputTokens: number; outputTokens: number; cacheReadInputTokens?: number; cacheWriteInputTokens?: number };

/** The answer of a recorded response: its text, its reasoning blocks as the next request must carry them, its usage. */
function answerOf(response: Response): { text: string; reasoning: Block['reasoningContent'][]; usage: ConverseUsage } {
  if (response.bodyEncoding !== 'base64') {
    const body = JSON.parse(response.body) as { output: { message: { content: Block[] } }; usage: ConverseUsage };
    const content = body.output.message.content;
    return {
      text: content.map((block) => block.text ?? '').join(''),
      reasoning: content.filter((block) => block.reasoningContent).map((block) => block.reasoningContent),
      usage: body.usage,
    };
  }
  let text = '';
  let thought = '';
  let signature = '';
  let usage: ConverseUsage = { inputTokens: 0, outputTokens: 0 };
  for (const payload of eventPayloads(response.body)) {
    const delta = payload.delta as { text?: string; reasoningContent?: { text?: string; signature?: string } } | undefined;
    text += delta?.text ?? '';
    thought += delta?.reasoningContent?.text ?? '';
    signature += delta?.reasoningContent?.signature ?? '';
    if (payload.usage) usage = payload.usage as ConverseUsage;
  }
  return { text, reasoning: thought || signature ? [{ reasoningText: { text: thought, signature } }] : [], usage };
}

/** What a run of these recorded responses adds up to, in actorloop's terms: input counts cache reads and writes. */
function usageOf(responses: Response[]) {
  const usages = responses.map((response) => answerOf(response).usage);
  const sum = (count: (usage: ConverseUsage) => number | undefined) => usages.reduce((total, usage) => total + (count(usage) ?? 0), 0);
  return {
    inputTokens: sum((usage) => usage.inputTokens + (usage.cacheReadInputTokens ?? 0) + (usage.cacheWriteInputTokens ?? 0)),
    outputTokens: sum((usage) => usage.outputTokens),
  };
}

/**
 * A request's conversation, as both clients must agree on it: system text, then per message its
 * role and blocks — text (trimmed: clients differ on a trailing newline), tool calls, tool results,
 * and reasoning exactly. Fields one client sets its own way (`toolResult.status`, Claude's
 * `toolUse.type`) are left out.
 */
function conversationOf(body: ConverseBody) {
  return {
    system: (body.system ?? []).map((part) => part.text ?? '').join(''),
    messages: body.messages.map((message) => ({
      role: message.role,
      blocks: message.content.map((block) => {
        if (block.toolUse) return { toolUse: { toolUseId: block.toolUse.toolUseId, name: block.toolUse.name, input: block.toolUse.input } };
        if (block.toolResult) return { toolResult: { toolUseId: block.toolResult.toolUseId, content: block.toolResult.content } };
        if (block.reasoningContent) return { reasoningContent: block.reasoningContent };
        return { text: (block.text ?? '').trim() };
      }),
    })),
  };
}

/** The tools of the first request, each answering with the results the recording's last request sent back for it, in order. */
function recordedTools(cassette: Cassette): Tool[] {
  const messages = cassette.interactions.at(-1)!.request.body.messages;
  const names = new Map<string, string>();
  for (const block of messages.flatMap((message) => message.content))
    if (block.toolUse) names.set(block.toolUse.toolUseId, block.toolUse.name);
  const answers = new Map<string, string[]>();
  for (const block of messages.flatMap((message) => message.content)) {
    if (!block.toolResult) continue;
    const name = names.get(block.toolResult.toolUseId) ?? '';
    answers.set(name, [...(answers.get(name) ?? []), block.toolResult.content.map((part) => part.text ?? '').join('')]);
  }
  return (cassette.interactions[0]!.request.body.toolConfig?.tools ?? []).map(({ toolSpec }) =>
    defineTool({
      name: toolSpec.name,
      description: toolSpec.description ?? toolSpec.name,
      parameters: toolSpec.inputSchema.json,
      execute: () => answers.get(toolSpec.name)?.shift() ?? 'no recorded answer',
    }),
  );
}

/** The model, over `/converse-stream` as recorded, or `/converse` (the package's doGenerate) when the recording did not stream. */
function bedrockModel(baseURL: string, path: string) {
  const modelId = decodeURIComponent(/\/model\/(.+)\/converse/.exec(path)![1]!);
  const model = createAmazonBedrock({ baseURL, region: 'us-east-1', accessKeyId: 'AKIDRECORDED', secretAccessKey: 'recorded' })(modelId);
  return path.endsWith('/converse-stream') ? model : generatedAsStream(model);
}

/** The recorded request's sampling and thinking settings, as the package's call options. */
function settingsOf(body: ConverseBody): AiSdkProviderOptions {
  const thinking = body.additionalModelRequestFields?.thinking ?? body.additionalModelRequestFields?.reasoning_config;
  const { maxTokens, temperature, topP } = body.inferenceConfig ?? {};
  return {
    ...(maxTokens === undefined ? {} : { maxOutputTokens: maxTokens }),
    ...(temperature === undefined ? {} : { temperature }),
    ...(topP === undefined ? {} : { topP }),
    ...(thinking?.budget_tokens
      ? { providerOptions: { bedrock: { reasoningConfig: { type: 'enabled', budgetTokens: thinking.budget_tokens } } } }
      : {}),
  };
}

describe('recorded Bedrock Converse traffic through aiSdkProvider(@ai-sdk/amazon-bedrock)', () => {
  it('holds streamed and non-streamed conversations, reasoning with signatures, and errors to replay', () => {
    const paths = conversations.map((cassette) => cassette.interactions[0]!.request.path);
    expect(paths.filter((path) => path.endsWith('/converse-stream')).length).toBeGreaterThanOrEqual(2);
    expect(paths.filter((path) => path.endsWith('/converse')).length).toBeGreaterThanOrEqual(2);
    expect(
      conversations.filter((cassette) => cassette.interactions.some(({ response }) => answerOf(response).reasoning.length > 0)),
    ).toHaveLength(2);
    expect(errors.length).toBeGreaterThanOrEqual(2);
  });

  for (const cassette of conversations) {
    it(`${cassette.name}: every user turn runs to its recorded answer; each request carries the recorded conversation, signatures byte for byte`, async () => {
      const first = cassette.interactions[0]!.request;
      const server = await serve([
        ...cassette.interactions.map((interaction) => interaction.response),
        // A next turn nothing recorded answers: only the request it sends matters.
        (_request, control) => {
          control.socket.destroy();
        },
      ]);
      const system = conversationOf(first.body).system || undefined;
      const machine = createConversationMachine({
        provider: aiSdkProvider(bedrockModel(server.url, first.path), settingsOf(first.body)),
        tools: recordedTools(cassette),
        retry: false,
        ...(system ? { system } : {}),
      });
      const last = cassette.interactions.at(-1)!.request.body.messages;
      const questions = last.filter((message) => message.role === 'user' && message.content.some((block) => block.text !== undefined));
      let history: Message[] = [];
      for (const question of questions) {
        const before = server.requests.length;
        const actor = createActor(machine, { input: { messages: history } }).start();
        actor.send({ type: 'user.message', content: question.content.map((block) => block.text ?? '').join('') });
        const output = await toPromise(actor);
        expect(output.status, JSON.stringify(output.error)).toBe('done');
        const answered = cassette.interactions.slice(before, server.requests.length).map((interaction) => interaction.response);
        expect(output.text).toBe(answerOf(answered.at(-1)!).text);
        expect(output.usage).toMatchObject(usageOf(answered));
        history = output.messages;
      }
      expect(server.requests).toHaveLength(cassette.interactions.length);
      expectValidHistory(history);
      cassette.interactions.forEach((interaction, index) => {
        const sent = server.requests[index]!;
        expect(decodeURIComponent(sent.path)).toBe(decodeURIComponent(interaction.request.path));
        expect(String(sent.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDRECORDED\//);
        expect(conversationOf(sent.body as ConverseBody)).toEqual(conversationOf(interaction.request.body));
      });
      // The last answer's reasoning goes back too, in whatever turn comes next, exactly as it came.
      const reasoning = answerOf(cassette.interactions.at(-1)!.response).reasoning;
      if (reasoning.length === 0) return;
      const actor = createActor(machine, { input: { messages: history } }).start();
      actor.send({ type: 'user.message', content: 'And then?' });
      expect(await toPromise(actor)).toMatchObject({ status: 'error', error: { code: 'network' } });
      const next = (server.requests.at(-1)!.body as ConverseBody).messages.at(-2)!;
      expect(next.role).toBe('assistant');
      expect(next.content.filter((block) => block.reasoningContent).map((block) => block.reasoningContent)).toEqual(reasoning);
    });
  }

  for (const cassette of errors) {
    it(`${cassette.name}: the recorded error ends the run, classified, not retried`, async () => {
      const interaction = cassette.interactions.find((each) => each.response.status >= 400)!;
      const server = await serve([interaction.response]);
      const machine = createConversationMachine({ provider: aiSdkProvider(bedrockModel(server.url, interaction.request.path)) });
      const actor = createActor(machine, { input: {} }).start();
      actor.send({ type: 'user.message', content: 'Hello' });
      const output = await toPromise(actor);
      const status = interaction.response.status;
      // What the machine does next hangs on the code: compaction for a prompt too long, none for a bad key.
      const code = { 400: 'context_length', 403: 'authentication' }[status];
      expect(output).toMatchObject({ status: 'error', error: { status, retryable: false, code } });
      expect(output.error?.message).toContain(JSON.parse(interaction.response.body).message);
      expect(server.requests).toHaveLength(1);
    });
  }
});
