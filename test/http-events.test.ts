/**
 * `GET /conversations/:id/events` (docs/http.md "Server-Sent Events"): ids, event names and data;
 * subscribing before the first message; a reconnect with `Last-Event-ID` (or `?lastEventId=`)
 * that gets exactly the text deltas it missed — from the same host, and from a new host on the
 * same SQLite file after a restart; heartbeats; and a client that stops reading, which is told to
 * resume and loses nothing when it does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseStreamId } from '../src/host/conversation-stream.js';
import { createConversationHandler } from '../src/http/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { deferred } from './support/run-conversation.js';
import {
  call,
  countingFollows,
  defaultReply,
  deltasOf,
  openEvents,
  parseSse,
  type Reply,
  type Service,
  type SseMessage,
  startService,
  until,
} from './support/http-service.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-http-events-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const services: Service[] = [];
const clients: Array<{ leave: () => void }> = [];
afterEach(async () => {
  for (const client of clients.splice(0)) client.leave();
  for (const service of services.splice(0)) await service.close();
});
async function service(settings: Parameters<typeof startService>[0] = {}) {
  const started = await startService(settings);
  services.push(started);
  return started;
}
function follow(...args: Parameters<typeof openEvents>) {
  const client = openEvents(...args);
  clients.push(client);
  return client;
}

const story = Array.from({ length: 40 }, (_, index) => `word${index} `).join('');
const piece = (content: string): OpenAIChatCompletionChunk => ({ choices: [{ index: 0, delta: { content }, finish_reason: null }] });
const stop: OpenAIChatCompletionChunk = { choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] };

/** "story": `story` word by word, stopping after the 10th and the 25th until the gates open. */
function storyReply(gates: { first: Promise<void>; second: Promise<void> }) {
  return (text: string, results: number): Reply => {
    if (text !== 'story') return defaultReply(text, results);
    return async function* () {
      const words = story.split(/(?<= )/);
      for (const [index, word] of words.entries()) {
        yield piece(word);
        if (index === 9) await gates.first;
        if (index === 24) await gates.second;
      }
      yield stop;
    };
  };
}

const isEnd = (messages: SseMessage[]) => messages.some((message) => message.event === 'state' && message.data.status === 'done');
const position = (id: string | undefined) => parseStreamId(id ?? '') ?? [Number.NaN, Number.NaN, ''];

describe('the event stream', () => {
  it('subscribed before the first message: every event with id, event and data; ids grow; states without the history', async () => {
    const { url } = await service();
    const events = follow(url, '/conversations/e-1/events');
    expect((await events.status).status).toBe(200);
    expect((await events.status).headers['content-type']).toBe('text/event-stream; charset=utf-8');
    await call(url, 'POST', '/conversations/e-1/messages', { body: { content: 'lookup fox' } });
    await events.until(isEnd, 'the end of the run');
    const { messages } = events;
    expect(messages.map((message) => message.event)).toEqual(
      expect.arrayContaining(['request.started', 'tool.call', 'tool.result', 'text.delta', 'state']),
    );
    for (const message of messages) {
      expect(message.id).toMatch(/^\d+\.\d+\.[a-z0-9]+$/);
      expect(message.data.type).toBe(message.event);
    }
    for (let index = 1; index < messages.length; index++) {
      const [before, after] = [position(messages[index - 1]?.id), position(messages[index]?.id)];
      expect(before[0] < after[0] || (before[0] === after[0] && before[1] < after[1])).toBe(true);
    }
    const states = messages.filter((message) => message.event === 'state');
    for (const state of states) expect(state.data).not.toHaveProperty('messages');
    expect(states.at(-1)?.data).toMatchObject({ status: 'done', output: { status: 'done', text: 'done.' } });
    expect(deltasOf(messages)).toBe('done.');
    // The stream goes on across runs.
    await call(url, 'POST', '/conversations/e-1/messages', { body: { content: 'say again' } });
    await events.until((all) => deltasOf(all) === 'done.again', 'the second run');
  });

  it('a reconnect with Last-Event-ID mid-answer gets exactly the deltas it missed, then the rest live; ?lastEventId= for clients that cannot set headers', async () => {
    const first = deferred();
    const second = deferred();
    const { url, store, host } = await service({ reply: storyReply({ first: first.promise, second: second.promise }) });
    const reader = follow(url, '/conversations/s-1/events');
    await reader.status;
    await call(url, 'POST', '/conversations/s-1/messages', { body: { content: 'story' } });
    await reader.until((all) => all.filter((message) => message.event === 'text.delta').length === 10, 'ten words');
    reader.leave();
    await reader.ended;
    const seen = [...reader.messages];
    // Missed while away: words 11 to 25.
    first.resolve();
    let emitted = '';
    const stopWatching = host.follow(
      's-1',
      { next: ({ event }) => (emitted += event.type === 'text.delta' ? event.delta : '') },
      { from: 'run' },
    );
    await until(() => emitted.includes('word24 '), 'words 11 to 25 emitted while the client is away');
    stopWatching();
    const again = follow(url, '/conversations/s-1/events', { 'last-event-id': seen.at(-1)?.id as string });
    await again.until((all) => deltasOf(all).includes('word24 '), 'the words missed');
    second.resolve();
    await again.until(isEnd, 'the end');
    expect(deltasOf(seen) + deltasOf(again.messages)).toBe(story);
    const ids = [...seen, ...again.messages].map((message) => message.id);
    expect(new Set(ids).size).toBe(ids.length);

    // Once it is all stored: the query parameter does the same.
    await until(async () => (await store.load('s-1'))?.status === 'done', 's-1 stored');
    const middle = seen.at(4)?.id as string;
    const byQuery = follow(url, `/conversations/s-1/events?lastEventId=${encodeURIComponent(middle)}`);
    await byQuery.until(isEnd, 'the end, replayed');
    expect(deltasOf(seen.slice(0, 5)) + deltasOf(byQuery.messages)).toBe(story);
    // Without a position: the last run from its start; from=now: nothing until something happens.
    const fromRun = follow(url, '/conversations/s-1/events');
    await fromRun.until(isEnd, 'the last run');
    expect(deltasOf(fromRun.messages)).toBe(story);
    const fromNow = follow(url, '/conversations/s-1/events?from=now');
    expect((await fromNow.status).status).toBe(200);
    await call(url, 'POST', '/conversations/s-1/messages', { body: { content: 'say more' } });
    await fromNow.until(isEnd, 'the next run');
    expect(deltasOf(fromNow.messages)).toBe('more');
    // The header wins over the URL it was opened with (an EventSource reconnecting keeps its URL).
    const both = follow(url, `/conversations/s-1/events?lastEventId=${encodeURIComponent(middle)}`, {
      'last-event-id': fromNow.messages.at(-1)?.id as string,
    });
    await call(url, 'POST', '/conversations/s-1/messages', { body: { content: 'say last' } });
    await both.until((all) => isEnd(all), 'the run after');
    expect(deltasOf(both.messages)).toBe('last');
  });

  it('after a restart: a new host on the same SQLite file replays what the client missed, exactly', async () => {
    const path = join(work, 'restart.db');
    const first = deferred();
    const before = await service({ store: sqliteStore({ path }), reply: storyReply({ first: first.promise, second: Promise.resolve() }) });
    const reader = follow(before.url, '/conversations/r-1/events');
    await reader.status;
    await call(before.url, 'POST', '/conversations/r-1/messages', { body: { content: 'story' } });
    await reader.until((all) => all.filter((message) => message.event === 'text.delta').length === 10, 'ten words');
    reader.leave();
    first.resolve();
    await until(async () => (await before.store.load('r-1'))?.status === 'done', 'r-1 stored');
    await before.close();

    const after = await service({ store: sqliteStore({ path }) });
    const again = follow(after.url, '/conversations/r-1/events', { 'last-event-id': reader.messages.at(-1)?.id as string });
    await again.until(isEnd, 'the rest of the run');
    expect(deltasOf(reader.messages) + deltasOf(again.messages)).toBe(story);
    const ids = [...reader.messages, ...again.messages].map((message) => message.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("writes the events that arrive together as one chunk: a step's 40 deltas are one write, not 40", async () => {
    const open = deferred();
    const { host, store } = await service({ reply: storyReply({ first: open.promise, second: open.promise }) });
    open.resolve();
    const handler = createConversationHandler(host, { authorize: () => true, store });
    const response = await handler(new Request('http://127.0.0.1/conversations/chunks-1/events'));
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // `retry:`
    await host.send('chunks-1', { type: 'user.message', content: 'story' });
    const decoder = new TextDecoder();
    const messages: SseMessage[] = [];
    const comments = { count: 0 };
    let buffer = '';
    let chunks = 0;
    while (!isEnd(messages)) {
      const { value } = await reader.read();
      chunks++;
      buffer = parseSse(buffer + decoder.decode(value, { stream: true }), messages, comments);
    }
    await reader.cancel();
    expect(deltasOf(messages)).toBe(story);
    // Every event is whole and in order, though fewer chunks than events carried them.
    const ids = messages.map((message) => position(message.id));
    for (let index = 1; index < ids.length; index++)
      expect(ids[index - 1]![1] < ids[index]![1] || ids[index - 1]![0] < ids[index]![0]).toBe(true);
    expect(messages.length).toBeGreaterThan(40);
    expect(chunks).toBeLessThan(messages.length / 4);
  });

  it('heartbeat comments keep an idle stream open; a client that leaves stops the following', async () => {
    const { url, host, store } = await service({ handler: { heartbeatMs: 20 } });
    const { host: counted, open } = countingFollows(host);
    const handler = createConversationHandler(counted, { authorize: () => true, heartbeatMs: 20, store });
    const response = await handler(new Request('http://127.0.0.1/conversations/idle-1/events'));
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let text = '';
    while ((text.match(/^: heartbeat$/gm) ?? []).length < 3) text += decoder.decode((await reader.read()).value);
    expect(text.startsWith('retry: 1000\n\n')).toBe(true);
    expect(open.count).toBe(1);
    await reader.cancel();
    expect(open.count).toBe(0);
    // Over node:http too: the socket closing ends it.
    const idle = follow(url, '/conversations/idle-2/events');
    await idle.until(() => idle.comments.count >= 3, 'three heartbeats');
  });
});

describe('a client that stops reading', () => {
  it('to the handler: past maxBufferedBytes the stream says resume (with the last id written) and ends; resuming from there loses nothing', async () => {
    const { host, store, url } = await service();
    const handler = createConversationHandler(host, { authorize: () => true, maxBufferedBytes: 4_096, store });
    const long = Array.from({ length: 300 }, (_, index) => `piece-${index}-${'x'.repeat(30)} `).join('');
    const response = await handler(new Request('http://127.0.0.1/conversations/slow-1/events'));
    await call(url, 'POST', '/conversations/slow-1/messages', { body: { content: `say ${long}` } });
    await until(async () => (await store.load('slow-1'))?.status === 'done', 'slow-1 done');
    // Only now does the client read: what was kept for it is bounded.
    const text = await response.text();
    expect(Buffer.byteLength(text)).toBeLessThan(4_096 + 1_024);
    const messages: SseMessage[] = [];
    parseSse(text, messages, { count: 0 });
    const resume = messages.at(-1);
    expect(resume).toMatchObject({ event: 'resume', id: undefined, data: { reason: 'slow_client' } });
    const delivered = messages.slice(0, -1);
    expect(resume?.data.lastEventId).toBe(delivered.at(-1)?.id);
    expect(deltasOf(delivered).length).toBeLessThan(long.length);
    const rest = follow(url, '/conversations/slow-1/events', { 'last-event-id': String(resume?.data.lastEventId) });
    await rest.until(isEnd, 'the rest');
    expect(deltasOf(delivered) + deltasOf(rest.messages)).toBe(long);
  });

  it('over node:http: a paused client is cut off at the buffer, not buffered whole; it reconnects with Last-Event-ID and gets all of it', async () => {
    // More than the kernel's socket buffers hold, so the stream's own buffer is what fills up.
    const chunk = 'z'.repeat(16_384);
    const pieces = 800;
    const { url, store } = await service({
      handler: { maxBufferedBytes: 65_536 },
      reply: (text, results) =>
        text === 'flood'
          ? async function* () {
              for (let index = 0; index < pieces; index++) yield piece(`${index}:${chunk}|`);
              yield stop;
            }
          : defaultReply(text, results),
    });
    const expected = Array.from({ length: pieces }, (_, index) => `${index}:${chunk}|`).join('');
    const slow = follow(url, '/conversations/flood-1/events');
    await slow.status;
    slow.pause();
    await call(url, 'POST', '/conversations/flood-1/messages', { body: { content: 'flood' } });
    await until(async () => (await store.load('flood-1'))?.status === 'done', 'flood-1 done', 60_000);
    slow.resume();
    await slow.ended;
    const resume = slow.messages.at(-1);
    expect(resume).toMatchObject({ event: 'resume', data: { reason: 'slow_client' } });
    const delivered = slow.messages.slice(0, -1);
    expect(resume?.data.lastEventId).toBe(delivered.at(-1)?.id);
    expect(deltasOf(delivered).length).toBeLessThan(expected.length / 2);
    // As an EventSource would: reconnect from the last id until the run's end comes. The replay is
    // sent at the pace the client reads, so one reconnect is enough however large it is.
    let received = deltasOf(delivered);
    let lastEventId = String(resume?.data.lastEventId);
    let reconnects = 0;
    for (;;) {
      reconnects++;
      expect(reconnects).toBeLessThan(100);
      const again = follow(url, '/conversations/flood-1/events', { 'last-event-id': lastEventId });
      await again.until((all) => isEnd(all) || all.at(-1)?.event === 'resume', 'the rest or a resume', 60_000);
      const last = again.messages.at(-1);
      const kept = last?.event === 'resume' ? again.messages.slice(0, -1) : again.messages;
      received += deltasOf(kept);
      if (last?.event !== 'resume') break;
      expect(kept.length).toBeGreaterThan(0);
      lastEventId = String(last.data.lastEventId);
      again.leave();
    }
    expect(received === expected).toBe(true);
    expect(reconnects).toBe(1);
  }, 120_000);
});

describe('the stream of a host that closes', () => {
  it('ends with resume (host_closed) and the last id written', async () => {
    const { url, host } = await service();
    const events = follow(url, '/conversations/c-1/events');
    await call(url, 'POST', '/conversations/c-1/messages', { body: { content: 'say bye' } });
    await events.until(isEnd, 'the run');
    await host.close();
    await events.ended;
    expect(events.messages.at(-1)).toMatchObject({
      event: 'resume',
      data: { reason: 'host_closed', lastEventId: events.messages.at(-2)?.id },
    });
  });
});
