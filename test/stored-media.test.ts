/**
 * Media stored once (DESIGN §16, "Stored once"): with a store that keeps media by content
 * (`readMedia`: the memory, SQLite and Postgres stores), a conversation's snapshots, steps, log and
 * stored stream carry references (`{ type, ref: 'sha256:…', mediaType, bytes }`), the bytes are in
 * the store once, and the host gives whole parts back on every read. Forks and `keepSteps` keep
 * references valid; a medium goes with the last conversation that refers to it. A store file
 * written before media existed opens and takes them. A reference whose bytes are gone is a load
 * error naming the conversation.
 */
import { copyFileSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConversationLoadError,
  type ConversationStore,
  createConversationHost,
  createConversationMachine,
  defineTool,
  handlerProvider,
  type Message,
  memoryStore,
  toolContent,
} from '../src/index.js';
import { postgresStore } from '../src/stores/postgres/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { fixtureDatabaseOf } from './support/snapshot-fixtures.js';
import { postgresUrl, testSchema } from './support/postgres.js';
import { scriptedModel } from './support/scripted-model.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-media-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const postgresSchema = testSchema('media');
afterAll(() => postgresSchema.drop());
let made = 0;

/** 300 KB of bytes that do not compress, with a PNG signature in front. */
const image = (() => {
  const bytes = Buffer.alloc(300_000);
  for (let index = 0; index < bytes.length; index++) bytes[index] = (index * 7919 + (index >> 8)) & 0xff;
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 0);
  return bytes;
})();
const imageBase64 = image.toString('base64');
const imageRef = `sha256:${createHash('sha256').update(image).digest('hex')}`;

const stores: Array<[string, (options?: { keepSteps?: number }) => ConversationStore & { close(): Promise<void> }]> = [
  ['memoryStore', (options = {}) => memoryStore(options)],
  ['sqliteStore', (options = {}) => sqliteStore({ path: join(work, `media-${++made}.db`), ...options })],
  [
    'postgresStore',
    (options = {}) => postgresStore({ connectionString: postgresUrl, schema: postgresSchema.name, tablePrefix: `m${++made}_`, ...options }),
  ],
];

const shot = defineTool({
  name: 'shot',
  parameters: z.object({ n: z.number() }),
  // The same picture every round: stored once however often it comes back.
  execute: ({ n }) =>
    toolContent([
      { type: 'text', text: `shot ${n}` },
      { type: 'image', data: image, mediaType: 'image/png' },
    ]),
});

function hostOver(store: ConversationStore, rounds = 3) {
  const turns = [
    ...Array.from({ length: rounds }, (_, index) => ({ toolCalls: [{ id: `s${index}`, name: 'shot', args: { n: index } }] })),
    { text: 'Seen them all.' },
  ];
  const model = scriptedModel(turns);
  const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [shot], maxToolIterations: rounds + 1 });
  // A host closes its store when it closes: the tests' stores outlive their hosts.
  return { host: createConversationHost({ machine, store: { ...store, close: async () => undefined } }), model };
}

const ask = {
  type: 'user.message' as const,
  content: [
    { type: 'text' as const, text: 'Look.' },
    { type: 'image' as const, data: imageBase64 },
  ],
};

/** Every base64 copy of the image in a text (a stored snapshot, step or log entry). */
const copiesIn = (text: string) => text.split(imageBase64.slice(0, 4000)).length - 1;

describe.each(stores)('%s: media stored once', (_name, create) => {
  it('snapshots, steps and the log refer to the image; the store has it once; the host and the model get it whole', async () => {
    const store = create();
    const { host, model } = hostOver(store);
    await host.send('c1', ask);
    const output = await host.result('c1');
    expect(output.status).toBe('done');
    // The caller gets whole parts: the user's image, and each tool result's.
    expect(output.messages[0]).toEqual({
      role: 'user',
      content: [ask.content[0], { type: 'image', data: imageBase64, mediaType: 'image/png' }],
    });
    const results = output.messages.flatMap((message: Message) => (message.role === 'tool' ? message.content : []));
    expect(results.map((result) => result.content?.[1])).toEqual(
      Array(3).fill({ type: 'image', data: imageBase64, mediaType: 'image/png' }),
    );
    // The model got the image with every request after the tool rounds (Chat Completions: after the tool message).
    expect(JSON.stringify(model.requests.at(-1)?.messages)).toContain(imageBase64.slice(0, 4000));

    const stored = await store.load('c1');
    expect(copiesIn(stored!.snapshot)).toBe(0);
    expect(stored!.snapshot).toContain(`"ref":"${imageRef}"`);
    const steps = (await store.readSteps?.('c1')) ?? [];
    expect(steps.length).toBeGreaterThan(3);
    for (const step of steps) expect(copiesIn((await store.loadStep!('c1', step.seq))!.snapshot), `step ${step.seq}`).toBe(0);
    const log = await store.readLog('c1');
    expect(copiesIn(JSON.stringify(log))).toBe(0);
    expect(log[0]?.event).toEqual({
      type: 'user.message',
      content: [ask.content[0], { type: 'image', ref: imageRef, mediaType: 'image/png', bytes: image.length }],
    });
    expect(await store.readMedia!(imageRef)).toEqual({ ref: imageRef, mediaType: 'image/png', bytes: image.length, data: imageBase64 });
    await host.close();

    // Another host (a restart) reads it back whole and goes on.
    const again = hostOver(store, 1);
    await again.host.send('c1', { type: 'user.message', content: 'Once more.' });
    const next = await again.host.result('c1');
    expect(next.status).toBe('done');
    expect(next.messages[0]).toEqual(output.messages[0]);
    await again.host.close();
    await store.close();
  });

  it('a fork keeps the references valid; the image goes with the last conversation that refers to it', async () => {
    const store = create({ keepSteps: 2 });
    const { host } = hostOver(store, 1);
    await host.send('a', ask);
    await host.result('a');
    const steps = await host.history('a');
    await host.fork('a', { seq: steps.at(-1)!.seq, newId: 'b' });
    expect((await store.load('b'))!.snapshot).toContain(imageRef);
    expect(await store.delete('a')).toBe(true);
    expect(await store.readMedia!(imageRef)).toMatchObject({ ref: imageRef });
    expect((await host.get('b'))?.messages[0]).toEqual({
      role: 'user',
      content: [ask.content[0], { type: 'image', data: imageBase64, mediaType: 'image/png' }],
    });
    expect(await store.delete('b')).toBe(true);
    expect(await store.readMedia!(imageRef)).toBeUndefined();
    await host.close();
    await store.close();
  });

  it('a save that refers to bytes the store never had is refused, and nothing of it is written', async () => {
    const store = create();
    const conversation = {
      id: 'x',
      schemaVersion: 5,
      machineId: 'conversation',
      status: 'idle' as const,
      snapshot: '{}',
      revision: 1,
      owner: 'test',
      updatedAt: 1,
    };
    await expect(store.save(conversation, [], undefined, { media: [{ ref: imageRef, mediaType: 'image/png', bytes: 1 }] })).rejects.toThrow(
      /media/,
    );
    expect(await store.load('x')).toBeUndefined();
    await store.close();
  });
});

describe('bad and old data', () => {
  it('a reference whose bytes are gone is a ConversationLoadError naming the conversation and the reference; nothing is written', async () => {
    const inner = memoryStore();
    const { host } = hostOver(inner, 0);
    await host.send('c', ask);
    await host.result('c');
    await host.close();
    const stored = await inner.load('c');
    // A store that lost the bytes: the same records, no media.
    const lost: ConversationStore = { ...inner, readMedia: async () => undefined };
    const broken = hostOver(lost, 0).host;
    const error = await broken.get('c').catch((caught: unknown) => caught);
    expect(ConversationLoadError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ conversationId: 'c', problem: 'missing_media' });
    expect((error as Error).message).toContain(imageRef);
    expect(await inner.load('c')).toEqual(stored);
    await broken.close();
  });

  it('a SQLite file written before media existed opens, takes an image and keeps it once', async () => {
    const path = join(work, 'v1-copy.db');
    copyFileSync(fixtureDatabaseOf(1), path);
    const store = sqliteStore({ path });
    const { host } = hostOver(store, 0);
    await host.send('new-with-image', ask);
    expect((await host.result('new-with-image')).messages[0]).toMatchObject({ content: [ask.content[0], { data: imageBase64 }] });
    // The conversations written before still load.
    expect(await host.get('finished')).toMatchObject({ status: 'done' });
    expect(await store.readMedia!(imageRef)).toMatchObject({ bytes: image.length });
    await host.close();
    await store.close();
  });

  it('SQLite with every step kept: twenty rounds with the image cost about the image once, not twenty times', async () => {
    const path = join(work, 'twenty.db');
    const store = sqliteStore({ path });
    const { host } = hostOver(store, 20);
    await host.send('c', ask);
    expect((await host.result('c')).status).toBe('done');
    await host.close();
    await store.close();
    const size = statSync(path).size + (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0);
    expect(size).toBeLessThan(image.length * 1.5 + 400_000);
  });
});
