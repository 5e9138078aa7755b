/**
 * `createViewerHandler` (actorloop/inspect): the viewer's routes over a real host on a real socket
 * (node:http through `toNodeListener`): the list, a conversation, its stored steps and the view at a
 * step, approve / deny / cancel, fork (a new conversation; the original untouched), the live
 * stream, the page and its chart, who may use it, and every client mistake a 4xx problem naming
 * what was wrong — never a 500.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toNodeListener } from '../src/http/index.js';
import type { ConversationHost, ConversationStep, ConversationView } from '../src/index.js';
import { createViewerHandler, type ViewerHandlerOptions, type ViewerHost } from '../src/observe/inspect/index.js';
import { transferCallId } from './support/approval-scenario.js';
import { viewerHost } from './support/viewer-host.js';

type Served = { url: string; server: Server };
type Answer = { status: number; type: string; text: string; json: () => Record<string, unknown> & ConversationView };

const servers: Server[] = [];
let host: ConversationHost;
let executions: string[];
let base: string;

async function serve(viewed: ViewerHost, options: ViewerHandlerOptions = {}): Promise<Served> {
  const server = createServer(toNodeListener(createViewerHandler(viewed, { basePath: '/viewer', ...options })));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/viewer`, server };
}

async function call(path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${base}${path}`, init);
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type') ?? '', text, json: () => JSON.parse(text) };
}

const post = (path: string, body: unknown) =>
  call(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let tries = 0; tries < 400; tries++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`never: ${what}`);
}

/** Starts a conversation named `id` (its first message is its name) and waits until it asks for approval. */
async function waiting(id: string): Promise<ConversationView> {
  await host.send(id, { type: 'user.message', content: id });
  return until(
    async () => (await call(`/api/conversations/${id}`)).json(),
    (view) => view.status === 'awaitingApproval',
    `${id} waits for approval`,
  );
}

beforeAll(async () => {
  ({ host, executions } = viewerHost());
  ({ url: base } = await serve(host));
  await Promise.all(['c-list-a', 'c-list-b', 'c-approve', 'c-deny', 'c-cancel', 'c-fork'].map(waiting));
});
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await host.close();
});

describe('createViewerHandler: reading', () => {
  it('lists the stored conversations, paged with after and limit', async () => {
    const all = await call('/api/conversations');
    expect(all.status).toBe(200);
    const ids = (all.json() as unknown as Array<{ id: string }>).map(({ id }) => id);
    expect(ids).toEqual(expect.arrayContaining(['c-list-a', 'c-list-b', 'c-approve']));
    const page = (await call('/api/conversations?after=c-list-a&limit=1')).json() as unknown as Array<{ id: string }>;
    expect(page.map(({ id }) => id)).toEqual(['c-list-b']);
  });

  it('shows a conversation: its state, status, messages and the call waiting for approval', async () => {
    const view = (await call('/api/conversations/c-list-a')).json();
    expect(view).toMatchObject({ id: 'c-list-a', status: 'awaitingApproval', value: 'awaitingApproval' });
    expect(view.pendingApprovals).toEqual([{ toolCallId: transferCallId('c-list-a'), name: 'transfer', args: { cents: 4200 } }]);
    expect(view.messages.map(({ role }) => role)).toEqual(['user', 'assistant']);
  });

  it('lists its stored steps, and shows the view at an earlier one', async () => {
    const steps = (await call('/api/conversations/c-list-b/history')).json() as unknown as ConversationStep[];
    expect(steps.length).toBeGreaterThanOrEqual(2);
    expect(steps.map(({ seq }) => seq)).toEqual([...steps.map(({ seq }) => seq)].sort((a, b) => a - b));
    expect(steps.at(-1)?.status).toBe('awaitingApproval');
    const first = steps[0] as ConversationStep;
    const atFirst = (await call(`/api/conversations/c-list-b/steps/${first.seq}`)).json();
    expect(atFirst.seq).toBe(first.seq);
    expect(atFirst.status).toBe(first.status);
    expect(atFirst.messages.length).toBeLessThan(2);
    const paged = (await call(`/api/conversations/c-list-b/history?afterSeq=${first.seq}&limit=1`)).json() as unknown as ConversationStep[];
    expect(paged).toEqual([steps[1]]);
  });

  it('streams the run as Server-Sent Events, from its start', async () => {
    const response = await fetch(`${base}/api/conversations/c-list-a/events`);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!text.includes('"status":"awaitingApproval"')) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    await reader.cancel();
    expect(text).toMatch(/^retry: 1000/);
    expect(text).toMatch(/id: \d+\.\d+\.[a-z0-9]+\ndata: \{"id":/);
    expect(text).toContain('"type":"tool.approval.requested"');
  });

  it('serves the page, inline and offline, and the chart of the host machine', async () => {
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain('<input id="slider" type="range"');
    expect(html).not.toMatch(/<script[^>]+src=|<link[^>]+stylesheet|https?:\/\/(?!www\.w3\.org)/);
    expect((await fetch(base)).status).toBe(200);
    const chart = await fetch(`${base}/chart/overview.svg`);
    expect(chart.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(await chart.text()).toContain('data-state="awaitingApproval"');
  });
});

describe('createViewerHandler: acting', () => {
  it('approve: the run goes on to its end, the tool ran once', async () => {
    const callId = transferCallId('c-approve');
    const answer = await post('/api/conversations/c-approve/approve', { toolCallId: callId });
    expect(answer.status).toBe(200);
    const done = await until(
      async () => (await call('/api/conversations/c-approve')).json(),
      (view) => view.status === 'done',
      'c-approve done',
    );
    expect(JSON.stringify(done.messages.at(-1))).toContain('finished c-approve');
    expect(executions.filter((id) => id === callId)).toHaveLength(1);
    // Approving again: nothing waits; refused, not a server error.
    const again = await post('/api/conversations/c-approve/approve', { toolCallId: callId });
    expect(again.status).toBe(409);
  });

  it('deny: the call gets a denial, the tool never runs', async () => {
    const callId = transferCallId('c-deny');
    expect((await post('/api/conversations/c-deny/deny', { toolCallId: callId, reason: 'no' })).status).toBe(200);
    const done = await until(
      async () => (await call('/api/conversations/c-deny')).json(),
      (view) => view.status === 'done',
      'c-deny done',
    );
    expect(JSON.stringify(done.messages)).toContain('"isError":true');
    expect(executions).not.toContain(callId);
  });

  it('cancel: the waiting run ends halted', async () => {
    expect((await post('/api/conversations/c-cancel/cancel', {})).status).toBe(200);
    const ended = await until(
      async () => (await call('/api/conversations/c-cancel')).json(),
      (view) => view.status !== 'awaitingApproval' && view.status !== 'running',
      'c-cancel ended',
    );
    expect(ended.status).toBe('halted');
    expect(executions).not.toContain(transferCallId('c-cancel'));
  });

  it('fork: a new conversation from the step, the original untouched; a newId in use is refused', async () => {
    const before = (await call('/api/conversations/c-fork/history')).json() as unknown as ConversationStep[];
    const waitingStep = before.at(-1) as ConversationStep;
    const forked = await post('/api/conversations/c-fork/fork', { seq: waitingStep.seq });
    expect(forked.status).toBe(201);
    const fork = forked.json();
    expect(fork.id).toMatch(new RegExp(`^c-fork-fork-${waitingStep.seq}-[0-9a-f]{8}$`));
    expect(fork.status).toBe('awaitingApproval');
    // The fork goes on by itself; the original stays where it was.
    expect((await post(`/api/conversations/${fork.id}/approve`, { toolCallId: transferCallId('c-fork') })).status).toBe(200);
    await until(
      async () => (await call(`/api/conversations/${fork.id}`)).json(),
      (view) => view.status === 'done',
      'the fork done',
    );
    const original = (await call('/api/conversations/c-fork')).json();
    expect(original.status).toBe('awaitingApproval');
    expect((await call('/api/conversations/c-fork/history')).json()).toEqual(before);
    const named = await post('/api/conversations/c-fork/fork', { seq: waitingStep.seq, newId: 'c-fork-named' });
    expect(named.json().id).toBe('c-fork-named');
    const taken = await post('/api/conversations/c-fork/fork', { seq: waitingStep.seq, newId: 'c-fork-named' });
    expect(taken.status).toBe(409);
    expect(taken.json()).toMatchObject({ field: 'newId' });
  });
});

describe('createViewerHandler: refusals', () => {
  const problem = (answer: Answer) => {
    expect(answer.type).toBe('application/problem+json');
    return answer.json() as unknown as { status: number; detail: string; field?: string };
  };

  it('an unknown id is a 404 naming it, on every route', async () => {
    for (const path of ['', '/history', '/steps/1', '/events']) {
      const answer = await call(`/api/conversations/nope${path}`);
      expect(answer.status, path).toBe(404);
      expect(problem(answer).detail, path).toContain('"nope"');
    }
    for (const [action, body] of [
      ['approve', { toolCallId: 'x' }],
      ['deny', { toolCallId: 'x' }],
      ['cancel', {}],
      ['fork', { seq: 1 }],
    ] as const) {
      const answer = await post(`/api/conversations/nope/${action}`, body);
      expect(answer.status, action).toBe(404);
    }
    expect((await call('/api/conversations')).text).not.toContain('"nope"');
  });

  it('an unknown step is a 404 naming the step; a step that is not a number, a 400', async () => {
    const unknown = await call('/api/conversations/c-list-a/steps/9999');
    expect(unknown.status).toBe(404);
    expect(problem(unknown)).toMatchObject({ field: 'seq' });
    expect(problem(unknown).detail).toContain('9999');
    for (const seq of ['x', '-1', '1.5', '1e3', '99999999999999999999']) {
      const answer = await call(`/api/conversations/c-list-a/steps/${seq}`);
      expect(answer.status, seq).toBe(400);
      expect(problem(answer).field, seq).toBe('seq');
    }
    const fork = await post('/api/conversations/c-list-a/fork', { seq: 9999 });
    expect(fork.status).toBe(404);
  });

  it('bad bodies are 400 / 413 / 415 naming the field, and nothing changes', async () => {
    const cases: Array<[string, RequestInit, number, string]> = [
      ['approve', { body: '{"toolCallId":', headers: { 'content-type': 'application/json' } }, 400, 'body'],
      ['approve', { body: '[1]', headers: { 'content-type': 'application/json' } }, 400, 'body'],
      ['approve', { body: '{}', headers: { 'content-type': 'application/json' } }, 400, 'toolCallId'],
      ['approve', { body: '{"toolCallId":7}', headers: { 'content-type': 'application/json' } }, 400, 'toolCallId'],
      ['approve', { body: '{"toolCallId":"a","extra":1}', headers: { 'content-type': 'application/json' } }, 400, 'extra'],
      ['approve', { body: '{"toolCallId":"a"}', headers: { 'content-type': 'text/plain' } }, 415, 'content-type'],
      ['deny', { body: '{"toolCallId":"a","reason":5}', headers: { 'content-type': 'application/json' } }, 400, 'reason'],
      ['fork', { body: '{"seq":"1"}', headers: { 'content-type': 'application/json' } }, 400, 'seq'],
      ['fork', { body: '{"seq":-1}', headers: { 'content-type': 'application/json' } }, 400, 'seq'],
      ['fork', { body: '{"seq":1,"newId":""}', headers: { 'content-type': 'application/json' } }, 400, 'newId'],
      ['fork', { body: `{"seq":1,"newId":"${'x'.repeat(70_000)}"}`, headers: { 'content-type': 'application/json' } }, 413, 'body'],
    ];
    const before = (await call('/api/conversations/c-list-a/history')).text;
    for (const [action, init, status, field] of cases) {
      const answer = await call(`/api/conversations/c-list-a/${action}`, { method: 'POST', ...init });
      expect(answer.status, `${action} ${String(init.body).slice(0, 40)}`).toBe(status);
      expect(problem(answer).field, `${action} ${String(init.body).slice(0, 40)}`).toBe(field);
    }
    expect((await call('/api/conversations/c-list-a/history')).text).toBe(before);
    expect((await call('/api/conversations/c-list-a')).json().status).toBe('awaitingApproval');
  });

  it('never answers 500 to a malformed path, query, method or body', async () => {
    const paths = [
      '/api',
      '/api/',
      '/api/conversations/',
      '/api/conversations/%',
      '/api/conversations/%E0%A4%A',
      `/api/conversations/${'x'.repeat(2000)}`,
      '/api/conversations/c-list-a/steps',
      '/api/conversations/c-list-a/steps/1/2',
      '/api/conversations/c-list-a/nothing',
      '/api/conversations?limit=0',
      '/api/conversations?limit=abc',
      '/api/conversations?limit=1&limit=2',
      '/api/conversations?after=',
      '/api/conversations?other=1',
      '/api/conversations/c-list-a?x=1',
      '/api/conversations/c-list-a/history?afterSeq=-3',
      '/api/conversations/c-list-a/history?limit=999999999',
      '/chart/none.svg',
      '/chart/overview.svg/x',
      '/..%2f..%2fetc/passwd',
      '/%00',
      '/api/conversations/..',
      '/api/conversations/c-list-a/events?after=1',
    ];
    const methods = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];
    const bodies = ['', 'null', '"x"', '{', '{"__proto__":{"seq":1}}', '{"toolCallId":{"a":1}}', '\u0000', '{"seq":1e400}'];
    let asked = 0;
    for (const path of paths) {
      for (const method of methods) {
        const init: RequestInit =
          method === 'GET' ? { method } : { method, body: bodies[asked % bodies.length], headers: { 'content-type': 'application/json' } };
        const answer = await call(path, init);
        asked++;
        expect(answer.status, `${method} ${path}`).toBeGreaterThanOrEqual(400);
        expect(answer.status, `${method} ${path}`).toBeLessThan(500);
        expect(problem(answer).detail.length, `${method} ${path}`).toBeGreaterThan(0);
      }
    }
    for (const action of ['approve', 'deny', 'cancel', 'fork']) {
      // An empty body is a valid cancel: only the malformed ones here.
      for (const body of bodies.filter((one) => one !== '')) {
        const answer = await call(`/api/conversations/c-list-b/${action}`, {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json' },
        });
        expect(answer.status, `${action} ${body}`).toBeLessThan(500);
      }
    }
    expect((await call('/api/conversations/c-list-b')).json().status).toBe('awaitingApproval');
  });

  it('lets in only requests addressed to a loopback name by default; authorize decides otherwise', async () => {
    const port = Number(new URL(base).port);
    const asHost = (hostHeader: string) =>
      new Promise<number>((resolve, reject) => {
        const request = httpRequest(
          { host: '127.0.0.1', port, path: '/viewer/api/conversations', headers: { host: hostHeader } },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on('error', reject);
        request.end();
      });
    expect(await asHost('evil.example:80')).toBe(403);
    expect(await asHost(`localhost:${port}`)).toBe(200);
    const refusing = await serve(host, { authorize: () => false });
    expect((await fetch(`${refusing.url}/api/conversations`)).status).toBe(403);
    const throwing = await serve(host, {
      authorize: () => {
        throw new Error('bad token');
      },
    });
    expect((await fetch(`${throwing.url}/`)).status).toBe(401);
    const cross = await call('/api/conversations/c-list-a/cancel', {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json', origin: 'http://evil.example' },
    });
    expect(cross.status).toBe(403);
    expect((await call('/api/conversations/c-list-a')).json().status).toBe('awaitingApproval');
  });

  it('refuses a host that is not one, and bad options, naming them', () => {
    expect(() => createViewerHandler({} as ViewerHost)).toThrow(/source: expected a ConversationHost/);
    expect(() => createViewerHandler(host, { basePath: 'viewer' })).toThrow(/basePath/);
    expect(() => createViewerHandler(host, { authorize: 'yes' as never })).toThrow(/authorize/);
  });
});
