/**
 * The AI SDK UI message stream protocol (src/http/ui-message, docs/ui-protocol.md), read by the
 * `ai` package's own client code over real HTTP: `DefaultChatTransport` + `readUIMessageStream`,
 * and `AbstractChat` (the class behind `useChat`) for the approval round trips and the resume. The
 * model is the real `openai` SDK talking to the local wire server; the host keeps its
 * conversations in a SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AbstractChat,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  readUIMessageStream,
  type UIMessage,
  validateUIMessages,
} from 'ai';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { z } from 'zod';
import { toNodeListener } from '../examples/chat-ui/node-listener.js';
import { chatRoutes } from '../examples/chat-ui/routes.js';
import { chatTools } from '../examples/chat-ui/server.js';
import { handleChatRequest, toUIMessageStream } from '../src/http/ui-message/index.js';
import { toUIMessageStreamResponse } from '../src/http/ui-message/ui-message-stream-response.js';
import {
  agentTool,
  type ConversationHost,
  createConversationHost,
  createConversationMachine,
  defineTool,
  HaltError,
  openaiProvider,
  toolContent,
} from '../src/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { deferred } from './support/run-conversation.js';
import { chunk, gatedTextStep, textStep, toolCallsStep, words } from './support/chat-steps.js';
import { jsonResponse, startWireServer, type WireServer, type WireStep } from './support/wire-server.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-ui-message-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// ---------------------------------------------------------------------------------------------
// The service: the host over HTTP, with the chat routes of examples/chat-ui.

type Service = { url: string; wire: WireServer; host: ConversationHost; payments: number[]; following: () => number };

/** The host as the routes see it, counting the streams that follow a conversation now. */
function countingFollows(host: ConversationHost): { host: ConversationHost; following: () => number } {
  let open = 0;
  const counted = new Proxy(host, {
    get(target, key, receiver) {
      if (key !== 'follow') return Reflect.get(target, key, receiver);
      return (...args: Parameters<ConversationHost['follow']>) => {
        open++;
        const stop = target.follow(...args);
        let stopped = false;
        return () => {
          if (!stopped) open--;
          stopped = true;
          stop();
        };
      };
    },
  });
  return { host: counted, following: () => open };
}
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let databases = 0;
async function startService(
  steps: WireStep[],
  options: {
    authorize?: (request: Request, id: string) => boolean | Promise<boolean>;
    routes?: Record<string, (host: ConversationHost) => Response>;
    retries?: number;
    sessionData?: (request: Request, id: string) => unknown;
  } = {},
): Promise<Service> {
  const wire = await startWireServer(steps);
  const payments: number[] = [];
  const machine = createConversationMachine({
    provider: openaiProvider({ model: 'gpt-test', apiKey: 'sk-test', baseURL: `${wire.url}/v1` }),
    tools: [
      // The example's add and pay.
      ...chatTools({ paid: (amount) => payments.push(amount) }),
      defineTool({
        name: 'whoami',
        description: 'The user',
        parameters: z.object({}),
        execute: async (_args, { sessionData }) => `you are ${(sessionData as { user?: string } | undefined)?.user ?? 'nobody'}`,
      }),
      defineTool({
        name: 'countdown',
        description: 'Counts down, reporting each step',
        parameters: z.object({ from: z.number() }),
        execute: async function* ({ from }) {
          for (let left = from; left > 0; left--) yield { left };
          return 'liftoff';
        },
      }),
      defineTool({
        name: 'chart',
        description: 'Draws the chart',
        parameters: z.object({}),
        execute: async () =>
          toolContent([
            { type: 'text', text: 'The chart:' },
            { type: 'image', data: chartPng, mediaType: 'image/png' },
          ]),
      }),
      defineTool({
        name: 'lock',
        description: 'Lock the order',
        parameters: z.object({}),
        execute: async () => {
          throw new HaltError('the order is locked: call support');
        },
      }),
    ],
    retry: { maxRetries: options.retries ?? 0, initialDelayMs: 1, maxDelayMs: 5, jitter: false },
  });
  const host = createConversationHost({ machine, store: sqliteStore({ path: join(work, `chat-${++databases}.db`) }) });
  const counted = countingFollows(host);
  const routes = chatRoutes(counted.host, {
    authorize: options.authorize ?? (() => true),
    ...(options.sessionData ? { sessionData: options.sessionData } : {}),
  });
  const server: Server = createServer(
    toNodeListener(async (request) => options.routes?.[new URL(request.url).pathname]?.(counted.host) ?? routes(request)),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await host.close();
    await wire.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, wire, host, payments, following: counted.following };
}

// ---------------------------------------------------------------------------------------------
// The `ai` package's client: the chat class behind useChat, with plain state.

class PlainState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[];
  constructor(messages: UIMessage[] = []) {
    this.messages = messages;
  }
  pushMessage = (message: UIMessage) => {
    this.messages = [...this.messages, message];
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage) => {
    this.messages = this.messages.map((current, at) => (at === index ? message : current));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

class NodeChat extends AbstractChat<UIMessage> {
  readonly errors: Error[] = [];
  constructor(url: string, id: string, messages: UIMessage[] = []) {
    const errors: Error[] = [];
    super({
      id,
      transport: new DefaultChatTransport({ api: `${url}/api/chat` }),
      state: new PlainState(messages),
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      onError: (error) => errors.push(error),
    });
    this.errors = errors;
  }
}

/** Waits until `check` holds (the chat's automatic requests are not awaited by `addToolApprovalResponse`). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let tries = 0; !check(); tries++) {
    if (tries > 1_000) throw new Error(`never happened: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

type Part = UIMessage['parts'][number];
const toolPart = (message: UIMessage | undefined, toolCallId: string) =>
  message?.parts.find((part): part is Extract<Part, { toolCallId: string }> => 'toolCallId' in part && part.toolCallId === toolCallId);

/** A 1×1 PNG, the chart tool's picture. */
const chartPng = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** A part as a user sees it: type, state and content; none of the client's bookkeeping fields. */
function shown(part: Part): unknown {
  if (part.type === 'step-start') return { type: part.type };
  if (part.type === 'text' || part.type === 'reasoning') return { type: part.type, text: part.text };
  if ('toolCallId' in part) {
    const { type, toolCallId, state, input } = part;
    return {
      type,
      toolCallId,
      state,
      input,
      ...('output' in part && part.output !== undefined ? { output: part.output } : {}),
      ...(part.errorText === undefined ? {} : { errorText: part.errorText }),
    };
  }
  return part;
}

/** The UI messages a page loads: the conversation as the host holds it. */
async function loaded(url: string, id: string): Promise<UIMessage[]> {
  const response = await fetch(`${url}/api/chat/${id}/messages`);
  expect(response.status).toBe(200);
  return validateUIMessages({ messages: await response.json() });
}

const userMessage = (text: string, id = 'u1'): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] });

/** Sends one message with the transport and reads the answer with `readUIMessageStream`: every snapshot, and the errors. */
async function readAnswer(url: string, chatId: string, text: string) {
  const transport = new DefaultChatTransport({ api: `${url}/api/chat` });
  const stream = await transport.sendMessages({
    chatId,
    messages: [userMessage(text)],
    trigger: 'submit-message',
    messageId: undefined,
    abortSignal: undefined,
  });
  const [forChunks, forMessages] = stream.tee();
  const chunks: Array<{ type: string }> = [];
  const reading = (async () => {
    for await (const value of forChunks as unknown as AsyncIterable<{ type: string }>) chunks.push(value);
  })();
  const errors: unknown[] = [];
  const snapshots: UIMessage[] = [];
  for await (const message of readUIMessageStream({ stream: forMessages, onError: (error) => errors.push(error) })) {
    snapshots.push(structuredClone(message));
  }
  await reading;
  return { snapshots, final: snapshots.at(-1), errors, chunks };
}

// ---------------------------------------------------------------------------------------------

describe('the UI message stream, read by the ai package', () => {
  it('streams reasoning and text as parts that grow, with the steps and the finish', async () => {
    const service = await startService([textStep('Hello there, how can I help?', 'The user greets me. ')]);
    const { snapshots, final, errors, chunks } = await readAnswer(service.url, 'c-text', 'Hi');
    expect(errors).toEqual([]);
    expect(final?.id).toBe('m1');
    expect(final?.parts.map(shown)).toEqual([
      { type: 'step-start' },
      { type: 'reasoning', text: 'The user greets me. ' },
      { type: 'text', text: 'Hello there, how can I help?' },
    ]);
    expect(final?.parts.filter((part) => 'state' in part).map((part) => (part as { state: string }).state)).toEqual(['done', 'done']);
    // It streamed: the reader saw the text part grow a word at a time.
    const texts = snapshots
      .map((message) => message.parts.find((part) => part.type === 'text'))
      .flatMap((part) => (part ? [part.text] : []));
    expect(new Set(texts).size).toBeGreaterThanOrEqual(6);
    expect(chunks.map((value) => value.type)).toEqual([
      'start',
      'start-step',
      'reasoning-start',
      ...words('The user greets me. ').map(() => 'reasoning-delta'),
      'reasoning-end',
      'text-start',
      ...words('Hello there, how can I help?').map(() => 'text-delta'),
      'text-end',
      'finish-step',
      'finish',
    ]);
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
    // The page that loads the conversation later sees the same message.
    expect((await loaded(service.url, 'c-text')).map((message) => ({ id: message.id, parts: message.parts.map(shown) }))).toEqual([
      { id: 'm0', parts: [{ type: 'text', text: 'Hi' }] },
      { id: 'm1', parts: final?.parts.map(shown) },
    ]);
  });

  it('streams a tool call: its input as it streams, then whole, then its output, and the answer in the next step', async () => {
    const service = await startService([toolCallsStep([{ id: 'call_add', name: 'add', args: { a: 2, b: 3 } }]), textStep('2 + 3 = 5.')]);
    const { snapshots, final, errors } = await readAnswer(service.url, 'c-tool', 'What is 2+3?');
    expect(errors).toEqual([]);
    expect(final?.parts.map(shown)).toEqual([
      { type: 'step-start' },
      { type: 'tool-add', toolCallId: 'call_add', state: 'output-available', input: { a: 2, b: 3 }, output: { sum: 5 } },
      { type: 'step-start' },
      { type: 'text', text: '2 + 3 = 5.' },
    ]);
    const states = snapshots.map((message) => toolPart(message, 'call_add')?.state).filter((state) => state !== undefined);
    expect([...new Set(states)]).toEqual(['input-streaming', 'input-available', 'output-available']);
    expect(
      snapshots.some(
        (message) => toolPart(message, 'call_add')?.input !== undefined && toolPart(message, 'call_add')?.state === 'input-streaming',
      ),
    ).toBe(true);
  });

  it('asks for approval, and an approval answered with addToolApprovalResponse runs the tool and continues the same message', async () => {
    const service = await startService([toolCallsStep([{ id: 'call_pay', name: 'pay', args: { amount: 80 } }]), textStep('Paid 80.')]);
    const chat = new NodeChat(service.url, 'c-approve');
    await chat.sendMessage({ text: 'Pay 80' });
    expect(chat.status).toBe('ready');
    const asked = chat.lastMessage;
    expect(asked?.id).toBe('m1');
    expect(toolPart(asked, 'call_pay')).toMatchObject({ state: 'approval-requested', input: { amount: 80 }, approval: { id: 'call_pay' } });
    expect((await service.host.get('c-approve'))?.status).toBe('awaitingApproval');
    expect(service.payments).toEqual([]);

    await chat.addToolApprovalResponse({ id: 'call_pay', approved: true });
    await until(
      () => chat.status === 'ready' && chat.lastMessage?.parts.some((part) => part.type === 'text') === true,
      'the answer after approval',
    );
    expect(chat.errors).toEqual([]);
    expect(chat.messages).toHaveLength(2);
    expect(chat.lastMessage?.id).toBe('m1');
    expect(chat.lastMessage?.parts.map(shown)).toEqual([
      { type: 'step-start' },
      { type: 'tool-pay', toolCallId: 'call_pay', state: 'output-available', input: { amount: 80 }, output: 'paid €80' },
      { type: 'step-start' },
      { type: 'text', text: 'Paid 80.' },
    ]);
    expect(service.payments).toEqual([80]);
    expect((await service.host.get('c-approve'))?.status).toBe('done');
    // What the stream built is what the history says.
    expect((await loaded(service.url, 'c-approve'))[1]?.parts.map(shown)).toEqual(chat.lastMessage?.parts.map(shown));
  });

  it('a denied call shows as output-denied; the model hears the reason', async () => {
    const service = await startService([
      toolCallsStep([{ id: 'call_pay', name: 'pay', args: { amount: 500 } }]),
      textStep('I did not pay.'),
    ]);
    const chat = new NodeChat(service.url, 'c-deny');
    await chat.sendMessage({ text: 'Pay 500' });
    expect(toolPart(chat.lastMessage, 'call_pay')?.state).toBe('approval-requested');
    await chat.addToolApprovalResponse({ id: 'call_pay', approved: false, reason: 'too much' });
    await until(
      () => chat.status === 'ready' && chat.lastMessage?.parts.some((part) => part.type === 'text') === true,
      'the answer after denial',
    );
    expect(chat.errors).toEqual([]);
    expect(chat.lastMessage?.parts.map(shown)).toEqual([
      { type: 'step-start' },
      { type: 'tool-pay', toolCallId: 'call_pay', state: 'output-denied', input: { amount: 500 } },
      { type: 'step-start' },
      { type: 'text', text: 'I did not pay.' },
    ]);
    expect(service.payments).toEqual([]);
    expect(JSON.stringify(service.wire.requests[1]?.body)).toContain('denied by user: too much');
    expect((await loaded(service.url, 'c-deny'))[1]?.parts.map(shown)).toEqual(chat.lastMessage?.parts.map(shown));
  });

  it('a provider error ends the message with an error the chat shows (no provider text leaks); the next message works', async () => {
    const service = await startService([
      jsonResponse(401, {
        error: { message: 'Incorrect API key provided: sk-test***', type: 'invalid_request_error', code: 'invalid_api_key' },
      }),
      textStep('Back again.'),
    ]);
    const { final, errors, chunks } = await readAnswer(service.url, 'c-error', 'Hi');
    expect(errors.map((error) => (error as Error).message)).toEqual(['the run failed: authentication (status 401)']);
    expect(chunks.slice(-3)).toEqual([
      { type: 'finish-step' },
      { type: 'error', errorText: 'the run failed: authentication (status 401)' },
      { type: 'finish', finishReason: 'error' },
    ]);
    expect(JSON.stringify(chunks)).not.toContain('sk-test');
    expect(final?.parts ?? []).toEqual([]);

    const chat = new NodeChat(service.url, 'c-error', await loaded(service.url, 'c-error'));
    await chat.sendMessage({ text: 'Again' });
    expect(chat.errors).toEqual([]);
    expect(chat.lastMessage?.parts.map(shown)).toEqual([{ type: 'step-start' }, { type: 'text', text: 'Back again.' }]);
  });

  it('a halted run ends with an error naming why; a cancelled one with abort', async () => {
    const gate = deferred();
    const service = await startService([
      toolCallsStep([{ id: 'call_lock', name: 'lock', args: {} }]),
      gatedTextStep('Working on ', 'it.', gate.promise),
    ]);
    const halted = await readAnswer(service.url, 'c-halt', 'Lock it');
    expect(halted.errors.map((error) => (error as Error).message)).toEqual([
      'the run halted (tool_halt): the order is locked: call support',
    ]);
    expect(halted.final?.parts.map(shown)).toEqual([
      { type: 'step-start' },
      // A HaltError's content is the call's result (and the run's final text).
      { type: 'tool-lock', toolCallId: 'call_lock', state: 'output-available', input: {}, output: 'the order is locked: call support' },
    ]);

    const reading = readAnswer(service.url, 'c-cancel', 'Take your time');
    await until(() => service.wire.requests.length === 2, 'the second request');
    await service.host.send('c-cancel', { type: 'cancel', reason: 'user left' });
    const cancelled = await reading;
    expect(cancelled.errors).toEqual([]);
    expect(cancelled.chunks.slice(-2)).toEqual([
      { type: 'abort', reason: 'cancelled' },
      { type: 'finish', finishReason: 'other' },
    ]);
    gate.resolve();
  });

  it('resumes the answer in progress: after the reader left, and from a page loaded anew, without a second message', async () => {
    const gate = deferred();
    const service = await startService([gatedTextStep('The answer is ', 'forty-two.', gate.promise)]);
    const chat = new NodeChat(service.url, 'c-resume');
    const sending = chat.sendMessage({ text: 'What is the answer?' });
    await until(
      () => chat.lastMessage?.parts.some((part) => part.type === 'text' && part.text === 'The answer is ') === true,
      'the first words',
    );
    await chat.stop();
    await sending;
    expect((await service.host.get('c-resume'))?.status).toBe('running');
    // The reader left: its stream stopped following; the run goes on.
    await until(() => service.following() === 0, 'the stream stops following');

    // A page loaded now: the history so far, then the stream of the run from its first event.
    const reloaded = new NodeChat(service.url, 'c-resume', await loaded(service.url, 'c-resume'));
    expect(reloaded.messages.map((message) => message.id)).toEqual(['m0']);
    const resuming = reloaded.resumeStream();
    await until(
      () => reloaded.lastMessage?.parts.some((part) => part.type === 'text' && part.text === 'The answer is ') === true,
      'the replay',
    );
    // The chat that stopped reading resumes too.
    const resumed = chat.resumeStream();
    await until(() => chat.status === 'streaming', 'the old chat resumes');
    gate.resolve();
    await Promise.all([resuming, resumed]);
    for (const client of [chat, reloaded]) {
      expect(client.errors).toEqual([]);
      expect(client.messages.map((message) => message.id)).toEqual([client === chat ? expect.any(String) : 'm0', 'm1']);
      expect(client.lastMessage?.parts.map(shown)).toEqual([{ type: 'step-start' }, { type: 'text', text: 'The answer is forty-two.' }]);
    }
    expect(service.following()).toBe(0);
    // Nothing in progress: 204, and the chat stays as it is.
    const response = await fetch(`${service.url}/api/chat/c-resume/stream`);
    expect(response.status).toBe(204);
    await chat.resumeStream();
    expect(chat.messages).toHaveLength(2);
  });

  it('takes attachments as useChat sends them (file parts, data: URLs): the model gets an image and a PDF, the page loads them back', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    const pdf = Buffer.from('%PDF-1.4\n').toString('base64');
    const service = await startService([textStep('A pixel and a report.')]);
    const transport = new DefaultChatTransport({ api: `${service.url}/api/chat` });
    const attachments: UIMessage = {
      id: 'u1',
      role: 'user',
      parts: [
        { type: 'text', text: 'What are these?' },
        { type: 'file', mediaType: 'image/png', filename: 'pixel.png', url: `data:image/png;base64,${png}` },
        { type: 'file', mediaType: 'application/pdf', filename: 'q3.pdf', url: `data:application/pdf;base64,${pdf}` },
      ],
    };
    const stream = await transport.sendMessages({
      chatId: 'c-files',
      messages: [attachments],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    const errors: unknown[] = [];
    for await (const _ of readUIMessageStream({ stream, onError: (error) => errors.push(error) })) {
      // read to the end
    }
    expect(errors).toEqual([]);
    const sent = service.wire.requests[0]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(sent.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What are these?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
        { type: 'file', file: { file_data: `data:application/pdf;base64,${pdf}`, filename: 'q3.pdf' } },
      ],
    });
    const [user] = await loaded(service.url, 'c-files');
    expect(user?.parts).toEqual([
      { type: 'text', text: 'What are these?' },
      { type: 'file', mediaType: 'image/png', url: `data:image/png;base64,${png}` },
      { type: 'file', mediaType: 'application/pdf', filename: 'q3.pdf', url: `data:application/pdf;base64,${pdf}` },
    ]);
  });

  it('a tool result with an image streams as content output (text and media items); the page loads it back the same', async () => {
    const service = await startService([toolCallsStep([{ id: 'call_chart', name: 'chart', args: {} }]), textStep('Here it is.')]);
    const { final, errors } = await readAnswer(service.url, 'c-chart', 'Draw the chart');
    expect(errors).toEqual([]);
    const output = {
      type: 'content',
      value: [
        { type: 'text', text: 'The chart:' },
        { type: 'media', data: chartPng, mediaType: 'image/png' },
      ],
    };
    expect(toolPart(final!, 'call_chart')).toMatchObject({ state: 'output-available', output });
    const [, answer] = await loaded(service.url, 'c-chart');
    expect(answer && toolPart(answer, 'call_chart')).toMatchObject({ state: 'output-available', output });
    // The model got the image as parts, after the tool message (Chat Completions).
    const sent = service.wire.requests[1]?.body as { messages: Array<{ role: string; content: unknown }> };
    expect(sent.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'The result of tool call call_chart (chart) includes:' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${chartPng}` } },
      ],
    });
  });

  it('a tool that reports progress streams preliminary outputs, then its result replaces them', async () => {
    const service = await startService([toolCallsStep([{ id: 'call_cd', name: 'countdown', args: { from: 2 } }]), textStep('Done.')]);
    const { snapshots, final, errors, chunks } = await readAnswer(service.url, 'c-progress', 'Count down from 2');
    expect(errors).toEqual([]);
    expect(chunks.filter((chunk) => chunk.type === 'tool-output-available')).toEqual([
      { type: 'tool-output-available', toolCallId: 'call_cd', output: { left: 2 }, preliminary: true },
      { type: 'tool-output-available', toolCallId: 'call_cd', output: { left: 1 }, preliminary: true },
      { type: 'tool-output-available', toolCallId: 'call_cd', output: 'liftoff' },
    ]);
    // The ai package's reader shows each preliminary output in the call's part until the result.
    const outputs = snapshots
      .map((message) => toolPart(message, 'call_cd'))
      .flatMap((part) => (part && 'output' in part ? [part.output] : []));
    expect(outputs).toEqual(expect.arrayContaining([{ left: 2 }, { left: 1 }, 'liftoff']));
    expect(toolPart(final!, 'call_cd')).toMatchObject({ state: 'output-available', output: 'liftoff' });
  });

  it("streams a host conversation's last run, or its next one — as (host, id) or ({ host, id })", async () => {
    const service = await startService([textStep('First answer.'), textStep('Second answer.')], {
      routes: {
        '/host/c-host/stream': (host) => toUIMessageStreamResponse(toUIMessageStream(host, 'c-host')),
        '/next/c-host/stream': (host) => toUIMessageStreamResponse(toUIMessageStream({ host, id: 'c-host' }, { from: 'now' })),
      },
    });
    const read = async (api: string) => {
      const chunks = await new DefaultChatTransport({ api: `${service.url}${api}` }).reconnectToStream({ chatId: 'c-host' });
      let last: UIMessage | undefined;
      for await (const message of readUIMessageStream({ stream: chunks as ReadableStream })) last = message;
      return last;
    };
    await service.host.send('c-host', { type: 'user.message', content: 'One' });
    await service.host.result('c-host');
    // The last run, replayed from the store: its answer, named as the history names it.
    const replayed = await read('/host');
    expect({ id: replayed?.id, parts: replayed?.parts.map(shown) }).toEqual({
      id: 'm1',
      parts: [{ type: 'step-start' }, { type: 'text', text: 'First answer.' }],
    });
    // From now: the next run's answer.
    const next = read('/next');
    await until(() => service.following() === 1, 'the stream follows');
    await service.host.send('c-host', { type: 'user.message', content: 'Two' });
    expect(await next).toMatchObject({ id: 'm3', parts: [{ type: 'step-start' }, { type: 'text', text: 'Second answer.' }] });
    expect(() => toUIMessageStream({} as never, 'c-host')).toThrow('toUIMessageStream(host, id): expected a ConversationHost');
  });

  it('streams a run from its actor, read through the transport', async () => {
    const wire = await startWireServer([toolCallsStep([{ id: 'call_add', name: 'add', args: { a: 1, b: 1 } }]), textStep('Two.')]);
    cleanups.push(() => wire.close());
    const machine = createConversationMachine({
      provider: openaiProvider({ model: 'gpt-test', apiKey: 'sk-test', baseURL: `${wire.url}/v1` }),
      tools: [
        defineTool({
          name: 'add',
          description: 'Add',
          parameters: z.object({ a: z.number(), b: z.number() }),
          execute: async ({ a, b }) => a + b,
        }),
      ],
    });
    const actor = createActor(machine, { input: { messages: [] } }).start();
    const stream = toUIMessageStream(actor);
    const service = await startService([], { routes: { '/actor/run/stream': () => toUIMessageStreamResponse(stream) } });
    actor.send({ type: 'user.message', content: 'What is 1+1?' });
    const transport = new DefaultChatTransport({ api: `${service.url}/actor` });
    const chunks = await transport.reconnectToStream({ chatId: 'run' });
    expect(chunks).not.toBeNull();
    const messages: UIMessage[] = [];
    for await (const message of readUIMessageStream({ stream: chunks as ReadableStream })) messages.push(message);
    expect(messages.at(-1)?.id).toBe('m1');
    expect(messages.at(-1)?.parts.map(shown)).toEqual([
      { type: 'step-start' },
      { type: 'tool-add', toolCallId: 'call_add', state: 'output-available', input: { a: 1, b: 1 }, output: '2' },
      { type: 'step-start' },
      { type: 'text', text: 'Two.' },
    ]);
  });
});

describe('chat requests that are wrong', () => {
  const valid = { id: 'c-bad', trigger: 'submit-message', messages: [userMessage('Hi')] };
  const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const cases: Array<{ name: string; body: string | Uint8Array; type?: string; status: number; field?: string }> = [
    { name: 'not JSON', body: '{"id":', status: 400, field: 'body' },
    { name: 'JSON but not an object', body: '[1,2]', status: 400, field: 'body' },
    { name: '100,000-deep nesting', body: deep(100_000), status: 400, field: 'body' },
    {
      name: '100,000-deep nesting inside a part',
      body: `{"id":"c-bad","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Hi","x":${deep(100_000)}}]}]}`,
      status: 400,
      field: 'body',
    },
    { name: 'the one good body', body: JSON.stringify(valid), status: 200 },
    {
      name: 'invalid UTF-8',
      body: new Uint8Array([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      status: 400,
      field: 'body',
    },
    { name: 'the wrong content type', body: JSON.stringify(valid), type: 'text/plain', status: 415, field: 'content-type' },
    { name: 'too big', body: JSON.stringify({ ...valid, messages: [userMessage('x'.repeat(1_100_000))] }), status: 413, field: 'body' },
    { name: 'no id', body: JSON.stringify({ ...valid, id: undefined }), status: 400, field: 'id' },
    { name: 'an id of ..', body: JSON.stringify({ ...valid, id: '..' }), status: 400, field: 'id' },
    { name: 'a huge id', body: JSON.stringify({ ...valid, id: 'a'.repeat(10_000) }), status: 400, field: 'id' },
    { name: 'an id with a slash', body: JSON.stringify({ ...valid, id: 'a/b' }), status: 400, field: 'id' },
    { name: '__proto__ as the id', body: '{"__proto__":{"id":"c-bad"},"messages":[]}', status: 400, field: 'id' },
    { name: 'no messages', body: JSON.stringify({ ...valid, messages: [] }), status: 400, field: 'messages' },
    { name: 'regenerate', body: JSON.stringify({ ...valid, trigger: 'regenerate-message' }), status: 400, field: 'trigger' },
    { name: 'an unknown trigger', body: JSON.stringify({ ...valid, trigger: 'resume' }), status: 400, field: 'trigger' },
    { name: 'editing an earlier message', body: JSON.stringify({ ...valid, messageId: 'u0' }), status: 400, field: 'messageId' },
    {
      name: 'a system message last',
      body: JSON.stringify({ ...valid, messages: [{ id: 's', role: 'system', parts: [] }] }),
      status: 400,
      field: 'messages[0].role',
    },
    {
      name: 'parts not an array',
      body: JSON.stringify({ ...valid, messages: [{ id: 'u1', role: 'user', parts: 'Hi' }] }),
      status: 400,
      field: 'messages[0].parts',
    },
    {
      name: 'a file part whose data: URL is not base64',
      body: JSON.stringify({
        ...valid,
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'file', url: 'data:,x', mediaType: 'text/plain' }] }],
      }),
      status: 400,
      field: 'messages[0].parts[0]',
    },
    {
      name: 'a file part by a file: URL',
      body: JSON.stringify({
        ...valid,
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'file', url: 'file:///etc/passwd', mediaType: 'image/png' }] }],
      }),
      status: 400,
      field: 'messages[0].parts[0]',
    },
    {
      name: 'a file part without its media type',
      body: JSON.stringify({ ...valid, messages: [{ id: 'u1', role: 'user', parts: [{ type: 'file', url: 'https://example.com/a' }] }] }),
      status: 400,
      field: 'messages[0].parts[0].mediaType',
    },
    {
      name: 'a part the run does not take',
      body: JSON.stringify({
        ...valid,
        messages: [{ id: 'u1', role: 'user', parts: [{ type: 'source-url', url: 'https://example.com' }] }],
      }),
      status: 400,
      field: 'messages[0].parts[0].type',
    },
    {
      name: 'a text part without text',
      body: JSON.stringify({ ...valid, messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 5 }] }] }),
      status: 400,
      field: 'messages[0].parts[0].text',
    },
    {
      name: 'only blank text',
      body: JSON.stringify({ ...valid, messages: [userMessage('   ')] }),
      status: 400,
      field: 'messages[0].parts',
    },
    {
      name: 'an assistant message without approval responses',
      body: JSON.stringify({ ...valid, messages: [{ id: 'm1', role: 'assistant', parts: [{ type: 'text', text: 'Hi' }] }] }),
      status: 400,
      field: 'messages[0]',
    },
    {
      name: 'an approval without approved',
      body: JSON.stringify({
        ...valid,
        messages: [
          {
            id: 'm1',
            role: 'assistant',
            parts: [{ type: 'tool-pay', toolCallId: 'c', state: 'approval-responded', approval: { id: 'c' } }],
          },
        ],
      }),
      status: 400,
      field: 'messages[0].parts[0].approval.approved',
    },
    {
      name: 'an approval for no waiting call',
      body: JSON.stringify({
        ...valid,
        messages: [
          {
            id: 'm1',
            role: 'assistant',
            parts: [{ type: 'tool-pay', toolCallId: 'c', state: 'approval-responded', approval: { id: 'c', approved: true } }],
          },
        ],
      }),
      status: 409,
      field: 'messages[0]',
    },
  ];

  it(`answers each of ${cases.length} bad bodies with a problem naming the field, and leaves the host alone`, async () => {
    const service = await startService([textStep('Hi.')]);
    for (const { name, body, type, status, field } of cases) {
      const response = await fetch(`${service.url}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': type ?? 'application/json' },
        body,
      });
      if (status === 200) {
        expect(response.status, name).toBe(200);
        await response.text();
        continue;
      }
      expect({ name, status: response.status, type: response.headers.get('content-type') }).toEqual({
        name,
        status,
        type: 'application/problem+json',
      });
      const problem = (await response.json()) as { status: number; detail: string; field?: string };
      expect({ name, field: problem.field }).toEqual({ name, field });
      expect(problem.detail, name).not.toMatch(/\n\s+at /);
    }
    // The one good body made the one conversation; nothing else was stored.
    expect((await service.host.list()).map(({ id }) => id)).toEqual(['c-bad']);
    expect(service.wire.requests).toHaveLength(1);
  });

  it('authorizes by the body id: false is a 403, a throw a 401, with no conversation data; the host is not asked', async () => {
    const asked: string[] = [];
    const service = await startService([textStep('Secret answer.')], {
      authorize: (request, id) => {
        asked.push(id);
        if (request.headers.get('authorization') === null) throw new Error('no token');
        return request.headers.get('authorization') === 'Bearer good';
      },
    });
    const post = (headers: Record<string, string>) =>
      fetch(`${service.url}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ id: 'c-auth', trigger: 'submit-message', messages: [userMessage('Hi')] }),
      });
    const missing = await post({});
    expect(missing.status).toBe(401);
    const wrong = await post({ authorization: 'Bearer bad' });
    expect(wrong.status).toBe(403);
    expect(await service.host.get('c-auth')).toBeUndefined();
    const good = await post({ authorization: 'Bearer good' });
    expect(good.status).toBe(200);
    expect(good.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(await good.text()).toContain('"delta":"answer."');
    expect(asked).toEqual(['c-auth', 'c-auth', 'c-auth']);
    for (const path of ['stream', 'messages']) {
      const refused = await fetch(`${service.url}/api/chat/c-auth/${path}`, { headers: { authorization: 'Bearer bad' } });
      expect(refused.status).toBe(403);
      expect(await refused.text()).not.toContain('Secret');
    }
  });

  it('sessionData from the request reaches the tools; a bad id in a path is a 400', async () => {
    const service = await startService([toolCallsStep([{ id: 'call_who', name: 'whoami', args: {} }]), textStep('You are Ada.')], {
      sessionData: (request) => ({ user: request.headers.get('x-user') }),
    });
    const transport = new DefaultChatTransport({ api: `${service.url}/api/chat`, headers: { 'x-user': 'ada' } });
    const stream = await transport.sendMessages({
      chatId: 'c-who',
      messages: [userMessage('Who am I?')],
      trigger: 'submit-message',
      messageId: undefined,
      abortSignal: undefined,
    });
    let final: UIMessage | undefined;
    for await (const message of readUIMessageStream({ stream })) final = message;
    expect(toolPart(final, 'call_who')).toMatchObject({ state: 'output-available', output: 'you are ada' });
    for (const path of ['..%2F..', 'a%20b', 'x'.repeat(200)]) {
      const response = await fetch(`${service.url}/api/chat/${path}/stream`);
      expect({ path, status: response.status }).toEqual({ path, status: 400 });
      expect(((await response.json()) as { field: string }).field).toBe('id');
    }
  });

  it('takes a body another handler read already, when it is handed over', async () => {
    const service = await startService([textStep('Read.')]);
    const read = async () => {
      const request = new Request('http://127.0.0.1/api/chat', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: 'c-read', trigger: 'submit-message', messages: [userMessage('Hi')] }),
      });
      return { request, json: (await request.json()) as unknown };
    };
    const first = await read();
    const refused = await handleChatRequest(service.host, first.request, { authorize: () => true });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { detail: string }).detail).toMatch(/already read/);
    const second = await read();
    const answered = await handleChatRequest(service.host, second.request, { authorize: () => true, body: { json: second.json } });
    expect(answered.status).toBe(200);
    expect(await answered.text()).toContain('"delta":"Read."');
  });

  it('a message while the run waits for approval is a 409; the run still waits', async () => {
    const service = await startService([toolCallsStep([{ id: 'call_pay', name: 'pay', args: { amount: 5 } }])]);
    const chat = new NodeChat(service.url, 'c-busy');
    await chat.sendMessage({ text: 'Pay 5' });
    const response = await fetch(`${service.url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'c-busy', trigger: 'submit-message', messages: [userMessage('And now?')] }),
    });
    expect(response.status).toBe(409);
    expect(((await response.json()) as { detail: string }).detail).toMatch(/awaitingApproval/);
    expect((await service.host.get('c-busy'))?.pendingApprovals.map(({ toolCallId }) => toolCallId)).toEqual(['call_pay']);
  });
});

describe('the UI message stream, harder runs', () => {
  it('resumes a run that crossed an approval: the replay passes over the old pause and streams on', async () => {
    const gate = deferred();
    const service = await startService([
      toolCallsStep([{ id: 'call_pay', name: 'pay', args: { amount: 7 } }]),
      gatedTextStep('Paid ', '7 euros.', gate.promise),
    ]);
    const chat = new NodeChat(service.url, 'c-crossed');
    await chat.sendMessage({ text: 'Pay 7' });
    await chat.addToolApprovalResponse({ id: 'call_pay', approved: true });
    await until(
      () => chat.lastMessage?.parts.some((part) => part.type === 'text' && part.text === 'Paid ') === true,
      'the first words after approval',
    );

    const reloaded = new NodeChat(service.url, 'c-crossed', await loaded(service.url, 'c-crossed'));
    // Loaded mid-run: the answer so far, its id the stream's.
    expect(reloaded.messages.map((message) => message.id)).toEqual(['m0', 'm1']);
    const resuming = reloaded.resumeStream();
    await until(() => reloaded.status === 'streaming', 'the replay');
    gate.resolve();
    await resuming;
    await until(() => chat.status === 'ready', 'the first chat is done');
    const expected = [
      { type: 'step-start' },
      { type: 'tool-pay', toolCallId: 'call_pay', state: 'output-available', input: { amount: 7 }, output: 'paid €7' },
      { type: 'step-start' },
      { type: 'text', text: 'Paid 7 euros.' },
    ];
    expect(reloaded.errors).toEqual([]);
    expect(reloaded.messages.map((message) => message.id)).toEqual(['m0', 'm1']);
    expect(reloaded.lastMessage?.parts.map(shown)).toEqual(expected);
    expect(chat.lastMessage?.parts.map(shown)).toEqual(expected);
    expect(service.payments).toEqual([7]);
  });

  it('a retried request: what the failed attempt streamed is closed, a call it left half-streamed ends as an input error', async () => {
    const service = await startService(
      [
        (_request, control) => {
          control.res.writeHead(200, { 'content-type': 'text/event-stream' });
          control.res.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: 'Let me ' }))}\n\n`);
          control.res.write(
            `data: ${JSON.stringify(chunk({ tool_calls: [{ index: 0, id: 'call_lost', type: 'function', function: { name: 'add', arguments: '{"a":' } }] }))}\n\n`,
          );
          // The connection drops mid-answer: a network error, retried.
          setTimeout(() => control.socket.destroy(), 20);
        },
        textStep('Four.'),
      ],
      { retries: 1 },
    );
    const { final, errors, chunks } = await readAnswer(service.url, 'c-retry', 'What is 2+2?');
    expect(errors).toEqual([]);
    expect(final?.parts.map(shown)).toEqual([
      { type: 'step-start' },
      { type: 'text', text: 'Let me ' },
      {
        type: 'tool-add',
        toolCallId: 'call_lost',
        state: 'output-error',
        input: undefined,
        errorText: 'discarded: the request was made again',
      },
      { type: 'step-start' },
      { type: 'text', text: 'Four.' },
    ]);
    expect(chunks.filter((value) => value.type === 'start-step')).toHaveLength(2);
  });

  it("an agent's child asks for approval: its call shows in the message, and the answer reaches the child", async () => {
    const wire = await startWireServer([
      toolCallsStep([{ id: 'call_billing', name: 'billing', args: { prompt: 'Refund 30' } }]),
      toolCallsStep([{ id: 'call_refund', name: 'refund', args: { amount: 30 } }]),
      textStep('Refunded 30.'),
      textStep('Billing refunded 30.'),
    ]);
    cleanups.push(() => wire.close());
    const provider = openaiProvider({ model: 'gpt-test', apiKey: 'sk-test', baseURL: `${wire.url}/v1` });
    const refunds: number[] = [];
    const billing = createConversationMachine({
      provider,
      tools: [
        defineTool({
          name: 'refund',
          description: 'Refund an amount',
          parameters: z.object({ amount: z.number() }),
          needsApproval: true,
          execute: async ({ amount }) => {
            refunds.push(amount);
            return `refunded ${amount}`;
          },
        }),
      ],
    });
    const machine = createConversationMachine({ provider, tools: [agentTool(billing, { name: 'billing', description: 'Ask billing' })] });
    const host = createConversationHost({ machine, store: sqliteStore({ path: join(work, `chat-${++databases}.db`) }) });
    const server = createServer(toNodeListener(chatRoutes(host, { authorize: () => true })));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await host.close();
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const chat = new NodeChat(url, 'c-agent');
    await chat.sendMessage({ text: 'Refund order A-1' });
    expect(chat.errors).toEqual([]);
    expect(chat.lastMessage?.parts.map(shown)).toEqual([
      { type: 'step-start' },
      { type: 'tool-billing', toolCallId: 'call_billing', state: 'input-available', input: { prompt: 'Refund 30' } },
      { type: 'tool-refund', toolCallId: 'call_refund', state: 'approval-requested', input: { amount: 30 } },
    ]);
    // The agent call still runs, so useChat's "all answered" check says no: the page sends the answer itself.
    await chat.addToolApprovalResponse({ id: 'call_refund', approved: true });
    await chat.sendMessage();
    expect(chat.errors).toEqual([]);
    expect(refunds).toEqual([30]);
    expect(chat.lastMessage?.parts.map(shown)).toEqual([
      { type: 'step-start' },
      {
        type: 'tool-billing',
        toolCallId: 'call_billing',
        state: 'output-available',
        input: { prompt: 'Refund 30' },
        output: 'Refunded 30.',
      },
      { type: 'tool-refund', toolCallId: 'call_refund', state: 'output-available', input: { amount: 30 }, output: 'refunded 30' },
      { type: 'step-start' },
      { type: 'text', text: 'Billing refunded 30.' },
    ]);
  });

  it('a reader that stops reading is told to resume instead of growing memory', async () => {
    const wire = await startWireServer([textStep(Array.from({ length: 400 }, (_, index) => `w${index} `).join(''))]);
    cleanups.push(() => wire.close());
    const machine = createConversationMachine({
      provider: openaiProvider({ model: 'gpt-test', apiKey: 'sk-test', baseURL: `${wire.url}/v1` }),
    });
    const actor = createActor(machine, { input: { messages: [] } }).start();
    const stream = toUIMessageStream(actor, { maxBufferedChunks: 50 });
    actor.send({ type: 'user.message', content: 'Talk' });
    await until(() => actor.getSnapshot().status === 'done', 'the run ends');
    const chunks: Array<{ type: string; errorText?: string }> = [];
    for await (const value of stream as unknown as AsyncIterable<{ type: string }>) chunks.push(value);
    expect(chunks.length).toBeLessThanOrEqual(55);
    expect(chunks.slice(-2)).toEqual([{ type: 'error', errorText: 'the client fell behind the stream; resume it' }, { type: 'finish' }]);
  });
});
