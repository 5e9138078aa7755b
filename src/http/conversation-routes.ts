import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import { parseStreamId } from '../host/conversation-stream.js';
import { eventStreamResponse } from './event-stream.js';
import { HttpProblemError } from './http-problem-error.js';
import { openApiDocument } from './openapi-document.js';
import type { ProblemTypeName } from './problem.js';
import { readJsonBody } from './read-json-body.js';
import { fields } from './request-fields.js';
import { defineRoute, type Route } from './route.js';
import { chatMessages, handleChatRequest, resumeChatStream } from './ui-message/handle-chat-request.js';
import { bytesFromBase64 } from '../util/base64.js';

const json = (value: unknown, status = 200) =>
  new Response(JSON.stringify(value), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  });

const view = { $ref: '#/components/schemas/ConversationView' };
const viewAnswer = (status: number, description: string) => ({ status, description, type: 'application/json' as const, schema: view });

const toolCallId = fields.text('The id of the tool call (a `toolCallId` of `pendingApprovals`)', { maxLength: 256 });
const reason = fields.optional(fields.text('Why, in words the model reads', { maxLength: 4_000 }));

/** A stream id as SSE's `Last-Event-ID` carries it back: `"<revision>.<n>.<tag>"`. */
const streamPosition = fields.matching('The id of the last event the client received', {
  expected: 'an event id this stream sent ("<revision>.<n>.<tag>")',
  maxLength: 64,
  accepts: (value) => parseStreamId(value) !== undefined,
});

/** What an event to a conversation that must exist may meet at the host. */
const eventProblems: ProblemTypeName[] = [
  'conversation-not-found',
  'event-rejected',
  'conversation-busy',
  'conversation-conflict',
  'stored-conversation-unreadable',
];

/** Media `GET …/media` shows in place: raster images, PDFs, audio, plain text. */
const servedInline = /^(image\/(png|jpeg|gif|webp)|application\/pdf|audio\/[a-z0-9.+-]+|text\/plain)$/i;

/** Log entries (or steps) a page holds at most. */
const maxHistoryPage = 1_000;

/** The query of a paged read: `afterSeq` (the last `seq` seen) and `limit`. */
const pageQuery = (what: string) => ({
  afterSeq: fields.optional(fields.integer(`${what} after this seq`, { minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
  limit: fields.optional(fields.integer(`${what} at most (default 100)`, { minimum: 1, maximum: maxHistoryPage })),
});

/** One page of a read by `seq`, and `nextAfterSeq` when another follows (one item more than asked tells). */
async function readPage<Item extends { seq: number }>(
  query: { afterSeq?: number; limit?: number },
  read: (options: { afterSeq?: number; limit: number }) => Promise<Item[]>,
): Promise<{ items: Item[]; next: { nextAfterSeq?: number } }> {
  const limit = query.limit ?? 100;
  const found = await read({ ...(query.afterSeq === undefined ? {} : { afterSeq: query.afterSeq }), limit: limit + 1 });
  const items = found.slice(0, limit);
  const last = items.at(-1);
  return { items, next: found.length > limit && last ? { nextAfterSeq: last.seq } : {} };
}

/**
 * The routes of `createConversationHandler`, in the order the router tries them; the OpenAPI
 * document (`GET {basePath}/openapi.json`) is generated from the same entries.
 *
 * @example
 * ```ts
 * for (const route of conversationRoutes) console.log(route.method, route.path, route.summary);
 * ```
 */
export const conversationRoutes: readonly Route[] = [
  defineRoute({
    method: 'POST',
    path: '/conversations/{id}/messages',
    operationId: 'sendMessage',
    summary: 'Send a user message',
    description:
      'Starts the conversation when it is new, or its next run when its last run ended. Answers once the message is stored; ' +
      'the run goes on, its events on `GET /conversations/{id}/events`. `sessionData` (any JSON) replaces what the runs of the ' +
      'conversation get from this run on.',
    authorize: 'path',
    body: {
      content: fields.userContent('What the user says: text, or text, image and file parts'),
      sessionData: fields.optional(fields.json('Per-run data handed to the tools (plain JSON; `null` clears it)')),
    },
    answers: [viewAnswer(202, 'Stored; the run has started')],
    problems: ['event-rejected', 'conversation-busy', 'conversation-conflict', 'stored-conversation-unreadable'],
    handle: async ({ host, id, body }) =>
      json(
        await host.send(
          id,
          { type: 'user.message', content: body.content },
          body.sessionData === undefined ? {} : { sessionData: body.sessionData },
        ),
        202,
      ),
  }),
  defineRoute({
    method: 'POST',
    path: '/conversations/{id}/start',
    operationId: 'startRun',
    summary: 'Start a run from an input (a workflow)',
    description:
      "Starts a run of the host's machine from `input` (the machine's own; for a conversation machine a `ConversationInput`, " +
      'e.g. `{ "prompt": "Hi" }`) with `sessionData` as `input.sessionData`; answers once its first state is stored. A workflow runs ' +
      'until its machine reaches a final state (`status` `running`, `awaitingApproval` while a conversation in it waits, then ' +
      "`done`, `halted` or `error`); its events on `GET /conversations/{id}/events`, each conversation's as `agent.event` with its " +
      'path. A workflow id whose last run ended starts again; a conversation id must be new.',
    authorize: 'path',
    body: {
      input: fields.optional(fields.json("The machine's input (plain JSON)")),
      sessionData: fields.optional(fields.json('Per-run data, given to the run as `input.sessionData` (plain JSON)')),
    },
    answers: [viewAnswer(201, 'Stored; the run has started')],
    problems: ['event-rejected', 'conversation-busy', 'conversation-exists', 'conversation-conflict', 'stored-conversation-unreadable'],
    handle: async ({ host, id, body }) => {
      const options = {
        ...(body.input === undefined ? {} : { input: body.input }),
        ...(body.sessionData === undefined ? {} : { sessionData: body.sessionData }),
      };
      try {
        return json(await host.start(id, options as never), 201);
      } catch (error) {
        // The host names its own option (`options.input`); the client sent the body's field.
        if (InvalidOptionsError.isInstance(error) && error.option.startsWith('options.')) {
          const field = error.option.slice('options.'.length);
          throw new HttpProblemError('invalid-field', error.message.replace(/^Invalid option options\./, ''), { field });
        }
        throw error;
      }
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/conversations/{id}/send',
    operationId: 'sendEvent',
    summary: 'Send a workflow one of its own events',
    description:
      "Sends `event` (`{ type, ... }`, plain JSON) to the run in progress: a workflow takes its chart's events when its chart " +
      'takes them now (else `event-rejected`, nothing stored); `tool.approve` / `tool.deny` go to the conversation in it that ' +
      'waits for that call; `cancel` ends it `halted` unless its chart handles `cancel` itself. Answers once what the event led to is stored.',
    authorize: 'path',
    body: { event: fields.json('The event: an object with a `type`') },
    answers: [viewAnswer(200, 'Stored')],
    problems: eventProblems,
    handle: async ({ host, id, body }) => {
      try {
        return json(await host.send(id, body.event as never));
      } catch (error) {
        if (InvalidOptionsError.isInstance(error) && error.option.startsWith('event')) {
          throw new HttpProblemError('invalid-field', error.message.replace(/^Invalid option /, ''), { field: error.option });
        }
        throw error;
      }
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/conversations/{id}',
    operationId: 'getConversation',
    summary: 'The conversation now, or at a stored step',
    description:
      'Its status, the state of its current (or last) run, the whole history, the tool calls waiting for approval and the ' +
      'usage of the run. With `?seq=`, the conversation as that stored step left it (a `seq` of `GET /conversations/{id}/steps`).',
    authorize: 'path',
    query: { seq: fields.optional(fields.integer('A stored step (time travel)', { minimum: 1, maximum: Number.MAX_SAFE_INTEGER })) },
    answers: [viewAnswer(200, 'The conversation')],
    problems: ['conversation-not-found', 'step-not-found', 'stored-conversation-unreadable'],
    handle: async ({ host, id, query }) => {
      const found = await host.get(id, query.seq === undefined ? {} : { seq: query.seq });
      if (!found) throw notFound(id);
      return json(found);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/conversations/{id}/steps',
    operationId: 'getSteps',
    summary: 'The stored steps (time travel), a page at a time',
    description:
      'One step per write — each state a run entered, each tool call started or settled, each approval — with its `seq`, time, ' +
      'status and state, oldest first. `GET /conversations/{id}?seq=` shows one; `POST /conversations/{id}/fork` starts a new ' +
      'conversation from one. Page with `afterSeq` and `limit`; `nextAfterSeq` is there when more follow.',
    authorize: 'path',
    query: pageQuery('Steps'),
    answers: [
      { status: 200, description: 'A page of steps', type: 'application/json', schema: { $ref: '#/components/schemas/StepsPage' } },
    ],
    problems: ['conversation-not-found', 'stored-conversation-unreadable'],
    handle: async ({ host, id, query }) => {
      const { items, next } = await readPage(query, (options) => host.history(id, options));
      return json({ steps: items, ...next });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/conversations/{id}/fork',
    operationId: 'forkConversation',
    summary: 'A new conversation from a stored step',
    description:
      "Conversation `newId` (default `<id>-<seq>-<random>`) starts from step `seq`'s snapshot: nothing that had finished by then " +
      'runs again, a step in the middle of a run goes on from there, the original is untouched. `messages` replaces the ' +
      'history at that step ("what if the tool had answered X"), at a step between rounds. `newId` must be authorized too.',
    authorize: 'path',
    body: {
      seq: fields.wholeNumber('The step to fork from (a `seq` of `GET /conversations/{id}/steps`)', {
        minimum: 1,
        maximum: Number.MAX_SAFE_INTEGER,
      }),
      newId: fields.optional(fields.conversationId('The id of the new conversation')),
      messages: fields.optional(fields.json("The history to put in place of the step's (an array of messages)")),
    },
    answers: [viewAnswer(201, 'The new conversation, stored')],
    problems: ['conversation-not-found', 'step-not-found', 'conversation-exists', 'stored-conversation-unreadable'],
    handle: async ({ host, id, body, request, settings }) => {
      const newId = body.newId ?? `${id}-${body.seq}-${Math.random().toString(36).slice(2, 8)}`;
      if ((await settings.authorize(request, newId)) !== true) {
        throw new HttpProblemError('forbidden', 'the request may not create the conversation newId', { field: 'newId' });
      }
      let forked: Awaited<ReturnType<typeof host.fork>>;
      try {
        forked = await host.fork(id, {
          seq: body.seq,
          newId,
          ...(body.messages === undefined ? {} : { messages: body.messages as never }),
        });
      } catch (error) {
        // The host names its own option (`options.messages`); the client sent the body's field.
        if (InvalidOptionsError.isInstance(error) && error.option.startsWith('options.')) {
          const field = error.option.slice('options.'.length);
          throw new HttpProblemError('invalid-field', error.message.replace(/^Invalid option options\./, ''), { field });
        }
        throw error;
      }
      return new Response(JSON.stringify(forked), {
        status: 201,
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'cache-control': 'no-store',
          location: `${settings.basePath}/conversations/${encodeURIComponent(newId)}`,
        },
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/conversations/{id}/events',
    operationId: 'followConversation',
    summary: 'Follow the conversation (Server-Sent Events)',
    description:
      'Every event its runs emit and every state change, each with `id:` (its stream id), `event:` (its type) and `data:` ' +
      '(the event as JSON), across runs, until the client leaves. A client that reconnects with `Last-Event-ID` (or ' +
      '`?lastEventId=`) gets exactly what it missed, also from another process; without one, the stream starts at the first ' +
      'event of the run in progress, or of the last run (`?from=now`: from now on). Works before the conversation exists. ' +
      'A comment line every `heartbeatMs`. A client that lets `maxBufferedBytes` pile up unread gets `event: resume` ' +
      '`{ lastEventId, reason }` and the stream ends: reconnecting with that id loses nothing.',
    authorize: 'path',
    query: {
      lastEventId: fields.optional(streamPosition),
      from: fields.optional(fields.choice('Where a stream without a last event id starts', ['run', 'now'] as const)),
    },
    headers: { 'Last-Event-ID': fields.optional(streamPosition) },
    answers: [
      {
        status: 200,
        description: 'The event stream',
        type: 'text/event-stream',
        schema: { $ref: '#/components/schemas/StreamEvent' },
      },
    ],
    handle: async ({ request, host, id, query, headers, settings }) => {
      // The header is what an EventSource sends when it reconnects: newer than the URL it was opened with.
      const after = headers['Last-Event-ID'] ?? query.lastEventId;
      const follow = after === undefined ? { from: query.from ?? 'run' } : { after };
      return eventStreamResponse(host, id, follow, settings, request.signal);
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/conversations/{id}/approve',
    operationId: 'approveToolCall',
    summary: 'Approve a tool call that waits for approval',
    authorize: 'path',
    body: { toolCallId },
    answers: [viewAnswer(200, 'Stored; the run goes on once every waiting call is answered')],
    problems: eventProblems,
    handle: async ({ host, id, body }) => json(await host.send(id, { type: 'tool.approve', toolCallId: body.toolCallId })),
  }),
  defineRoute({
    method: 'POST',
    path: '/conversations/{id}/deny',
    operationId: 'denyToolCall',
    summary: 'Deny a tool call that waits for approval',
    description: 'The call gets an error result saying it was denied (with `reason`); the model reads it and goes on.',
    authorize: 'path',
    body: { toolCallId, reason },
    answers: [viewAnswer(200, 'Stored')],
    problems: eventProblems,
    handle: async ({ host, id, body }) =>
      json(
        await host.send(id, {
          type: 'tool.deny',
          toolCallId: body.toolCallId,
          ...(body.reason === undefined ? {} : { reason: body.reason }),
        }),
      ),
  }),
  defineRoute({
    method: 'POST',
    path: '/conversations/{id}/cancel',
    operationId: 'cancelRun',
    summary: 'Cancel the run in progress',
    description: 'Aborts the request and every running tool; the run ends `halted` (`cancelled`), every tool call answered.',
    authorize: 'path',
    body: { reason },
    answers: [viewAnswer(200, 'Stored: the run has ended')],
    problems: eventProblems,
    handle: async ({ host, id, body }) =>
      json(await host.send(id, { type: 'cancel', ...(body.reason === undefined ? {} : { reason: body.reason }) })),
  }),
  defineRoute({
    method: 'GET',
    path: '/conversations/{id}/history',
    operationId: 'getHistory',
    summary: 'The stored event log, a page at a time',
    description:
      'The user messages, approvals, denials and cancels the runs took, every tool call and result, compactions and how each ' +
      'run ended, in order, each with its `seq` and time. Page with `afterSeq` (the `seq` of the last entry seen) and `limit`; ' +
      '`nextAfterSeq` is there when more follow.',
    authorize: 'path',
    query: pageQuery('Entries'),
    answers: [
      { status: 200, description: 'A page of the log', type: 'application/json', schema: { $ref: '#/components/schemas/HistoryPage' } },
    ],
    problems: ['conversation-not-found', 'history-unavailable', 'stored-conversation-unreadable'],
    handle: async ({ host, id, query, settings }) => {
      if (!settings.readLog) {
        throw new HttpProblemError(
          'history-unavailable',
          "the history is read from the store: pass the host's store to createConversationHandler ({ store })",
        );
      }
      const readLog = settings.readLog;
      const { items, next } = await readPage(query, (options) => readLog(id, options));
      if (items.length === 0 && query.afterSeq === undefined && !(await host.get(id))) throw notFound(id);
      return json({ entries: items, ...next });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/conversations/{id}/media',
    operationId: 'getMedia',
    summary: 'A medium the conversation refers to, by its reference',
    description:
      'The bytes of an image or file the stored conversation, its log or its stored stream refer to as `{ type, ref, mediaType, bytes }` ' +
      '(a store that keeps media once): `?ref=sha256:…`. Answered with its media type; the same reference is always the same bytes, ' +
      'so it may be cached for good.',
    authorize: 'path',
    query: {
      ref: fields.matching('The reference of the medium (`sha256:` and 64 hex digits)', {
        expected: 'a media reference such as sha256:9f86d0…',
        maxLength: 71,
        accepts: (value) => /^sha256:[0-9a-f]{64}$/.test(value),
      }),
    },
    answers: [{ status: 200, description: 'The bytes, with their media type' }],
    problems: ['conversation-not-found', 'media-not-found', 'media-unavailable'],
    handle: async ({ id, query, settings }) => {
      const media = settings.media;
      if (!media) {
        throw new HttpProblemError(
          'media-unavailable',
          "media are read from a store that keeps them once: pass the host's store (memoryStore, sqliteStore, postgresStore) to createConversationHandler ({ store })",
        );
      }
      const stored = await media.load(id);
      if (!stored) throw notFound(id);
      const needle = `"ref":"${query.ref}"`;
      // Only a medium this conversation refers to: a reference alone does not open another conversation's media.
      const referred = stored.snapshot.includes(needle) || JSON.stringify(await media.readLog(id, { limit: 100_000 })).includes(needle);
      const found = referred ? await media.readMedia(query.ref) : undefined;
      if (!found?.data)
        throw new HttpProblemError('media-not-found', `conversation ${JSON.stringify(id)} refers to no medium ${query.ref}`, {
          field: 'ref',
        });
      // A type a browser could run as a page (text/html, SVG) is served as a download, and nothing served here runs script.
      const inline = servedInline.test(found.mediaType);
      return new Response(bytesFromBase64(found.data), {
        headers: {
          'content-type': inline ? found.mediaType : 'application/octet-stream',
          'content-length': String(found.bytes),
          'cache-control': 'private, max-age=31536000, immutable',
          etag: `"${query.ref}"`,
          'x-content-type-options': 'nosniff',
          'content-security-policy': "sandbox; default-src 'none'",
          ...(inline ? {} : { 'content-disposition': 'attachment' }),
        },
      });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/chat',
    operationId: 'chat',
    summary: "A chat turn from the AI SDK's useChat (UI message stream protocol)",
    description:
      "Takes the body `useChat`'s default transport sends (`{ id, messages, trigger, messageId? }`): the new user message of " +
      'conversation `id` (it starts the conversation if it is new), or answers to the approvals it waits for ' +
      '(`addToolApprovalResponse`). Answers with the UI message stream (SSE, `x-vercel-ai-ui-message-stream: v1`) of what ' +
      "follows, until the run ends or waits for approval. Authorized with the body's `id`. See docs/ui-protocol.md.",
    authorize: 'route',
    answers: [{ status: 200, description: 'The UI message stream', type: 'text/event-stream' }],
    problems: ['malformed-body', 'invalid-field', 'body-too-large', 'unsupported-media-type', 'body-timeout', ...eventProblems],
    handle: async ({ host, request, settings }) => {
      const body = (await readJsonBody(request, settings.bodyLimits)) ?? {};
      return handleChatRequest(host, request, {
        authorize: settings.authorize,
        body: { json: body },
        heartbeatMs: settings.heartbeatMs,
        ...(settings.chatSessionData ? { sessionData: settings.chatSessionData } : {}),
      });
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/chat/{id}/stream',
    operationId: 'resumeChat',
    summary: 'The chat answer in progress, replayed then live (useChat `resume: true`)',
    description:
      'The UI message stream of the run in progress from its first event, then live; 204 when no run is in progress (also ' +
      'while it waits for approval: `GET /chat/{id}/messages` shows those).',
    authorize: 'path',
    answers: [
      { status: 200, description: 'The UI message stream', type: 'text/event-stream' },
      { status: 204, description: 'No run in progress' },
    ],
    problems: ['stored-conversation-unreadable'],
    handle: async ({ host, id, settings }) => resumeChatStream(host, id, { heartbeatMs: settings.heartbeatMs }),
  }),
  defineRoute({
    method: 'GET',
    path: '/chat/{id}/messages',
    operationId: 'getChatMessages',
    summary: "The conversation as useChat's UI messages",
    description:
      "The history as `UIMessage`s (with the tool calls waiting for approval), `[]` when there is none: a page's initial messages.",
    authorize: 'path',
    answers: [
      { status: 200, description: 'The UI messages', type: 'application/json', schema: { type: 'array', items: { type: 'object' } } },
    ],
    problems: ['stored-conversation-unreadable'],
    handle: async ({ host, id }) => json(await chatMessages(host, id)),
  }),
  defineRoute({
    method: 'GET',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This API as an OpenAPI 3.1 document',
    description: 'Generated from the route table the handler routes with. Needs no authorization: it names no conversation.',
    authorize: 'none',
    answers: [{ status: 200, description: 'The OpenAPI document', type: 'application/json', schema: { type: 'object' } }],
    handle: async ({ routes, settings }) => json(openApiDocument(routes, settings)),
  }),
];

const notFound = (id: string) =>
  new HttpProblemError('conversation-not-found', `id: expected a conversation that exists, got ${JSON.stringify(id)}`, { field: 'id' });
