/**
 * One conversation, several wires: a run started on Chat Completions (or Anthropic) continues on
 * the Responses API and goes back, through the real SDKs over real HTTP. Tool-call ids carry over
 * (the neutral id is the Responses `call_id`), each wire gets the reasoning it can take — OpenAI's
 * encrypted items only to the Responses API, Anthropic's signed thinking only to Anthropic — and
 * nothing of another wire's metadata reaches a request.
 */
import { createActor, toPromise } from 'xstate';
import { afterEach, describe, expect, it } from 'vitest';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import type { Message } from '../src/model/messages.js';
import { anthropicProvider } from '../src/providers/anthropic/index.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import type { Provider } from '../src/model/provider.js';
import { defineTool } from '../src/tools/define-tool.js';
import { expectValidHistory } from './support/history.js';
import { responsesStream } from './support/responses-events.js';
import { jsonResponse, openaiSse, startWireServer, type WireServer, type WireStep } from './support/wire-server.js';

const servers: WireServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

const weather = defineTool({
  name: 'weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  execute: ({ city }) => `sunny in ${String(city)}`,
});

async function turn(provider: Provider, history: Message[], content: string) {
  const machine = createConversationMachine({ provider, tools: [weather], system: 'Be brief.', retry: false });
  const actor = createActor(machine, { input: { messages: history } }).start();
  actor.send({ type: 'user.message', content });
  const output = await toPromise(actor);
  expect(output.status, JSON.stringify(output.error)).toBe('done');
  expectValidHistory(output.messages);
  return output;
}

async function serve(steps: WireStep[]): Promise<WireServer> {
  const server = await startWireServer(steps);
  servers.push(server);
  return server;
}

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
  id: 'chatcmpl-x',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'deepseek-reasoner',
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});

/** Request bodies as plain JSON text, to look for anything that must not be there. */
const bodiesText = (server: WireServer) => server.requests.map((request) => request.rawBody).join('\n');

describe('a conversation moving between wires', () => {
  it('Chat Completions → Responses → Chat Completions: calls and ids carry over, reasoning goes only where it can', async () => {
    const chat1 = await serve([
      openaiSse([
        chunk({ role: 'assistant', reasoning_content: 'Chat reasoning.' }),
        chunk({
          tool_calls: [{ index: 0, id: 'call_chat1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
        }),
        chunk({}, 'tool_calls'),
      ]),
      openaiSse([chunk({ content: 'Sunny in Paris.' }), chunk({}, 'stop')]),
    ]);
    const first = await turn(openaiProvider({ model: 'deepseek-reasoner', apiKey: 'sk-chat', baseURL: `${chat1.url}/v1` }), [], 'Paris?');

    const responses = await serve([
      responsesStream({
        items: [
          { type: 'reasoning', summary: ['Rome next.'], encrypted: 'enc-rome' },
          { type: 'message', text: 'Checking Rome.', phase: 'commentary' },
          { type: 'function_call', callId: 'call_resp1', name: 'weather', args: '{"city":"Rome"}' },
        ],
      }),
      responsesStream({ items: [{ type: 'message', text: 'Sunny in Rome too.', phase: 'final_answer' }] }),
    ]);
    const second = await turn(
      openaiProvider({ api: 'responses', model: 'gpt-5-mini', apiKey: 'sk-responses', baseURL: `${responses.url}/v1` }),
      first.messages,
      'And Rome?',
    );
    expect(second.text).toBe('Sunny in Rome too.');
    // The Chat history as Responses input: the chat call id is the call_id; its reasoning has no Responses form.
    expect((responses.requests[0]!.body as { input: unknown[] }).input).toEqual([
      { role: 'user', content: 'Paris?' },
      { type: 'function_call', call_id: 'call_chat1', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_chat1', output: 'sunny in Paris' },
      { role: 'assistant', content: 'Sunny in Paris.' },
      { role: 'user', content: 'And Rome?' },
    ]);
    expect(bodiesText(responses)).not.toContain('Chat reasoning.');
    // Its own reasoning goes back encrypted, right before the commentary that followed it.
    expect((responses.requests[1]!.body as { input: unknown[] }).input.slice(5)).toEqual([
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Rome next.' }], encrypted_content: 'enc-rome' },
      { role: 'assistant', content: 'Checking Rome.', phase: 'commentary' },
      { type: 'function_call', call_id: 'call_resp1', name: 'weather', arguments: '{"city":"Rome"}' },
      { type: 'function_call_output', call_id: 'call_resp1', output: 'sunny in Rome' },
    ]);

    const chat2 = await serve([openaiSse([chunk({ content: 'Both sunny.' }), chunk({}, 'stop')])]);
    const third = await turn(
      openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-chat', baseURL: `${chat2.url}/v1` }),
      second.messages,
      'Summary?',
    );
    expect(third.text).toBe('Both sunny.');
    expect((chat2.requests[0]!.body as { messages: unknown[] }).messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_chat1', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_chat1', content: 'sunny in Paris' },
      { role: 'assistant', content: 'Sunny in Paris.' },
      { role: 'user', content: 'And Rome?' },
      {
        role: 'assistant',
        content: 'Checking Rome.',
        tool_calls: [{ id: 'call_resp1', type: 'function', function: { name: 'weather', arguments: '{"city":"Rome"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_resp1', content: 'sunny in Rome' },
      { role: 'assistant', content: 'Sunny in Rome too.' },
      { role: 'user', content: 'Summary?' },
    ]);
    // Encrypted reasoning and phases are Responses-only: Chat Completions gets none of them.
    expect(bodiesText(chat2)).not.toMatch(/enc-rome|phase|commentary|reasoning/);
    // …and the history still has them, for a later Responses turn.
    expect(third.messages[5]).toMatchObject({
      role: 'assistant',
      content: [{ type: 'reasoning', providerMetadata: { openai: { encryptedContent: 'enc-rome' } } }, {}, {}],
    });
  });

  it('Anthropic → Responses → Anthropic: signed thinking stays Anthropic’s, encrypted reasoning stays OpenAI’s', async () => {
    const signature = 'EqQBCkYIBxgCKkCs+/Sig==';
    const anthropic1 = await serve([
      jsonResponse(200, {
        id: 'msg_01',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [
          { type: 'thinking', thinking: 'Claude thinks.', signature },
          { type: 'tool_use', id: 'toolu_01', name: 'weather', input: { city: 'Paris' } },
        ],
        stop_reason: 'tool_use',
        stop_sequence: null,
        usage: { input_tokens: 20, output_tokens: 10 },
      }),
      jsonResponse(200, {
        id: 'msg_02',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text: 'Sunny in Paris.' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 30, output_tokens: 5 },
      }),
    ]);
    const claude = (url: string) =>
      anthropicProvider({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant', baseURL: url, maxTokens: 1024, stream: false });
    const first = await turn(claude(anthropic1.url), [], 'Paris?');

    const responses = await serve([
      responsesStream({
        items: [
          { type: 'reasoning', encrypted: 'enc-openai' },
          { type: 'function_call', callId: 'call_r', name: 'weather', args: '{"city":"Rome"}' },
        ],
      }),
      responsesStream({ items: [{ type: 'message', text: 'Rome too.' }] }),
    ]);
    const second = await turn(
      openaiProvider({ api: 'responses', model: 'gpt-5-mini', apiKey: 'sk-responses', baseURL: `${responses.url}/v1` }),
      first.messages,
      'Rome?',
    );
    const input = (responses.requests[0]!.body as { input: unknown[] }).input;
    expect(input.slice(0, 3)).toEqual([
      { role: 'user', content: 'Paris?' },
      { type: 'function_call', call_id: 'toolu_01', name: 'weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'toolu_01', output: 'sunny in Paris' },
    ]);
    expect(bodiesText(responses)).not.toContain(signature);

    const anthropic2 = await serve([
      jsonResponse(200, {
        id: 'msg_03',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [{ type: 'text', text: 'Both sunny.' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 40, output_tokens: 3 },
      }),
    ]);
    await turn(claude(anthropic2.url), second.messages, 'Summary?');
    const messages = (anthropic2.requests[0]!.body as { messages: Array<{ role: string; content: unknown }> }).messages;
    expect(messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Claude thinks.', signature },
        { type: 'tool_use', id: 'toolu_01', name: 'weather', input: { city: 'Paris' } },
      ],
    });
    // The Responses call, without its encrypted reasoning (Anthropic would refuse unsigned thinking).
    expect(messages[5]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'call_r', name: 'weather', input: { city: 'Rome' } }],
    });
    expect(bodiesText(anthropic2)).not.toContain('enc-openai');
  });
});
