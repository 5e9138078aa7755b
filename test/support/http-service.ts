/**
 * actorloop/http under test: a host on a real store behind `createConversationHandler`, served by
 * `node:http` through `toNodeListener` on 127.0.0.1, a model that answers by what the user says,
 * and an SSE client over `node:http` that can stop reading.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AnyStateMachine } from 'xstate';
import { z } from 'zod';
import {
  type ConversationHandlerOptions,
  createConversationHandler,
  type ConversationHandler,
  toNodeListener,
} from '../../src/http/index.js';
import {
  type ConversationHost,
  type ConversationMachine,
  type ConversationStore,
  createConversationHost,
  createConversationMachine,
  defineTool,
  handlerProvider,
  memoryStore,
} from '../../src/index.js';
import type { HandlerRequest } from '../../src/providers/handler/handler-provider.js';
import { deferred } from './run-conversation.js';
import { type ScriptedTurn, turnChunks } from './scripted-model.js';

/** The token the services under test take (`authorization: Bearer <token>`). */
export const token = 'test-token';
export const authorized = { authorization: `Bearer ${token}` };

/** What the model does for a request: text, tool calls, or its own chunks. */
export type Reply = Exclude<ScriptedTurn, { error: unknown }>;

/**
 * A model that answers from the conversation: `reply(lastUserText, toolResults)`. Default: tool
 * calls for "refund <order>" (which waits for approval) and "lookup <x>", then text; "say <text>"
 * streams <text> in 5-character pieces; anything else "ok".
 */
export function conversationalModel(reply: (userText: string, toolResults: number, request: HandlerRequest) => Reply = defaultReply) {
  return handlerProvider((request) => {
    const users = request.messages.filter((message) => message.role === 'user');
    const last = users.at(-1)?.content;
    const text = typeof last === 'string' ? last : '';
    const lastUserIndex = request.messages.lastIndexOf(users.at(-1) as (typeof request.messages)[number]);
    const toolResults = request.messages.slice(lastUserIndex).filter((message) => message.role === 'tool').length;
    const turn = reply(text, toolResults, request);
    return typeof turn === 'function' ? turn(request) : turnChunks(turn);
  });
}

export function defaultReply(text: string, toolResults: number): Reply {
  const refund = /^refund (\S+)/.exec(text);
  if (refund && toolResults === 0) return { toolCalls: [{ id: `call_${refund[1]}`, name: 'refund', args: { order: refund[1] } }] };
  const lookup = /^lookup (\S+)/.exec(text);
  if (lookup && toolResults === 0) return { toolCalls: [{ id: `call_${lookup[1]}`, name: 'lookup', args: { q: lookup[1] } }] };
  const say = /^say (.*)$/s.exec(text);
  if (say) return { text: say[1] as string };
  return { text: toolResults > 0 ? 'done.' : 'ok' };
}

export const tools = [
  defineTool({ name: 'lookup', parameters: z.object({ q: z.string() }), execute: async ({ q }) => `found ${q}` }),
  defineTool({
    name: 'refund',
    parameters: z.object({ order: z.string() }),
    needsApproval: true,
    execute: async ({ order }) => `refunded ${order}`,
  }),
];

export type Service = {
  url: string;
  host: ConversationHost;
  store: ConversationStore;
  handler: ConversationHandler;
  server: Server;
  /** Errors the handler reported as the server's fault. */
  reported: unknown[];
  close: () => Promise<void>;
};

/** A host on `store` behind the handler, on node:http at 127.0.0.1 (any free port). */
export async function startService(
  settings: {
    store?: ConversationStore;
    reply?: Parameters<typeof conversationalModel>[0];
    handler?: Partial<ConversationHandlerOptions>;
    hostId?: string;
    /** Another machine to host (a workflow) in place of the conversation machine of `reply`. */
    machine?: AnyStateMachine;
  } = {},
): Promise<Service> {
  const store = settings.store ?? memoryStore();
  const machine = settings.machine ?? createConversationMachine({ provider: conversationalModel(settings.reply), tools });
  // Typed as a conversation host: a workflow's routes are called through `call` with JSON, untyped anyway.
  const host = createConversationHost({
    machine: machine as ConversationMachine,
    store,
    ...(settings.hostId ? { hostId: settings.hostId } : {}),
  });
  const reported: unknown[] = [];
  const handler = createConversationHandler(host, {
    authorize: (request) => {
      const header = request.headers.get('authorization');
      if (header === null) throw new Error('no token');
      return header === `Bearer ${token}`;
    },
    store,
    onError: (error) => reported.push(error),
    ...settings.handler,
  });
  const server = createServer(toNodeListener(handler));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let closed = false;
  return {
    url,
    host,
    store,
    handler,
    server,
    reported,
    close: async () => {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await host.close();
    },
  };
}

export type Answer = { status: number; headers: Headers; text: string; json: () => Record<string, unknown> };

/** One request with `fetch`; the body as sent (a string is sent as it is, anything else as JSON). */
export async function call(
  url: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const { body } = options;
  const response = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...authorized,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

export type SseMessage = { id: string | undefined; event: string; data: Record<string, unknown> };

/** Parses SSE text into messages and counts comment lines; what is left (an unfinished message) is returned. */
export function parseSse(buffer: string, messages: SseMessage[], comments: { count: number }): string {
  let rest = buffer;
  for (let end = rest.indexOf('\n\n'); end >= 0; end = rest.indexOf('\n\n')) {
    const block = rest.slice(0, end);
    rest = rest.slice(end + 2);
    let id: string | undefined;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) comments.count++;
      else if (line.startsWith('id: ')) id = line.slice(4);
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length > 0) messages.push({ id, event, data: JSON.parse(data.join('\n')) as Record<string, unknown> });
  }
  return rest;
}

/** An SSE client over node:http: the messages as they come; it can stop reading (`pause`) and leave. */
export function openEvents(url: string, path: string, headers: Record<string, string> = {}) {
  const messages: SseMessage[] = [];
  const comments = { count: 0 };
  let buffer = '';
  const status = deferred<{ status: number; headers: Record<string, unknown> }>();
  const ended = deferred();
  let body = '';
  let response: import('node:http').IncomingMessage | undefined;
  const request = httpRequest(`${url}${path}`, { headers: { accept: 'text/event-stream', ...authorized, ...headers } }, (incoming) => {
    response = incoming;
    status.resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers });
    incoming.setEncoding('utf8');
    incoming.on('data', (text: string) => {
      if ((incoming.statusCode ?? 0) !== 200) {
        body += text;
        return;
      }
      buffer = parseSse(buffer + text, messages, comments);
    });
    incoming.on('end', () => ended.resolve());
    incoming.on('error', () => ended.resolve());
    incoming.on('close', () => ended.resolve());
  });
  request.on('error', () => ended.resolve());
  request.end();
  return {
    messages,
    comments,
    status: status.promise,
    ended: ended.promise,
    body: () => body,
    /** Waits (polling) until `check` holds for the messages so far. */
    async until(check: (messages: SseMessage[]) => boolean, what = 'the expected events', timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!check(messages)) {
        if (Date.now() > deadline)
          throw new Error(`no ${what} in ${timeoutMs} ms; got ${messages.map((message) => message.event).join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    pause: () => response?.pause(),
    resume: () => response?.resume(),
    leave: () => request.destroy(),
  };
}

/** The text the `text.delta` events of a list of messages carry, in order. */
export const deltasOf = (messages: readonly SseMessage[]) =>
  messages.map((message) => (message.event === 'text.delta' ? String(message.data.delta) : '')).join('');

/** A store's whole content as JSON text: every conversation, its log and its stream. */
export async function storeContent(store: ConversationStore): Promise<string> {
  const all = await store.list({ limit: 100_000 });
  const content = [];
  for (const { id } of all) {
    content.push({
      conversation: await store.load(id),
      log: await store.readLog(id, { limit: 100_000 }),
      stream: (await store.readStream?.(id, { limit: 100_000 })) ?? [],
    });
  }
  return JSON.stringify(content);
}

/** The host, with its follows counted: what a handler follows and never stops shows as a count above zero. */
export function countingFollows(host: ConversationHost): { host: ConversationHost; open: { count: number } } {
  const open = { count: 0 };
  const counted: ConversationHost = {
    ...host,
    follow: (id, observer, options) => {
      open.count++;
      const stopFollowing = host.follow(id, observer, options);
      let stopped = false;
      return () => {
        if (!stopped) open.count--;
        stopped = true;
        stopFollowing();
      };
    },
  };
  return { host: counted, open };
}

/** Waits (polling) until `check` holds. */
export async function until(check: () => boolean | Promise<boolean>, what = 'the condition', timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} did not hold in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
