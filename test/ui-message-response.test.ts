/**
 * `toUIMessageStreamResponse` over a source stream the test controls: what arrives together is
 * written together, in order, split past a size; a source that fails or a client that leaves
 * ends the body cleanly.
 */
import { describe, expect, it } from 'vitest';
import type { UIMessageChunk } from '../src/http/ui-message/ui-message-chunk.js';
import { toUIMessageStreamResponse } from '../src/http/ui-message/ui-message-stream-response.js';

type Source = { stream: ReadableStream<UIMessageChunk>; controller: ReadableStreamDefaultController<UIMessageChunk>; cancelled: unknown[] };

function source(): Source {
  let controller: ReadableStreamDefaultController<UIMessageChunk> | undefined;
  const cancelled: unknown[] = [];
  const stream = new ReadableStream<UIMessageChunk>({
    start(c) {
      controller = c;
    },
    cancel(reason) {
      cancelled.push(reason);
    },
  });
  return { stream, controller: controller as ReadableStreamDefaultController<UIMessageChunk>, cancelled };
}

const delta = (index: number, text = `w${index} `): UIMessageChunk => ({ type: 'text-delta', id: 't1', delta: text });

/** The body's chunks, as the client reads them, until it ends. */
async function readAll(response: Response): Promise<string[]> {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const writes: string[] = [];
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return writes;
    writes.push(decoder.decode(value));
  }
}

const dataOf = (writes: string[]) =>
  writes
    .join('')
    .split('\n\n')
    .filter((event) => event.startsWith('data: '))
    .map((event) => event.slice('data: '.length));

describe('toUIMessageStreamResponse', () => {
  it("writes the chunks that arrive together as one chunk: a step's 40 deltas are one write, not 40", async () => {
    const { stream, controller } = source();
    const response = toUIMessageStreamResponse(stream, { heartbeatMs: 0 });
    controller.enqueue({ type: 'start', messageId: 'm1' });
    for (let index = 0; index < 40; index++) controller.enqueue(delta(index));
    controller.enqueue({ type: 'finish' });
    controller.close();
    const writes = await readAll(response);
    const data = dataOf(writes);
    expect(data.at(-1)).toBe('[DONE]');
    expect(data.slice(0, -1).map((text) => JSON.parse(text))).toEqual([
      { type: 'start', messageId: 'm1' },
      ...Array.from({ length: 40 }, (_, index) => delta(index)),
      { type: 'finish' },
    ]);
    // Every event whole: no write ends inside one.
    for (const write of writes) expect(write.endsWith('\n\n')).toBe(true);
    expect(writes.length).toBeLessThanOrEqual(3);
  });

  it('writes a chunk that arrives on its own at once, in order with the rest', async () => {
    const { stream, controller } = source();
    const response = toUIMessageStreamResponse(stream, { heartbeatMs: 0 });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    for (let index = 0; index < 5; index++) {
      controller.enqueue(delta(index));
      const { value } = await reader.read();
      expect(decoder.decode(value)).toBe(`data: ${JSON.stringify(delta(index))}\n\n`);
    }
    controller.close();
    expect(decoder.decode((await reader.read()).value)).toBe('data: [DONE]\n\n');
    expect((await reader.read()).done).toBe(true);
  });

  it('splits a long backlog into writes of about 64 KiB', async () => {
    const { stream, controller } = source();
    const response = toUIMessageStreamResponse(stream, { heartbeatMs: 0 });
    const text = 'x'.repeat(1_000);
    for (let index = 0; index < 300; index++) controller.enqueue(delta(index, text));
    controller.close();
    const writes = await readAll(response);
    expect(dataOf(writes)).toHaveLength(301);
    expect(writes.length).toBeGreaterThanOrEqual(4);
    for (const write of writes) expect(write.length).toBeLessThan(65_536 + 1_100);
  });

  it('a source that fails while a read waits fails the body, with no unhandled rejection', async () => {
    const { stream, controller } = source();
    const response = toUIMessageStreamResponse(stream, { heartbeatMs: 0 });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    controller.enqueue(delta(0));
    await reader.read();
    // The body now waits on a read of the source that has no chunk yet.
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.error(new Error('the run went away'));
    await expect(reader.read()).rejects.toThrow('the run went away');
  });

  it('a client that leaves cancels the source, with a read waiting on it', async () => {
    const { stream, controller, cancelled } = source();
    const response = toUIMessageStreamResponse(stream, { heartbeatMs: 0 });
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    controller.enqueue(delta(0));
    await reader.read();
    await new Promise((resolve) => setTimeout(resolve, 5));
    await reader.cancel('gone');
    expect(cancelled).toEqual(['gone']);
  });
});
