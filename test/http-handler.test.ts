/**
 * `createConversationHandler` (docs/http.md): its options, a conversation driven over real HTTP
 * through `toNodeListener` (message, view, approve, deny, cancel, history), authorization before
 * anything is read or loaded, each host error's status and problem type, and the OpenAPI document
 * generated from the route table the router uses.
 */
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ConversationHandlerOptions,
  conversationRoutes,
  createConversationHandler,
  problemTypePrefix,
  problemTypes,
} from '../src/http/index.js';
import {
  type ConversationStore,
  ConversationConflictError,
  type ConversationView,
  createConversationHost,
  createConversationMachine,
  InvalidOptionsError,
  memoryStore,
} from '../src/index.js';
import type { ConversationStep } from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { deferred } from './support/run-conversation.js';
import { call, conversationalModel, defaultReply, type Service, startService, tools, until } from './support/http-service.js';

const services: Service[] = [];
afterEach(async () => {
  for (const service of services.splice(0)) await service.close();
});
async function service(settings: Parameters<typeof startService>[0] = {}) {
  const started = await startService(settings);
  services.push(started);
  return started;
}

const viewOf = (answer: { json: () => Record<string, unknown> }) => answer.json() as unknown as ConversationView;
const problemOf = (answer: { json: () => Record<string, unknown> }) =>
  answer.json() as { type: string; status: number; detail: string; field?: string };

/** A turn that streams nothing until `gate` opens (or the run is cancelled). */
const held = (gate: Promise<void>) =>
  async function* ({ signal }: { signal: AbortSignal }): AsyncGenerator<OpenAIChatCompletionChunk> {
    await Promise.race([gate, new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))]);
    signal.throwIfAborted();
    yield { choices: [{ index: 0, delta: { content: 'at last' }, finish_reason: 'stop' }] };
  };

describe('createConversationHandler: options', () => {
  const host = createConversationHost({
    machine: createConversationMachine({ provider: conversationalModel(), tools }),
    store: memoryStore(),
  });

  it('refuses to be created without authorize: there is no default that lets everyone in', () => {
    const create = (options: unknown) => () => createConversationHandler(host, options as ConversationHandlerOptions);
    expect(create({})).toThrow(InvalidOptionsError);
    expect(create({})).toThrow(
      /^Invalid option options\.authorize: expected a function \(request, conversationId\) => boolean \| Promise<boolean> \(required: there is no default that lets everyone in\)$/,
    );
    expect(create(undefined)).toThrow(/options/);
    expect(create({ authorize: true })).toThrow(/options\.authorize/);
  });

  it('names any other option that is wrong, and a host that is not one', () => {
    const authorize = () => true;
    const create = (options: Record<string, unknown>) => () =>
      createConversationHandler(host, { authorize, ...options } as ConversationHandlerOptions);
    expect(create({ basePath: 'api' })).toThrow(/options\.basePath: expected a path like "\/api"/);
    expect(create({ basePath: '/a b' })).toThrow(/options\.basePath/);
    expect(create({ maxBodyBytes: 0 })).toThrow(/options\.maxBodyBytes/);
    expect(create({ maxBodyDepth: 5_000 })).toThrow(/options\.maxBodyDepth: expected an integer from 1 to 1000/);
    expect(create({ heartbeatMs: -1 })).toThrow(/options\.heartbeatMs/);
    expect(create({ store: {} })).toThrow(/options\.store: expected a ConversationStore/);
    expect(create({ athorize: authorize })).toThrow(/options\.athorize: expected a known option .*did you mean authorize\?/);
    expect(() => createConversationHandler({} as never, { authorize })).toThrow(/^Invalid option host: expected a ConversationHost/);
    expect(() => createConversationHandler(host, { authorize, basePath: '/api/' })).not.toThrow();
  });
});

describe('a conversation over HTTP', () => {
  it('a message starts it (202), the view, an approval, a denial with its reason, a cancel; every answer the view as JSON', async () => {
    const gate = deferred();
    const { url } = await service({
      reply: (text, results) => (text === 'take your time' ? held(gate.promise) : defaultReply(text, results)),
    });
    const started = await call(url, 'POST', '/conversations/c-1/messages', {
      body: { content: 'refund A-1', sessionData: { user: 'ada' } },
    });
    expect(started.status).toBe(202);
    expect(started.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(viewOf(started)).toMatchObject({ id: 'c-1', status: 'running', messages: [{ role: 'user', content: 'refund A-1' }] });
    await until(async () => viewOf(await call(url, 'GET', '/conversations/c-1')).status === 'awaitingApproval', 'the approval');
    const waiting = viewOf(await call(url, 'GET', '/conversations/c-1'));
    expect(waiting.pendingApprovals).toEqual([{ toolCallId: 'call_A-1', name: 'refund', args: { order: 'A-1' } }]);
    const approved = await call(url, 'POST', '/conversations/c-1/approve', { body: { toolCallId: 'call_A-1' } });
    expect(approved.status).toBe(200);
    expect(viewOf(approved).pendingApprovals).toEqual([]);
    await until(async () => viewOf(await call(url, 'GET', '/conversations/c-1')).status === 'done', 'the end of the first run');

    // The next run: denied, with a reason the model reads.
    expect((await call(url, 'POST', '/conversations/c-1/messages', { body: { content: 'refund B-2' } })).status).toBe(202);
    await until(async () => viewOf(await call(url, 'GET', '/conversations/c-1')).status === 'awaitingApproval', 'the second approval');
    const denied = await call(url, 'POST', '/conversations/c-1/deny', { body: { toolCallId: 'call_B-2', reason: 'over the limit' } });
    expect(denied.status).toBe(200);
    await until(async () => viewOf(await call(url, 'GET', '/conversations/c-1')).status === 'done', 'the end of the second run');
    const afterDenial = viewOf(await call(url, 'GET', '/conversations/c-1'));
    expect(JSON.stringify(afterDenial.messages)).toContain('over the limit');

    // A run that takes its time, cancelled.
    expect((await call(url, 'POST', '/conversations/c-1/messages', { body: { content: 'take your time' } })).status).toBe(202);
    const cancelled = await call(url, 'POST', '/conversations/c-1/cancel', { body: { reason: 'too slow' } });
    expect(cancelled.status).toBe(200);
    expect(viewOf(cancelled)).toMatchObject({ status: 'halted', value: 'halted' });
    // A cancel needs no body at all.
    expect((await call(url, 'POST', '/conversations/c-1/messages', { body: { content: 'take your time' } })).status).toBe(202);
    expect((await call(url, 'POST', '/conversations/c-1/cancel')).status).toBe(200);
    gate.resolve();
  });

  it('the history: the stored log a page at a time (afterSeq, limit), nextAfterSeq while more follow; 404 for no conversation, 501 without the store', async () => {
    const { url, store } = await service();
    for (const content of ['say one', 'lookup fox', 'say three']) {
      await call(url, 'POST', '/conversations/h-1/messages', { body: { content } });
      await until(async () => (await store.load('h-1'))?.status === 'done', `"${content}" done`);
    }
    const whole = await store.readLog('h-1');
    expect(whole.length).toBeGreaterThan(6);
    const pages: unknown[][] = [];
    let after: number | undefined;
    for (;;) {
      const page = await call(url, 'GET', `/conversations/h-1/history?limit=3${after === undefined ? '' : `&afterSeq=${after}`}`);
      expect(page.status).toBe(200);
      const { entries, nextAfterSeq } = page.json() as { entries: unknown[]; nextAfterSeq?: number };
      pages.push(entries);
      if (nextAfterSeq === undefined) break;
      after = nextAfterSeq;
    }
    expect(pages.flat()).toEqual(whole);
    expect(pages.slice(0, -1).every((page) => page.length === 3)).toBe(true);
    expect((await call(url, 'GET', '/conversations/h-1/history')).json()).toEqual({ entries: whole });
    const missing = await call(url, 'GET', '/conversations/nobody/history');
    expect(missing.status).toBe(404);
    expect(problemOf(missing)).toMatchObject({ type: `${problemTypePrefix}conversation-not-found`, field: 'id' });

    const storeless = await service({ handler: { store: undefined } });
    await call(storeless.url, 'POST', '/conversations/h-2/messages', { body: { content: 'say hi' } });
    const unavailable = await call(storeless.url, 'GET', '/conversations/h-2/history');
    expect(unavailable.status).toBe(501);
    expect(problemOf(unavailable)).toMatchObject({ type: `${problemTypePrefix}history-unavailable` });
    // Media are read from the store too: without it, 501 naming what to pass.
    const noMedia = await call(storeless.url, 'GET', `/conversations/h-2/media?ref=sha256:${'a'.repeat(64)}`);
    expect(noMedia.status).toBe(501);
    expect(problemOf(noMedia)).toMatchObject({ type: `${problemTypePrefix}media-unavailable` });
    expect(problemOf(noMedia).detail).toMatch(/pass the host's store .* to createConversationHandler/);
  });

  it('time travel: the steps a page at a time, the view at a step, a fork (201, its location) from a step waiting for approval', async () => {
    const { url, store } = await service();
    expect((await call(url, 'POST', '/conversations/c-1/messages', { body: { content: 'refund A-1' } })).status).toBe(202);
    await until(async () => (await store.load('c-1'))?.status === 'awaitingApproval', 'the approval');
    const page = (await call(url, 'GET', '/conversations/c-1/steps?limit=1')).json() as {
      steps: ConversationStep[];
      nextAfterSeq?: number;
    };
    expect(page).toEqual({ steps: [expect.objectContaining({ seq: 1, status: 'running' })], nextAfterSeq: 1 });
    const { steps } = (await call(url, 'GET', '/conversations/c-1/steps?afterSeq=1')).json() as { steps: ConversationStep[] };
    const waiting = steps.find((step) => step.status === 'awaitingApproval')!;
    expect(viewOf(await call(url, 'GET', `/conversations/c-1?seq=${waiting.seq}`))).toMatchObject({
      seq: waiting.seq,
      status: 'awaitingApproval',
      pendingApprovals: [{ toolCallId: 'call_A-1' }],
    });
    expect(viewOf(await call(url, 'GET', '/conversations/c-1?seq=1')).messages).toEqual([{ role: 'user', content: 'refund A-1' }]);

    const forked = await call(url, 'POST', '/conversations/c-1/fork', { body: { seq: waiting.seq, newId: 'c-1-b' } });
    expect(forked.status).toBe(201);
    expect(forked.headers.get('location')).toBe('/conversations/c-1-b');
    expect(viewOf(forked)).toMatchObject({ id: 'c-1-b', seq: 1, status: 'awaitingApproval' });
    expect((await call(url, 'POST', '/conversations/c-1-b/approve', { body: { toolCallId: 'call_A-1' } })).status).toBe(200);
    await until(async () => viewOf(await call(url, 'GET', '/conversations/c-1-b')).status === 'done', 'the fork done');
    expect(viewOf(await call(url, 'GET', '/conversations/c-1')).status).toBe('awaitingApproval');
    // Without newId: one is made up, and named by the location.
    const unnamed = await call(url, 'POST', '/conversations/c-1/fork', { body: { seq: 1 } });
    expect(unnamed.status).toBe(201);
    expect(unnamed.headers.get('location')).toMatch(/^\/conversations\/c-1-1-[a-z0-9]+$/);
  });

  it('under a basePath: the routes move, everything else is 404', async () => {
    const { url } = await service({ handler: { basePath: '/api/v1' } });
    expect((await call(url, 'POST', '/api/v1/conversations/b-1/messages', { body: { content: 'say hi' } })).status).toBe(202);
    expect((await call(url, 'GET', '/api/v1/conversations/b-1')).status).toBe(200);
    expect((await call(url, 'GET', '/conversations/b-1')).status).toBe(404);
    expect((await call(url, 'GET', '/api/conversations/b-1')).status).toBe(404);
    expect((await call(url, 'GET', '/api/v1')).status).toBe(404);
  });
});

describe('authorization', () => {
  /** The store, counting what is read from it. */
  function countingStore(store: ConversationStore) {
    const reads = { count: 0 };
    const read = <T>(result: T): T => {
      reads.count++;
      return result;
    };
    const counted: ConversationStore = {
      load: (id) => read(store.load(id)),
      save: (...args) => store.save(...args),
      readLog: (id, options) => read(store.readLog(id, options)),
      readStream: (id, options) => read(store.readStream?.(id, options) ?? Promise.resolve([])),
      list: (options) => store.list(options),
      delete: (id) => store.delete(id),
      close: () => store.close(),
    };
    return { store: counted, reads };
  }

  it('false → 403, a throw → 401, anything but true → 403: no byte of the conversation, its body never read, nothing loaded', async () => {
    const { store, reads } = countingStore(memoryStore());
    const asked: Array<[string, string]> = [];
    const verdicts: Record<string, () => unknown> = {
      allow: () => true,
      deny: () => false,
      throw: () => {
        throw new Error('token expired: secret-token-123');
      },
      reject: () => Promise.reject(new Error('lookup failed')),
      truthy: () => 'yes',
      promised: () => Promise.resolve(true),
    };
    const { url } = await service({
      store,
      handler: {
        authorize: (request, id) => {
          const verdict = request.headers.get('x-verdict') ?? 'deny';
          asked.push([verdict, id]);
          return (verdicts[verdict] as () => boolean)();
        },
      },
    });
    await call(url, 'POST', '/conversations/secret-1/messages', {
      body: { content: 'say the secret is 42' },
      headers: { 'x-verdict': 'allow' },
    });
    await until(async () => (await store.load('secret-1'))?.status === 'done', 'the secret told');
    const readsBefore = reads.count;
    const expected: Record<string, [number, string]> = {
      deny: [403, 'forbidden'],
      throw: [401, 'unauthorized'],
      reject: [401, 'unauthorized'],
      truthy: [403, 'forbidden'],
    };
    for (const [verdict, [status, type]] of Object.entries(expected)) {
      for (const [method, path] of [
        ['GET', '/conversations/secret-1'],
        ['GET', '/conversations/secret-1/events'],
        ['GET', '/conversations/secret-1/history'],
        ['POST', '/conversations/secret-1/messages'],
        ['POST', '/conversations/secret-1/approve'],
        ['POST', '/conversations/secret-1/deny'],
        ['POST', '/conversations/secret-1/cancel'],
      ] as const) {
        const answer = await call(url, method, path, {
          headers: { 'x-verdict': verdict },
          ...(method === 'POST' ? { body: '{ not even JSON' } : {}),
        });
        expect({ verdict, path, status: answer.status, type: problemOf(answer).type }).toEqual({
          verdict,
          path,
          status,
          type: `${problemTypePrefix}${type}`,
        });
        expect(answer.text).not.toMatch(/42|say the|secret-token|expired|lookup failed/);
        expect(answer.text).not.toMatch(/messages|pendingApprovals|status":"done/);
      }
    }
    expect(reads.count).toBe(readsBefore);
    expect(asked.filter(([verdict]) => verdict !== 'allow').every(([, id]) => id === 'secret-1')).toBe(true);
    expect((await call(url, 'GET', '/conversations/secret-1', { headers: { 'x-verdict': 'promised' } })).status).toBe(200);
    // The id authorize gets is the decoded one.
    await call(url, 'GET', '/conversations/a%3Ab', { headers: { 'x-verdict': 'deny' } });
    expect(asked.at(-1)).toEqual(['deny', 'a:b']);
    // The OpenAPI document names no conversation: it needs no authorization.
    expect((await call(url, 'GET', '/openapi.json', { headers: { 'x-verdict': 'deny' } })).status).toBe(200);
  });

  it('a refused request leaves its body unread: the stream it came in is never pulled', async () => {
    const { handler } = await service({ handler: { authorize: () => false } });
    let pulled = 0;
    // No high-water mark: the stream is pulled only when someone reads it.
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          pulled++;
          controller.enqueue(new TextEncoder().encode('{"content": "hi"}'));
          controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    const request = new Request('http://127.0.0.1/conversations/c-1/messages', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    const answer = await handler(request);
    expect(answer.status).toBe(403);
    expect(pulled).toBe(0);
  });
});

describe("the host's errors, by class", () => {
  it('busy elsewhere → 409 conversation-busy; an event the run cannot take → 409 event-rejected; not there → 404', async () => {
    const store = memoryStore();
    const gate = deferred();
    const other = await service({ store, hostId: 'other-host.internal:1234', reply: () => held(gate.promise) });
    const { url } = await service({ store: { ...store, close: async () => undefined } as ConversationStore });
    await call(other.url, 'POST', '/conversations/busy-1/messages', { body: { content: 'take your time' } });
    await until(async () => (await store.load('busy-1'))?.status === 'running', 'busy-1 running');
    const busy = await call(url, 'POST', '/conversations/busy-1/cancel', { body: {} });
    expect(busy.status).toBe(409);
    expect(problemOf(busy)).toMatchObject({ type: `${problemTypePrefix}conversation-busy` });
    expect(busy.text).not.toContain('other-host');
    const rejected = await call(other.url, 'POST', '/conversations/busy-1/messages', { body: { content: 'are you there?' } });
    expect(rejected.status).toBe(409);
    expect(problemOf(rejected)).toMatchObject({ type: `${problemTypePrefix}event-rejected` });
    expect(problemOf(rejected).detail).toMatch(/not accepted/);
    const notWaiting = await call(other.url, 'POST', '/conversations/busy-1/approve', { body: { toolCallId: 'call_1' } });
    expect(notWaiting.status).toBe(409);
    for (const [method, path, body] of [
      ['GET', '/conversations/nobody', undefined],
      ['POST', '/conversations/nobody/approve', { toolCallId: 'call_1' }],
      ['POST', '/conversations/nobody/deny', { toolCallId: 'call_1' }],
      ['POST', '/conversations/nobody/cancel', {}],
    ] as const) {
      const answer = await call(url, method, path, body === undefined ? {} : { body });
      expect({ path, status: answer.status, problem: problemOf(answer) }).toMatchObject({
        path,
        status: 404,
        problem: {
          type: `${problemTypePrefix}conversation-not-found`,
          field: 'id',
          detail: 'id: expected a conversation that exists, got "nobody"',
        },
      });
    }
    gate.resolve();
  });

  it('another writer first → 409 conversation-conflict; a broken stored record → 500 with no detail of it, reported, left as it was; a closed host → 503', async () => {
    const store = memoryStore();
    let conflict = false;
    const flaky: ConversationStore = {
      ...store,
      load: (id) => store.load(id),
      save: async (conversation, log, stream) => {
        if (conflict) throw new ConversationConflictError(conversation.id, conversation.revision - 1, conversation.revision);
        return store.save(conversation, log, stream);
      },
      readLog: (id, options) => store.readLog(id, options),
      readStream: (id, options) => store.readStream?.(id, options) ?? Promise.resolve([]),
      list: (options) => store.list(options),
    };
    const running = await service({ store: flaky });
    conflict = true;
    const conflicted = await call(running.url, 'POST', '/conversations/k-1/messages', { body: { content: 'say hi' } });
    expect(conflicted.status).toBe(409);
    expect(problemOf(conflicted)).toMatchObject({ type: `${problemTypePrefix}conversation-conflict` });
    conflict = false;

    const broken = {
      id: 'broken-1',
      schemaVersion: 5,
      machineId: 'conversation',
      status: 'done' as const,
      snapshot: '{"secret": "sk-live-123", truncated',
      revision: 1,
      owner: 'x',
      updatedAt: 1,
    };
    await store.save(broken);
    const unreadable = await call(running.url, 'GET', '/conversations/broken-1');
    expect(unreadable.status).toBe(500);
    expect(problemOf(unreadable)).toEqual({
      type: `${problemTypePrefix}stored-conversation-unreadable`,
      title: problemTypes['stored-conversation-unreadable'].title,
      status: 500,
      detail: 'the stored conversation cannot be loaded (corrupt); it is left as it was',
    });
    expect(unreadable.text).not.toMatch(/sk-live|truncated|\bat /);
    expect(running.reported).toHaveLength(1);
    expect(await store.load('broken-1')).toEqual(broken);

    // Anything else: 500 that says nothing more, reported.
    const failing = await service({
      store: { ...memoryStore(), load: () => Promise.reject(new Error('disk on fire at /srv/secret')) } as ConversationStore,
    });
    const internal = await call(failing.url, 'GET', '/conversations/any-1');
    expect(internal.status).toBe(500);
    expect(problemOf(internal)).toMatchObject({ type: `${problemTypePrefix}internal-error`, detail: 'the request could not be answered' });
    expect(internal.text).not.toContain('secret');
    expect(failing.reported).toHaveLength(1);

    await running.host.close();
    const closed = await call(running.url, 'GET', '/conversations/k-1');
    expect(closed.status).toBe(503);
    expect(closed.headers.get('retry-after')).toBe('1');
    expect(problemOf(closed)).toMatchObject({ type: `${problemTypePrefix}host-closed` });
  });
});

describe('the OpenAPI document', () => {
  it('is valid OpenAPI 3.1, generated from the route table: every route in it, and every operation in it routes', async () => {
    const { url, handler } = await service({ handler: { basePath: '/api', openApi: { title: 'Support', version: '2.1.0' } } });
    const answer = await call(url, 'GET', '/api/openapi.json');
    expect(answer.status).toBe(200);
    const document = answer.json() as {
      openapi: string;
      info: unknown;
      paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;
    };
    const validation = await new Validator().validate(document as never);
    expect(validation.errors ?? []).toEqual([]);
    expect(validation.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toEqual({ title: 'Support', version: '2.1.0' });
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operationId: operation.operationId })),
    );
    expect(operations.map(({ operationId }) => operationId).sort()).toEqual(conversationRoutes.map((route) => route.operationId).sort());
    for (const route of conversationRoutes) expect(document.paths[`/api${route.path}`]?.[route.method.toLowerCase()]).toBeDefined();
    for (const { path, method } of operations) {
      // A route that exists: whatever it answers, it is not "no such route" or "not that method".
      const reached = await handler(
        new Request(`http://127.0.0.1${path.replace('{id}', 'probe-1')}`, {
          method,
          headers: { authorization: 'Bearer test-token', 'content-type': 'application/json' },
          ...(method === 'POST' ? { body: '{}' } : {}),
        }),
      );
      const streaming = reached.headers.get('content-type')?.startsWith('text/event-stream');
      if (streaming) await reached.body?.cancel();
      const text = streaming || reached.status === 204 ? '{}' : await reached.text();
      expect({ path, method, status: reached.status, type: (JSON.parse(text) as { type?: string }).type }).not.toMatchObject({
        type: expect.stringMatching(/route-not-found|method-not-allowed/),
      });
    }
    // Each operation names the problems it may answer, as problem+json.
    const send = document.paths['/api/conversations/{id}/messages']?.post;
    expect(Object.keys(send?.responses ?? {}).sort()).toEqual(['202', '400', '401', '403', '408', '409', '413', '415', '500', '503']);
  });
});
