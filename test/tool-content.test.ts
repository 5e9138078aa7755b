/**
 * Tool results with media (DESIGN §16): `execute` returns `toolContent([...])`; the run keeps the
 * parts in their stored form (bytes as base64) beside a text version, reports them on
 * `tool.result`, and each wire sends them in its own shape through the real SDKs over real HTTP —
 * Anthropic `tool_result` blocks, Responses `function_call_output` items, Chat Completions one user
 * message after the round's tool messages naming each call. A bad part makes the call's result an
 * error naming it; a part the wire cannot take fails the request before anything is sent. Every
 * call still gets exactly one result.
 */
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  anthropicProvider,
  createConversationMachine,
  defineTool,
  estimateMessageTokens,
  handlerProvider,
  isToolContent,
  type Message,
  openaiProvider,
  type Provider,
  type RunOutput,
  type ToolResultContentPart,
  toolContent,
  ToolContentError,
} from '../src/index.js';
import { findMessagesProblem } from '../src/model/messages.js';
import { journaledMachine, setStepJournal, type StepJournal } from '../src/machines/restore/step-journal.js';
import { toolOutputOf } from '../src/tools/tool-content.js';
import { responsesStream } from './support/responses-events.js';
import { eventsOf, expectValidHistory, runConversation } from './support/run-conversation.js';
import { scriptedModel } from './support/scripted-model.js';
import { serveEachTest } from './support/serve-each-test.js';
import { anthropicSse, anthropicTextSse, openaiSse, type WireServer, type WireStep } from './support/wire-server.js';

/** A 1×1 PNG. */
const pngBase64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const pngBytes = Uint8Array.from(Buffer.from(pngBase64, 'base64'));
const pdfBase64 = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1').toString('base64');
const wavBase64 = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';

const screenshot = defineTool({
  name: 'screenshot',
  description: 'The page as an image and a PDF',
  parameters: z.object({ page: z.string() }),
  execute: ({ page }) =>
    toolContent([
      { type: 'text', text: `The page ${page}:` },
      { type: 'image', data: pngBytes },
      { type: 'file', data: pdfBase64, mediaType: 'application/pdf', filename: `${page}.pdf` },
    ]),
});
const add = defineTool({ name: 'add', parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });

const storedParts: ToolResultContentPart[] = [
  { type: 'text', text: 'The page home:' },
  { type: 'image', data: pngBase64, mediaType: 'image/png' },
  { type: 'file', data: pdfBase64, mediaType: 'application/pdf', filename: 'home.pdf' },
];
const storedText = 'The page home:\n[image image/png, 70 B]\n[file home.pdf application/pdf, 15 B]';

describe('toolContent in the neutral model', () => {
  it('keeps the parts stored (bytes as base64, an image type read) beside a text version; text alone stays a string', () => {
    const limits = { capText: (text: string) => text, maxMediaBytes: 1000 };
    const content = toolContent([
      { type: 'text', text: 'The page home:' },
      { type: 'image', data: pngBytes },
      { type: 'file', data: `data:application/pdf;base64,${pdfBase64}`, mediaType: 'application/pdf', filename: 'home.pdf' },
    ]);
    expect(isToolContent(content)).toBe(true);
    expect(isToolContent({ parts: [] })).toBe(false);
    expect(toolOutputOf(content, limits)).toEqual({ text: storedText, content: storedParts });
    expect(toolOutputOf(toolContent([{ type: 'text', text: 'only text' }]), limits)).toEqual({ text: 'only text' });
    expect(toolOutputOf({ a: 1 }, limits)).toEqual({ text: '{"a":1}' });
    // Each text part is capped as a whole result would be.
    expect(
      toolOutputOf(toolContent([{ type: 'text', text: 'long' }, storedParts[1]!]), { ...limits, capText: (text) => text.slice(0, 2) }),
    ).toEqual({
      text: 'lo\n[image image/png, 70 B]',
      content: [{ type: 'text', text: 'lo' }, storedParts[1]],
    });
  });

  it('a bad part throws a ToolContentError naming it', () => {
    const limits = { capText: (text: string) => text, maxMediaBytes: 50 };
    const cases: Array<[unknown[], RegExp]> = [
      [[{ type: 'image', data: 'file:///etc/passwd' }], /^toolContent part 0\.data is a file: URL/],
      [
        [
          { type: 'text', text: 'x' },
          { type: 'audio', data: wavBase64 },
        ],
        /^toolContent part 1 must be a \{ type: "text", text \}/,
      ],
      [[{ type: 'image', data: pngBase64 }], /^toolContent part 0 holds 70 bytes, over the 50 bytes a part may hold \(maxMediaBytes\)/],
      [[{ type: 'file', data: pdfBase64 }], /^toolContent part 0\.mediaType is required for a file part/],
    ];
    for (const [parts, message] of cases) {
      const thrown = (() => {
        try {
          toolOutputOf(toolContent(parts as ToolResultContentPart[]), limits);
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      expect(ToolContentError.isInstance(thrown), JSON.stringify(parts)).toBe(true);
      expect((thrown as Error).message).toMatch(message);
    }
    expect(() => toolOutputOf(toolContent('x' as never), limits)).toThrow(/toolContent takes an array/);
  });

  it('a history with tool results carrying parts is checked part by part; the token estimate counts their media', () => {
    const history = (content: unknown): unknown => [
      { role: 'user', content: 'look' },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 's1', toolName: 'screenshot', args: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 's1', toolName: 'screenshot', result: storedText, content }] },
    ];
    expect(findMessagesProblem(history(storedParts))).toBeUndefined();
    expect(findMessagesProblem(history('x'))).toBe(
      'input.messages[2]: content[0].content must be an array of text, image and file parts, got "x"',
    );
    expect(findMessagesProblem(history([{ type: 'image', data: 'ftp://x' }]))).toMatch(
      /^input\.messages\[2\]: content\[0\]\.content\[0\]\.data is a ftp: URL/,
    );
    expect(findMessagesProblem(history([{ type: 'tool-call' }]))).toMatch(
      /content\[0\]\.content\[0\] must be a part of type text \| image \| file/,
    );
    const withMedia = estimateMessageTokens({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 's1', toolName: 'screenshot', result: storedText, content: storedParts }],
    });
    const textOnly = estimateMessageTokens({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 's1', toolName: 'screenshot', result: storedText }],
    });
    // The 1×1 PNG by the larger rule (OpenAI: 85 + 170 a tile); the PDF has no page object: 1,000.
    expect(withMedia - textOnly).toBe(255 + 1000);
  });
});

describe('toolContent through a conversation', () => {
  it('the result keeps its parts in the history, on tool.result and in the persisted snapshot; the next request gets them', async () => {
    const { output, events, requests, actor } = await runConversation(
      [{ toolCalls: [{ id: 's1', name: 'screenshot', args: { page: 'home' } }] }, { text: 'A pixel and a PDF.' }],
      { tools: [screenshot] },
    );
    expect(output.status).toBe('done');
    expect(output.messages[2]).toEqual({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 's1', toolName: 'screenshot', result: storedText, content: storedParts }],
    });
    expect(eventsOf(events, 'tool.result')).toEqual([
      { type: 'tool.result', toolCallId: 's1', name: 'screenshot', result: storedText, isError: false, content: storedParts },
    ]);
    const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as { context: { messages: Message[] } };
    expect(persisted.context.messages[2]).toEqual(output.messages[2]);
    // handlerProvider speaks Chat Completions: the tool message names the media, which follow it.
    expect(requests[1]?.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 's1', content: storedText },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'The result of tool call s1 (screenshot) includes:' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${pngBase64}` } },
          { type: 'file', file: { file_data: `data:application/pdf;base64,${pdfBase64}`, filename: 'home.pdf' } },
        ],
      },
    ]);
    expectValidHistory(output.messages);
  });

  it('a bad part, or one over maxMediaBytes, makes that call an error result naming it; the other call and the run go on', async () => {
    const bad = defineTool({
      name: 'bad',
      parameters: z.object({ kind: z.string() }),
      execute: ({ kind }) =>
        toolContent(kind === 'url' ? [{ type: 'image', data: 'javascript:alert(1)' }] : [{ type: 'image', data: new Uint8Array(2000) }]),
    });
    const { output, events } = await runConversation(
      [
        {
          toolCalls: [
            { id: 'b1', name: 'bad', args: { kind: 'url' } },
            { id: 'b2', name: 'bad', args: { kind: 'big' } },
            { id: 'a1', name: 'add', args: { a: 1, b: 2 } },
          ],
        },
        { text: 'ok' },
      ],
      { tools: [bad, add], maxMediaBytes: 1000 },
    );
    expect(output.status).toBe('done');
    const results = eventsOf(events, 'tool.result');
    expect(results.map((event) => [event.toolCallId, event.isError, event.result]).sort()).toEqual([
      ['a1', false, '3'],
      ['b1', true, expect.stringMatching(/ToolContentError: toolContent part 0\.data is a javascript: URL/)],
      ['b2', true, expect.stringMatching(/ToolContentError: toolContent part 0 holds 2000 bytes, over the 1000 bytes/)],
    ]);
    expect(results.every((event) => event.content === undefined)).toBe(true);
    expectValidHistory(output.messages);
  });

  it('a journaled execution (Restate) records the parts and gives them back on replay', async () => {
    const records: unknown[] = [];
    const journal: StepJournal = {
      async step(step, action, signal) {
        const value = await action(signal);
        if (step.kind === 'tool') records.push(JSON.parse(JSON.stringify(value)));
        return { status: 'done', value };
      },
    };
    const model = scriptedModel([{ toolCalls: [{ id: 's1', name: 'screenshot', args: { page: 'home' } }] }, { text: 'Seen.' }]);
    const machine = journaledMachine(createConversationMachine({ provider: handlerProvider(model.handler), tools: [screenshot] }));
    const actor = createActor(machine, { input: {} });
    setStepJournal(actor.system, journal);
    actor.start();
    actor.send({ type: 'user.message', content: 'Look.' });
    const output = await toPromise(actor);
    expect(records).toEqual([{ kind: 'result', text: storedText, content: storedParts }]);
    expect(output.messages[2]).toMatchObject({ content: [{ content: storedParts }] });
  });
});

const serve = serveEachTest();

type Wire = 'chat-completions' | 'responses' | 'anthropic';

const chatToolCall = (id: string, args: string) =>
  openaiSse([
    {
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o',
      choices: [
        {
          index: 0,
          delta: { role: 'assistant', tool_calls: [{ index: 0, id, type: 'function', function: { name: 'screenshot', arguments: args } }] },
          finish_reason: null,
        },
      ],
    },
    {
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o',
      choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }],
    },
  ]);
const chatText = (text: string) =>
  openaiSse([
    {
      id: 'c',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4o',
      choices: [{ index: 0, delta: { content: text }, finish_reason: null }],
    },
    { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
  ]);
const anthropicToolUse = (id: string, input: unknown) =>
  anthropicSse([
    {
      type: 'message_start',
      message: {
        id: `msg_${id}`,
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 20, output_tokens: 0 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id, name: 'screenshot', input: {} } },
    { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(input) } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 10 } },
    { type: 'message_stop' },
  ]);

const wires: Record<Wire, { toolCall: () => WireStep; answer: () => WireStep; provider: (url: string) => Provider }> = {
  'chat-completions': {
    toolCall: () => chatToolCall('call_1', '{"page":"home"}'),
    answer: () => chatText('Seen.'),
    provider: (url) => openaiProvider({ model: 'gpt-4o', apiKey: 'sk-test', baseURL: `${url}/v1` }),
  },
  responses: {
    toolCall: () => responsesStream({ items: [{ type: 'function_call', callId: 'call_1', name: 'screenshot', args: '{"page":"home"}' }] }),
    answer: () => responsesStream({ items: [{ type: 'message', text: 'Seen.' }] }),
    provider: (url) => openaiProvider({ api: 'responses', model: 'gpt-5-mini', apiKey: 'sk-test', baseURL: `${url}/v1` }),
  },
  anthropic: {
    toolCall: () => anthropicToolUse('call_1', { page: 'home' }),
    answer: () => anthropicTextSse('Seen.'),
    provider: (url) => anthropicProvider({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant', baseURL: url, maxTokens: 256 }),
  },
};

async function toolRound(wire: Wire, tool = screenshot): Promise<{ output: RunOutput; server: WireServer }> {
  const server = await serve([wires[wire].toolCall(), wires[wire].answer()]);
  const machine = createConversationMachine({
    provider: wires[wire].provider(server.url),
    tools: [tool],
    retry: false,
    promptCache: false,
  });
  const actor = createActor(machine, { input: {} }).start();
  actor.send({ type: 'user.message', content: 'Look at the home page.' });
  return { output: await toPromise(actor), server };
}

type Body = { messages?: unknown[]; input?: unknown[] };
const secondRequest = (server: WireServer) => server.requests[1]?.body as Body;

describe('each wire sends a tool result with media in its own shape, through the real SDKs', () => {
  it('Anthropic: a tool_result with text, image and document blocks', async () => {
    const { output, server } = await toolRound('anthropic');
    expect(output.status, JSON.stringify(output.error)).toBe('done');
    expect(secondRequest(server).messages?.at(-1)).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'call_1',
          content: [
            { type: 'text', text: 'The page home:' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: pngBase64 } },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdfBase64 }, title: 'home.pdf' },
          ],
        },
      ],
    });
  });

  it('Responses: a function_call_output whose output is input_text, input_image and input_file items', async () => {
    const { output, server } = await toolRound('responses');
    expect(output.status, JSON.stringify(output.error)).toBe('done');
    expect(secondRequest(server).input?.at(-1)).toEqual({
      type: 'function_call_output',
      call_id: 'call_1',
      output: [
        { type: 'input_text', text: 'The page home:' },
        { type: 'input_image', image_url: `data:image/png;base64,${pngBase64}`, detail: 'auto' },
        { type: 'input_file', file_data: `data:application/pdf;base64,${pdfBase64}`, filename: 'home.pdf' },
      ],
    });
  });

  it('Chat Completions: the tool message names the media; one user message right after carries them, naming the call', async () => {
    const { output, server } = await toolRound('chat-completions');
    expect(output.status, JSON.stringify(output.error)).toBe('done');
    expect(secondRequest(server).messages?.slice(-2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: storedText },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'The result of tool call call_1 (screenshot) includes:' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${pngBase64}` } },
          { type: 'file', file: { file_data: `data:application/pdf;base64,${pdfBase64}`, filename: 'home.pdf' } },
        ],
      },
    ]);
  });

  it('a part the wire cannot take (audio on Anthropic) fails the next request before it is sent, naming the part; the history keeps the result', async () => {
    const recorder = defineTool({
      name: 'screenshot',
      parameters: z.object({ page: z.string() }),
      execute: () => toolContent([{ type: 'file', data: wavBase64, mediaType: 'audio/wav' }]),
    });
    const { output, server } = await toolRound('anthropic', recorder);
    expect(server.requests).toHaveLength(1);
    expect(output.status).toBe('error');
    expect(output.error).toMatchObject({ code: 'unsupported_content', retryable: false });
    expect(output.error?.message).toMatch(
      /^the anthropic wire cannot take messages\[2\]\.content\[0\]\.content\[0\] \(audio\/wav, inline\)/,
    );
    expect(output.messages[2]).toMatchObject({
      role: 'tool',
      content: [{ toolCallId: 'call_1', content: [{ type: 'file', mediaType: 'audio/wav' }] }],
    });
    expectValidHistory(output.messages);
  });
});
