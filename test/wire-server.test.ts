import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import {
  assertRequestMatches,
  closedPortUrl,
  hasRecordedFixtures,
  jsonResponse,
  loadCassette,
  missingRecordedFixturesNote,
  openaiSse,
  recordedFixturesDir,
  splitSseEvents,
  startWireServer,
  type WireServer,
} from './support/wire-server.js';

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('wire server', () => {
  it('serves steps strictly in order and records each request', async () => {
    server = await startWireServer([jsonResponse(200, { n: 1 }), jsonResponse(201, { n: 2 })]);
    const first = await fetch(`${server.url}/a`, { method: 'POST', body: JSON.stringify({ x: 1 }) });
    const second = await fetch(`${server.url}/b?q=1`, { method: 'POST', body: 'not json' });
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ n: 1 });
    expect(second.status).toBe(201);
    expect(await second.json()).toEqual({ n: 2 });
    expect(server.requests.map((request) => [request.method, request.path, request.body])).toEqual([
      ['POST', '/a', { x: 1 }],
      ['POST', '/b', 'not json'],
    ]);
    expect(server.remainingSteps()).toBe(0);
  });

  it('answers a request beyond the script with a 500 naming the overflow', async () => {
    server = await startWireServer([]);
    const response = await fetch(`${server.url}/v1/chat/completions`, { method: 'POST', body: '{}' });
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { message: string; type: string } };
    expect(body.error.type).toBe('wire_server_script_overflow');
    expect(body.error.message).toContain('request #1');
    expect(body.error.message).toContain('0 step(s)');
  });

  it('writes SSE bodies byte-exact, one event at a time', async () => {
    const response = openaiSse([{ a: 1 }, ': comment-like data'], { done: true });
    response.body += ': trailing comment\n\n';
    server = await startWireServer([response], { chunkDelayMs: 5 });
    const reply = await fetch(`${server.url}/s`, { method: 'POST' });
    expect(reply.headers.get('content-type')).toBe('text/event-stream');
    const reader = reply.body!.getReader();
    const reads: string[] = [];
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      reads.push(decoder.decode(value, { stream: true }));
    }
    expect(reads.join('')).toBe(response.body);
    expect(reads.length).toBeGreaterThan(1);
    expect(splitSseEvents(response.body).join('')).toBe(response.body);
  });

  it('gives function steps raw control and counts closed sockets', async () => {
    server = await startWireServer([
      (_request, control) => {
        control.res.writeHead(200, { 'content-type': 'text/event-stream' });
        control.res.write('data: {"partial":true}\n\n');
        setTimeout(() => control.socket.destroy(), 10);
      },
    ]);
    const reply = await fetch(`${server.url}/s`, { method: 'POST' });
    await expect(reply.text()).rejects.toThrow();
    await server.waitForClosedSockets(1);
    expect(server.closedSockets()).toBe(1);
  });

  it('reports a function step that throws as a 500', async () => {
    server = await startWireServer([
      () => {
        throw new Error('boom');
      },
    ]);
    const reply = await fetch(`${server.url}/s`, { method: 'POST' });
    expect(reply.status).toBe(500);
    expect(server.stepErrors).toHaveLength(1);
  });

  it('close() destroys open sockets, idle keep-alive and mid-response alike, and resolves at once', async () => {
    const current = await startWireServer([
      // Never ends on its own: only close() can end this response.
      async (_request, control) => {
        control.res.writeHead(200, { 'content-type': 'text/event-stream' });
        control.res.write('data: {"partial":true}\n\n');
        await control.clientClosed;
      },
      jsonResponse(200, {}),
    ]);
    server = current;
    const streaming = await fetch(`${current.url}/s`, { method: 'POST' });
    const streamed = streaming.text().then(
      () => 'ended' as const,
      () => 'cut off' as const,
    );
    // The first connection is busy, so this one is a second; once answered it stays open, idle.
    await (await fetch(`${current.url}/s`, { method: 'POST' })).text();
    expect(current.openSockets()).toBe(2);
    server = undefined;
    // Node's own server.close() ends idle connections only, and waits for a busy one: without the destroy it would hang here.
    const closed = Promise.all([current.close(), current.waitForClosedSockets(2)]).then(
      () => 'closed' as const,
      () => 'still open' as const,
    );
    const deadline = new Promise<'still open'>((resolve) => setTimeout(() => resolve('still open'), 1_000).unref());
    expect(await Promise.race([closed, deadline])).toBe('closed');
    expect({ open: current.openSockets(), closed: current.closedSockets() }).toEqual({ open: 0, closed: 2 });
    expect(await streamed).toBe('cut off');
  });

  it('closedPortUrl() refuses connections', async () => {
    const url = await closedPortUrl();
    await expect(fetch(url)).rejects.toThrow();
  });

  it('feeds the real openai SDK', async () => {
    server = await startWireServer([
      openaiSse([
        {
          id: 'c',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'm',
          choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }],
        },
      ]),
    ]);
    const client = new OpenAI({ apiKey: 'test-key', baseURL: `${server.url}/v1`, maxRetries: 0 });
    const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hello' }], stream: true });
    const contents: string[] = [];
    for await (const chunk of stream) contents.push(chunk.choices[0]?.delta.content ?? '');
    expect(contents).toEqual(['hi']);
    expect(server.requests[0]?.path).toBe('/v1/chat/completions');
  });
});

describe('assertRequestMatches', () => {
  const recorded = {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'q' },
      { role: 'assistant', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a": 1}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '2' },
    ],
    tools: [{ type: 'function', function: { name: 'f', parameters: {}, strict: false } }],
    temperature: 0,
  };

  it('ignores fields clients set differently and JSON spacing of arguments', () => {
    assertRequestMatches(recorded, {
      model: 'gpt-4o-mini',
      stream: true,
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: [{ type: 'text', text: 'q' }] },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '2' },
      ],
      tools: [{ type: 'function', function: { name: 'f', description: 'x', parameters: { type: 'object' } } }],
    });
  });

  it('fails on a different tool-call id, result or role order', () => {
    const bad = structuredClone(recorded);
    (bad.messages[3] as { tool_call_id: string }).tool_call_id = 'call_2';
    expect(() => assertRequestMatches(recorded, bad)).toThrow();
    const swapped = structuredClone(recorded);
    swapped.messages.reverse();
    expect(() => assertRequestMatches(recorded, swapped)).toThrow();
  });

  it('compares Anthropic thinking signatures byte for byte', () => {
    const anthropic = {
      model: 'claude',
      system: [{ type: 'text', text: 's' }],
      messages: [
        { role: 'user', content: 'q' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 't', signature: 'SIG' },
            { type: 'tool_use', id: 'tu', name: 'f', input: {} },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu', content: 'r' }] },
      ],
    };
    const same = structuredClone(anthropic);
    (same as { system: unknown }).system = 's';
    (same.messages[2] as { content: unknown }).content = [
      { type: 'tool_result', tool_use_id: 'tu', content: [{ type: 'text', text: 'r' }] },
    ];
    assertRequestMatches(anthropic, same);
    const changed = structuredClone(anthropic);
    (changed.messages[1]!.content as Array<Record<string, unknown>>)[0]!.signature = 'SIG ';
    expect(() => assertRequestMatches(anthropic, changed)).toThrow();
  });
});

describe.skipIf(!hasRecordedFixtures)('loadCassette', () => {
  it('reads a recorded cassette', () => {
    const cassette = loadCassette(path.join(recordedFixturesDir, 'openai/fantasy-gpt-4o-mini-tool-streaming.json'));
    expect(cassette.provider).toBe('openai');
    expect(cassette.name).toBe('fantasy-gpt-4o-mini-tool-streaming');
    expect(cassette.interactions.length).toBe(2);
  });
});
if (!hasRecordedFixtures) console.warn(missingRecordedFixturesNote);

describe('waitForRequestSocketClosed', () => {
  it('waits for the connection of one request, and times out with a clear message', async () => {
    const local = await startWireServer([
      async (_request, control) => {
        control.res.writeHead(200, { 'content-type': 'text/event-stream' });
        control.res.write('data: {}\n\n');
        await control.sleep(5_000);
      },
    ]);
    try {
      const controller = new AbortController();
      const reply = await fetch(`${local.url}/s`, { method: 'POST', signal: controller.signal });
      await expect(local.waitForRequestSocketClosed(0, 50)).rejects.toThrow(/request #1 did not close/);
      controller.abort();
      await reply.body?.cancel().catch(() => {});
      await local.waitForRequestSocketClosed(0);
    } finally {
      await local.close();
    }
  });
});
