/**
 * The hostile-input corpus of actorloop/http (test/http-hostile-input.test.ts): requests a client
 * may send by mistake or on purpose, each with the answer it must get. None of them may reach
 * the host: every answer is a problem+json refusal (or a 404 for something that is not there).
 *
 * The corpus is built against a handler with the default `maxBodyBytes` (1,000,000), `bodyIdleTimeoutMs` 300,
 * `bodyTimeoutMs` 1,500 and the default `maxBodyDepth` (64), serving conversations `done-1`
 * (finished) and `waiting-1` (waiting for the approval of `call_W-1`).
 */
import type { ProblemTypeName } from '../../src/http/index.js';
import { token } from './http-service.js';

export const corpusLimits = { maxBodyBytes: 1_000_000, bodyIdleTimeoutMs: 300, bodyTimeoutMs: 1_500 };

/** How a body is sent: as it is, as a stream that never ends, or part of it and then nothing. */
export type CorpusBody =
  | string
  | Uint8Array
  | { endless: number }
  | { stall: { declared: number; sent: string } }
  | { drip: { every: number; bytes: string } };

export type CorpusEntry = {
  name: string;
  category: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: CorpusBody;
  expect: { status: number; type: ProblemTypeName; field?: string };
  /** Sent only that way: the Fetch API refuses some methods, and some cases need a socket. */
  only?: 'handler' | 'socket';
};

const auth = { authorization: `Bearer ${token}` };
const jsonType = { 'content-type': 'application/json' };
const bodyRoutes = [
  { path: '/conversations/new-1/messages', valid: { content: 'hi' } },
  { path: '/conversations/waiting-1/approve', valid: { toolCallId: 'call_W-1' } },
  { path: '/conversations/waiting-1/deny', valid: { toolCallId: 'call_W-1', reason: 'no' } },
  { path: '/conversations/waiting-1/cancel', valid: { reason: 'stop' } },
  { path: '/conversations/done-1/fork', valid: { seq: 1, newId: 'never-made' } },
] as const;
const getRoutes = [
  '/conversations/done-1',
  '/conversations/done-1/events',
  '/conversations/done-1/history',
  '/conversations/done-1/steps',
] as const;

export function hostileCorpus(): CorpusEntry[] {
  const corpus: CorpusEntry[] = [];
  const add = (
    category: string,
    name: string,
    entry: Omit<CorpusEntry, 'name' | 'category' | 'headers'> & { headers?: Record<string, string> },
  ) => {
    // A header given as '' is left out (a request without a token).
    const headers = Object.fromEntries(Object.entries({ ...auth, ...entry.headers }).filter(([, value]) => value !== ''));
    corpus.push({ ...entry, category, name, headers });
  };
  const post = (path: string, body: CorpusBody, headers: Record<string, string> = jsonType) => ({ method: 'POST', path, body, headers });
  const get = (path: string) => ({ method: 'GET', path });

  // Malformed JSON, on every route that takes a body.
  const malformed = [
    '{',
    '{"content": "hi"',
    "{'content': 'hi'}",
    '{"content": "hi",}',
    '{"content": "hi"}}',
    '{"content": "hi"} trailing',
    '{content: "hi"}',
    'nul',
    '{"content": NaN}',
    '{"content": "\\x41"}',
    '{"content": "unterminated}',
    '\u0000',
  ];
  for (const route of bodyRoutes) {
    for (const text of malformed) {
      add('malformed JSON', `${route.path} ${JSON.stringify(text)}`, {
        ...post(route.path, text),
        expect: { status: 400, type: 'malformed-body', field: 'body' },
      });
    }
    for (const text of ['[]', '[{"content": "hi"}]', '"hi"', '42', 'null', 'true']) {
      add('not an object', `${route.path} ${text}`, {
        ...post(route.path, text),
        expect: { status: 400, type: 'malformed-body', field: 'body' },
      });
    }
  }

  // Nesting: 100,000 deep, as the body and inside a field; just past the limit.
  const deepArray = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const deepObject = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
  for (const route of bodyRoutes) {
    add('deep nesting', `${route.path} 100,000-deep array body`, {
      ...post(route.path, deepArray),
      expect: { status: 400, type: 'malformed-body', field: 'body' },
    });
  }
  add('deep nesting', '100,000-deep object body', {
    ...post('/conversations/new-1/messages', deepObject),
    expect: { status: 400, type: 'malformed-body', field: 'body' },
  });
  add('deep nesting', 'sessionData 100,000 deep (arrays)', {
    ...post('/conversations/new-1/messages', `{"content": "hi", "sessionData": ${'['.repeat(100_000)}${']'.repeat(100_000)}}`),
    expect: { status: 400, type: 'malformed-body', field: 'body' },
  });
  add('deep nesting', 'sessionData 65 deep (one past the limit)', {
    ...post('/conversations/new-1/messages', `{"content": "hi", "sessionData": ${'['.repeat(64)}${']'.repeat(64)}}`),
    expect: { status: 400, type: 'malformed-body', field: 'body' },
  });
  add('deep nesting', 'brackets inside strings do not count, the object still has an unknown field', {
    ...post('/conversations/new-1/messages', `{"content": "${'['.repeat(1_000)}", "x": 1}`),
    expect: { status: 400, type: 'invalid-field', field: 'x' },
  });

  // Bodies over maxBodyBytes: declared, streamed without a length, endless.
  const big = JSON.stringify({ content: 'x'.repeat(corpusLimits.maxBodyBytes) });
  for (const route of bodyRoutes) {
    add('too large', `${route.path} one byte past the limit`, {
      ...post(route.path, `{"content":"${'x'.repeat(corpusLimits.maxBodyBytes - 13)}"}`),
      expect: { status: 413, type: 'body-too-large', field: 'body' },
    });
    add('too large', `${route.path} endless chunked body, no content-length`, {
      ...post(route.path, { endless: 16_384 }),
      expect: { status: 413, type: 'body-too-large', field: 'body' },
    });
  }
  add('too large', '5 MB with its content-length', {
    ...post('/conversations/new-1/messages', `{"content":"${'y'.repeat(5_000_000)}"}`),
    expect: { status: 413, type: 'body-too-large', field: 'body' },
  });
  add('too large', 'just past the limit, valid JSON', {
    ...post('/conversations/new-1/messages', big),
    expect: { status: 413, type: 'body-too-large', field: 'body' },
  });

  // Media types.
  const types = [
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    'application/json; charset=utf-16',
    'application/json; charset=latin1',
    'application/jsonx',
    'application/xml',
    'text/json',
    'application/merge-patch+json',
  ];
  for (const type of types) {
    add('content type', type, {
      ...post('/conversations/new-1/messages', '{"content": "hi"}', { 'content-type': type }),
      expect: { status: 415, type: 'unsupported-media-type', field: 'content-type' },
    });
  }
  for (const route of bodyRoutes) {
    add('content type', `${route.path} a JSON body with no content-type`, {
      ...post(route.path, JSON.stringify(route.valid), {}),
      expect: { status: 415, type: 'unsupported-media-type', field: 'content-type' },
    });
  }

  // Keys that would reach an object's prototype if merged carelessly.
  for (const route of bodyRoutes) {
    const valid = JSON.stringify(route.valid).slice(1, -1);
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      add('prototype keys', `${route.path} ${key}`, {
        ...post(route.path, `{${valid}, "${key}": {"polluted": true, "prototype": {"polluted": true}}}`),
        expect: { status: 400, type: 'invalid-field', field: key },
      });
    }
  }
  add('prototype keys', '__proto__ first, with a content of its own', {
    ...post('/conversations/new-1/messages', '{"__proto__": {"content": "from the prototype"}}'),
    expect: { status: 400, type: 'invalid-field', field: '__proto__' },
  });

  // Bytes that are not UTF-8.
  const utf8Cases: Array<[string, number[]]> = [
    ['0xff 0xfe', [0xff, 0xfe]],
    ['an overlong slash', [0xc0, 0xaf]],
    ['a lone surrogate', [0xed, 0xa0, 0x80]],
    ['a sequence cut short', [0xe2, 0x82]],
    ['a stray continuation byte', [0x80]],
    ['a code point past U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ];
  for (const [name, bytes] of utf8Cases) {
    const prefix = new TextEncoder().encode('{"content": "');
    const suffix = new TextEncoder().encode('"}');
    add('invalid UTF-8', name, {
      ...post('/conversations/new-1/messages', new Uint8Array([...prefix, ...bytes, ...suffix])),
      expect: { status: 400, type: 'malformed-body', field: 'body' },
    });
  }

  // Ids in the path.
  const ids = [
    'x'.repeat(129),
    'x'.repeat(8_000),
    'a%20b',
    'a%2Fb',
    '%00',
    '%C3%BC',
    '%F0%9F%98%80',
    '%ZZ',
    '%E2%82',
    'id%3Bdrop',
    '%3Cscript%3E',
    'a%0Ab',
  ];
  for (const id of ids) {
    for (const path of [`/conversations/${id}`, `/conversations/${id}/events`, `/conversations/${id}/messages`]) {
      const isPost = path.endsWith('/messages');
      add('ids', path.length > 60 ? path.replace(id, `<${id.length} characters>`) : path, {
        ...(isPost ? post(path, '{"content": "hi"}') : { method: 'GET', path }),
        expect: { status: 400, type: 'invalid-field', field: 'id' },
      });
    }
  }
  add('ids', "a 100,000-character id: past node:http's header limit", {
    ...get(`/conversations/${'x'.repeat(100_000)}`),
    expect: { status: 431, type: 'headers-too-large' },
    only: 'socket',
  });
  add('ids', 'a 100,000-character id, to the handler', {
    ...get(`/conversations/${'x'.repeat(100_000)}`),
    expect: { status: 400, type: 'invalid-field', field: 'id' },
    only: 'handler',
  });

  // Routes that do not exist.
  for (const path of [
    '/',
    '/conversations',
    '/conversations/',
    '/conversations/done-1/',
    '/conversations/done-1/unknown',
    '/conversations/done-1/messages/extra',
    '/conversations/done-1/rewind',
    '/conversations/done-1/steps/3',
    '/api/conversations/done-1',
    '/CONVERSATIONS/done-1',
    '/openapi.yaml',
    '/chats',
    '/conversations/..',
    '/conversations/done-1/events/x',
    '/%2e%2e/etc/passwd',
  ]) {
    add('unknown routes', path, { method: 'GET', path, expect: { status: 404, type: 'route-not-found' } });
  }

  // Methods a route does not take.
  const routeMethods: Array<[string, string]> = [
    ...bodyRoutes.map((route) => [route.path, 'POST'] as [string, string]),
    ...getRoutes.map((path) => [path, 'GET'] as [string, string]),
    ['/openapi.json', 'GET'],
  ];
  for (const [path, allowed] of routeMethods) {
    for (const method of ['PUT', 'DELETE', 'PATCH', 'OPTIONS', 'PROPFIND', allowed === 'GET' ? 'POST' : 'GET']) {
      add('methods', `${method} ${path}`, { method, path, expect: { status: 405, type: 'method-not-allowed' } });
    }
    // node:http's parser knows the methods HTTP has: another one is not HTTP to it.
    add('methods', `FOO ${path}`, { method: 'FOO', path, expect: { status: 405, type: 'method-not-allowed' }, only: 'handler' });
    add('methods', `FOO ${path} (node:http)`, { method: 'FOO', path, expect: { status: 400, type: 'malformed-request' }, only: 'socket' });
  }
  add('methods', 'TRACE (no Fetch API Request can have it)', {
    method: 'TRACE',
    path: '/conversations/done-1',
    expect: { status: 501, type: 'method-not-implemented' },
    only: 'socket',
  });
  add('methods', 'HEAD', { method: 'HEAD', path: '/conversations/done-1', expect: { status: 405, type: 'method-not-allowed' } });

  // Slow bodies.
  add('slow loris', 'declares 100 bytes, sends 10, then nothing', {
    ...post('/conversations/new-1/messages', { stall: { declared: 100, sent: '{"content"' } }),
    expect: { status: 408, type: 'body-timeout', field: 'body' },
    only: 'socket',
  });
  add('slow loris', 'chunked, sends 10 bytes, then nothing', {
    ...post('/conversations/new-1/messages', { stall: { declared: -1, sent: '{"content"' } }),
    expect: { status: 408, type: 'body-timeout', field: 'body' },
    only: 'socket',
  });
  add('slow loris', 'a byte every 100 ms, never idle for long, never done', {
    ...post('/conversations/new-1/messages', { drip: { every: 100, bytes: '{"content": "' } }),
    expect: { status: 408, type: 'body-timeout', field: 'body' },
  });
  add('slow loris', 'a stream that stalls, to the handler', {
    ...post('/conversations/new-1/messages', { stall: { declared: -1, sent: '{"content"' } }),
    expect: { status: 408, type: 'body-timeout', field: 'body' },
    only: 'handler',
  });

  // Last-Event-ID that is not one of ours.
  for (const value of ['garbage', '1.2', '1.2.', '1.2.x!', '-1.2.abc', '1.2.ABC', `1.2.${'a'.repeat(60)}`, `${'9'.repeat(20)}.1.a`, ' ']) {
    add('Last-Event-ID', `header ${JSON.stringify(value.slice(0, 30))}`, {
      ...get('/conversations/done-1/events'),
      headers: { 'last-event-id': value },
      expect: { status: 400, type: 'invalid-field', field: 'Last-Event-ID' },
    });
    add('Last-Event-ID', `query ${JSON.stringify(value.slice(0, 30))}`, {
      ...get(`/conversations/done-1/events?lastEventId=${encodeURIComponent(value)}`),
      expect: { status: 400, type: 'invalid-field', field: 'query.lastEventId' },
    });
  }
  add('Last-Event-ID', 'from=bogus', {
    ...get('/conversations/done-1/events?from=bogus'),
    expect: { status: 400, type: 'invalid-field', field: 'query.from' },
  });
  add('Last-Event-ID', 'lastEventId given twice', {
    ...get('/conversations/done-1/events?lastEventId=1.1.a&lastEventId=1.2.a'),
    expect: { status: 400, type: 'invalid-field', field: 'query.lastEventId' },
  });

  // Fields of the wrong kind.
  const contents: Array<[string, string]> = [
    ['a number', '42'],
    ['true', 'true'],
    ['null', 'null'],
    ['an array', '["hi"]'],
    // Parts are content too (docs/rich-content.md), but only well-formed ones with something in them.
    ['blank text parts', '[{"type": "text", "text": "  "}]'],
    ['an image by a file: URL', '[{"type": "image", "data": "file:///etc/passwd"}]'],
    ['an image without data', '[{"type": "image"}]'],
    ['an image of bad base64', '[{"type": "image", "data": "iVBO!!", "mediaType": "image/png"}]'],
    ['a file without its media type', '[{"type": "file", "data": "JVBERi0x"}]'],
    ['a part of no known type', '[{"type": "audio", "data": "UklGRg=="}]'],
    ['an object', '{"text": "hi"}'],
    ['an empty string', '""'],
    ['spaces only', '"   "'],
  ];
  for (const [name, value] of contents) {
    add('field types', `content: ${name}`, {
      ...post('/conversations/new-1/messages', `{"content": ${value}}`),
      expect: { status: 400, type: 'invalid-field', field: 'content' },
    });
  }
  add('field types', 'content missing', {
    ...post('/conversations/new-1/messages', '{}'),
    expect: { status: 400, type: 'invalid-field', field: 'content' },
  });
  add('field types', 'no body at all', {
    ...post('/conversations/new-1/messages', ''),
    expect: { status: 400, type: 'invalid-field', field: 'content' },
  });
  for (const [name, value] of [
    ['a number', '7'],
    ['an empty string', '""'],
    ['null', 'null'],
    ['an array', '["call_W-1"]'],
    ['257 characters', JSON.stringify('c'.repeat(257))],
  ]) {
    for (const route of ['approve', 'deny']) {
      add('field types', `${route} toolCallId: ${name}`, {
        ...post(`/conversations/waiting-1/${route}`, `{"toolCallId": ${value}}`),
        expect: { status: 400, type: 'invalid-field', field: 'toolCallId' },
      });
    }
  }
  for (const [name, value] of [
    ['a number', '5'],
    ['false', 'false'],
    ['an object', '{}'],
    ['4,001 characters', JSON.stringify('r'.repeat(4_001))],
  ]) {
    add('field types', `cancel reason: ${name}`, {
      ...post('/conversations/waiting-1/cancel', `{"reason": ${value}}`),
      expect: { status: 400, type: 'invalid-field', field: 'reason' },
    });
    add('field types', `deny reason: ${name}`, {
      ...post('/conversations/waiting-1/deny', `{"toolCallId": "call_W-1", "reason": ${value}}`),
      expect: { status: 400, type: 'invalid-field', field: 'reason' },
    });
  }

  // Fields no route takes.
  const extras: Array<[string, string, string]> = [
    ['/conversations/new-1/messages', '{"content": "hi", "extra": 1}', 'extra'],
    ['/conversations/new-1/messages', '{"content": "hi", "id": "other"}', 'id'],
    ['/conversations/new-1/messages', '{"content": "hi", "role": "system"}', 'role'],
    ['/conversations/waiting-1/approve', '{"toolCallId": "call_W-1", "approved": true}', 'approved'],
    ['/conversations/waiting-1/deny', '{"toolCallId": "call_W-1", "why": "no"}', 'why'],
    ['/conversations/waiting-1/cancel', '{"reason": "r", "force": true}', 'force'],
    ['/conversations/waiting-1/cancel', `{"${'k'.repeat(1_000)}": 1}`, `${'k'.repeat(60)}…`],
  ];
  for (const [path, body, field] of extras) {
    add('extra fields', `${path} ${field.slice(0, 20)}`, { ...post(path, body), expect: { status: 400, type: 'invalid-field', field } });
  }

  // Query parameters of the history.
  for (const query of [
    'limit=0',
    'limit=1001',
    'limit=abc',
    'limit=-1',
    'limit=1.5',
    'limit=',
    'limit=1&limit=2',
    'limit=99999999999999999999',
  ]) {
    add('query', query, {
      ...get(`/conversations/done-1/history?${query}`),
      expect: { status: 400, type: 'invalid-field', field: 'query.limit' },
    });
  }
  for (const query of ['afterSeq=-1', 'afterSeq=1e3', 'afterSeq=0x10', 'afterSeq=%201']) {
    add('query', query, {
      ...get(`/conversations/done-1/history?${query}`),
      expect: { status: 400, type: 'invalid-field', field: 'query.afterSeq' },
    });
  }

  // Time travel: the steps' query, a step, and fork bodies.
  for (const query of ['limit=0', 'limit=1001', 'limit=x', 'afterSeq=-1', 'afterSeq=1.5']) {
    const field = query.startsWith('limit') ? 'query.limit' : 'query.afterSeq';
    add('time travel', `steps ${query}`, {
      ...get(`/conversations/done-1/steps?${query}`),
      expect: { status: 400, type: 'invalid-field', field },
    });
  }
  for (const query of ['seq=0', 'seq=-1', 'seq=abc', 'seq=1.5', 'seq=', 'seq=1&seq=2']) {
    add('time travel', `view ${query}`, {
      ...get(`/conversations/done-1?${query}`),
      expect: { status: 400, type: 'invalid-field', field: 'query.seq' },
    });
  }
  add('time travel', 'a step never written', {
    ...get('/conversations/done-1?seq=99999'),
    expect: { status: 404, type: 'step-not-found', field: 'seq' },
  });
  add('time travel', 'the steps of no conversation', {
    ...get('/conversations/nobody/steps'),
    expect: { status: 404, type: 'conversation-not-found', field: 'id' },
  });
  const forkBodies: Array<[string, string, number, ProblemTypeName, string]> = [
    ['seq missing', '{}', 400, 'invalid-field', 'seq'],
    ['seq 0', '{"seq": 0}', 400, 'invalid-field', 'seq'],
    ['seq a string', '{"seq": "1"}', 400, 'invalid-field', 'seq'],
    ['seq 1.5', '{"seq": 1.5}', 400, 'invalid-field', 'seq'],
    ['seq huge', '{"seq": 1e300}', 400, 'invalid-field', 'seq'],
    ['newId empty', '{"seq": 1, "newId": ""}', 400, 'invalid-field', 'newId'],
    ['newId a path', '{"seq": 1, "newId": "../done-1"}', 400, 'invalid-field', 'newId'],
    ['newId a number', '{"seq": 1, "newId": 7}', 400, 'invalid-field', 'newId'],
    ['messages not an array', '{"seq": 1, "newId": "f-1", "messages": "hi"}', 400, 'invalid-field', 'messages'],
    [
      'messages of an unknown role',
      '{"seq": 1, "newId": "f-2", "messages": [{"role": "robot", "content": "hi"}]}',
      400,
      'invalid-field',
      'messages',
    ],
    ['an unknown field', '{"seq": 1, "newId": "f-3", "at": 5}', 400, 'invalid-field', 'at'],
    ['a step never written', '{"seq": 99999, "newId": "f-4"}', 404, 'step-not-found', 'seq'],
    ['newId in use', '{"seq": 1, "newId": "waiting-1"}', 409, 'conversation-exists', 'newId'],
    ['newId is itself', '{"seq": 1, "newId": "done-1"}', 409, 'conversation-exists', 'newId'],
  ];
  for (const [name, body, status, type, field] of forkBodies) {
    add('time travel', `fork ${name}`, { ...post('/conversations/done-1/fork', body), expect: { status, type, field } });
  }
  add('time travel', 'forking no conversation', {
    ...post('/conversations/nobody/fork', '{"seq": 1, "newId": "f-5"}'),
    expect: { status: 404, type: 'conversation-not-found', field: 'id' },
  });

  // Without the token, or with another one: nothing is read, nothing loaded.
  for (const route of [...bodyRoutes.map((route) => route.path), ...getRoutes]) {
    const isPost = !getRoutes.includes(route as (typeof getRoutes)[number]);
    const request: { method: string; path: string; body?: CorpusBody; headers?: Record<string, string> } = isPost
      ? post(route, '{"content": "hi"}')
      : { method: 'GET', path: route };
    add('authorization', `${route} no token`, {
      ...request,
      headers: { ...request.headers, authorization: '' },
      expect: { status: 401, type: 'unauthorized' },
    });
    add('authorization', `${route} another token`, {
      ...request,
      headers: { ...request.headers, authorization: 'Bearer someone-else' },
      expect: { status: 403, type: 'forbidden' },
    });
  }
  add('authorization', 'unauthorized and malformed: the body is never read', {
    ...post('/conversations/new-1/messages', '{', { 'content-type': 'application/json', authorization: 'Bearer someone-else' }),
    expect: { status: 403, type: 'forbidden' },
  });

  // Things that are not there (reads only).
  add('not there', 'a dot segment: /conversations/./events is /conversations/events', {
    ...get('/conversations/./events'),
    expect: { status: 404, type: 'conversation-not-found', field: 'id' },
  });
  add('not there', 'a conversation no one started', {
    ...get('/conversations/nobody'),
    expect: { status: 404, type: 'conversation-not-found', field: 'id' },
  });
  add('not there', 'its history', {
    ...get('/conversations/nobody/history'),
    expect: { status: 404, type: 'conversation-not-found', field: 'id' },
  });
  add('not there', 'approving in it', {
    ...post('/conversations/nobody/approve', '{"toolCallId": "call_1"}'),
    expect: { status: 404, type: 'conversation-not-found', field: 'id' },
  });
  add('not there', 'cancelling it', {
    ...post('/conversations/nobody/cancel', '{}'),
    expect: { status: 404, type: 'conversation-not-found', field: 'id' },
  });

  return corpus;
}
