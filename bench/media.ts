/**
 * MEDIA: what rich content costs (issue 46's figures).
 *
 * - CPU per round: one conversation × 10 tool rounds against a zero-latency scripted model
 *   (`handlerProvider`), its first message with a 1 MB image and without; on a plain actor, and on
 *   a host over `sqliteStore` keeping every step (media stored once). Medians, sides interleaved;
 *   ratio image ÷ text (target ≤ 1.2).
 * - SQLite bytes: the file (and its WAL) after that conversation with every step kept, with the
 *   image minus without, over the image's size (target ≤ 1.5).
 * - Prompt caching: a 30-round Anthropic conversation through `anthropicProvider` and the real SDK,
 *   `promptCache: 'auto'` against `false`, priced with `modelPrices` (claude-sonnet-4-5). The local
 *   server answers each request with the usage Anthropic's cache rules give: a prefix that ends at
 *   a breakpoint an earlier request wrote is read from the cache, what lies between that and the
 *   request's last breakpoint is written, the rest is plain input (tokens: 4 characters each).
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import {
  anthropicProvider,
  createConversationHost,
  createConversationMachine,
  defineTool,
  handlerProvider,
  modelPrices,
  type UserContent,
} from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { cpuNowUs, median } from './stats.js';

export type MediaResult = {
  rounds: number;
  reps: number;
  imageBytes: number;
  /**
   * Per setting: CPU µs per round without and with the image, their ratio, and the floor's ratio —
   * the text run plus what any engine must do with the image once (base64 for the JSON wire; for a
   * store that keeps it once, its SHA-256 too), spread over the run's requests.
   */
  cpu: Array<{ setting: string; textUs: number; imageUs: number; ratio: number; floorUs: number; floorRatio: number }>;
  sqlite: { textBytes: number; imageBytes: number; overImage: number };
  caching: { rounds: number; autoUsd: number; offUsd: number; ratio: number; cachedInputTokens: number; cacheWriteTokens: number };
};

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): OpenAIChatCompletionChunk => ({
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});

/** A zero-latency model: a tool call per request until `rounds`, then the answer. */
function scripted(rounds: number) {
  let request = 0;
  return {
    reset: () => {
      request = 0;
    },
    provider: handlerProvider(async function* () {
      request++;
      if (request <= rounds) {
        yield chunk(
          {
            tool_calls: [
              { index: 0, id: `call_${request}`, type: 'function', function: { name: 'add', arguments: `{"a":${request},"b":1}` } },
            ],
          },
          'tool_calls',
        );
      } else yield chunk({ content: 'Done.' }, 'stop');
    }),
  };
}

const add = defineTool({
  name: 'add',
  description: 'add',
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

/** 1 MB that does not compress, behind a PNG signature: what a photo costs to move and store. */
function photo(bytes: number): Uint8Array {
  const data = new Uint8Array(bytes);
  let state = 0x9e3779b9;
  for (let index = 0; index < bytes; index++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    data[index] = state & 0xff;
  }
  data.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 0);
  return data;
}

const fileBytes = (path: string) =>
  (statSync(path, { throwIfNoEntry: false })?.size ?? 0) + (statSync(`${path}-wal`, { throwIfNoEntry: false })?.size ?? 0);

export async function mediaScenario(options: { reps: number; warmup: number; rounds?: number; imageBytes?: number }): Promise<MediaResult> {
  const rounds = options.rounds ?? 10;
  const imageBytes = options.imageBytes ?? 1024 * 1024;
  const image = photo(imageBytes);
  // A new message each run (new part objects, the same bytes): each run pays for its image as a new message would.
  const contentOf = (kind: 'text' | 'image'): UserContent =>
    kind === 'text'
      ? 'Add them up, round by round.'
      : [
          { type: 'text', text: 'Add them up, round by round.' },
          { type: 'image', data: image, mediaType: 'image/png' },
        ];
  const model = scripted(rounds);
  const machine = createConversationMachine({ provider: model.provider, tools: [add], maxToolIterations: rounds + 1 });
  const work = mkdtempSync(join(tmpdir(), 'actorloop-bench-media-'));
  let files = 0;

  const onActor = async (kind: 'text' | 'image') => {
    model.reset();
    const actor = createActor(machine, { input: {} }).start();
    actor.send({ type: 'user.message', content: contentOf(kind) });
    await toPromise(actor);
  };
  const onHost = async (kind: 'text' | 'image') => {
    model.reset();
    const path = join(work, `${kind}-${++files}.db`);
    const store = sqliteStore({ path });
    const host = createConversationHost({ machine, store });
    await host.send('c', { type: 'user.message', content: contentOf(kind) });
    await host.result('c');
    await host.close();
    return fileBytes(path);
  };

  // The floor: encoding the image for the wire once (and hashing it once, for a store that keeps it by content).
  const encodeUs: number[] = [];
  const hashUs: number[] = [];
  for (let rep = 0; rep < 15; rep++) {
    let started = cpuNowUs();
    const base64 = Buffer.from(image.buffer, image.byteOffset, image.byteLength).toString('base64');
    if (`data:image/png;base64,${base64}`.length < 0) throw new Error('unreachable');
    encodeUs.push(cpuNowUs() - started);
    started = cpuNowUs();
    await crypto.subtle.digest('SHA-256', image);
    hashUs.push(cpuNowUs() - started);
  }
  const floors: Record<string, number> = { actor: median(encodeUs), host: median(encodeUs) + median(hashUs) };

  const cpu: MediaResult['cpu'] = [];
  for (const [setting, run] of [
    ['actor', onActor],
    ['host + sqliteStore (every step kept)', onHost],
  ] as const) {
    const samples = { text: [] as number[], image: [] as number[] };
    for (let rep = 0; rep < options.warmup + options.reps; rep++) {
      for (const kind of rep % 2 === 0 ? (['text', 'image'] as const) : (['image', 'text'] as const)) {
        const started = cpuNowUs();
        await run(kind);
        if (rep >= options.warmup) samples[kind].push((cpuNowUs() - started) / (rounds + 1));
      }
    }
    const textUs = median(samples.text);
    const imageUs = median(samples.image);
    const floorUs = (setting === 'actor' ? floors.actor : floors.host) as number;
    cpu.push({ setting, textUs, imageUs, ratio: imageUs / textUs, floorUs, floorRatio: (textUs + floorUs / (rounds + 1)) / textUs });
  }
  const textBytes = await onHost('text');
  const withImage = await onHost('image');
  rmSync(work, { recursive: true, force: true });

  return {
    rounds,
    reps: options.reps,
    imageBytes,
    cpu,
    sqlite: { textBytes, imageBytes: withImage, overImage: (withImage - textBytes) / imageBytes },
    caching: await cachingCost(30),
  };
}

type Block = Record<string, unknown> & { cache_control?: unknown };

/**
 * A Messages API stand-in that prices by Anthropic's cache rules: the request is its blocks in
 * order (tools, system, then each message's content blocks); a breakpoint (`cache_control`) writes
 * the prefix up to it; a later request whose prefix up to one of its breakpoints was written reads
 * it. Answers a tool call until `rounds`, then text.
 */
async function cachingServer(rounds: number) {
  const written = new Set<string>();
  let requests = 0;
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (piece: Buffer) => {
      body += piece.toString();
    });
    request.on('end', () => {
      requests++;
      const sent = JSON.parse(body) as { tools?: Block[]; system?: string | Block[]; messages: Array<{ content: string | Block[] }> };
      const blocks: Block[] = [
        ...(sent.tools ?? []),
        ...(typeof sent.system === 'string' ? [{ type: 'text', text: sent.system }] : (sent.system ?? [])),
        ...sent.messages.flatMap((message) =>
          typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content,
        ),
      ];
      const tokens = blocks.map((block) => {
        const { cache_control: _mark, ...rest } = block;
        return Math.ceil(JSON.stringify(rest).length / 4);
      });
      const keyAt = (index: number) => JSON.stringify(blocks.slice(0, index + 1).map(({ cache_control: _mark, ...rest }) => rest));
      let read = 0;
      let upTo = -1;
      blocks.forEach((block, index) => {
        if (block.cache_control !== undefined && written.has(keyAt(index))) upTo = index;
      });
      if (upTo >= 0) read = tokens.slice(0, upTo + 1).reduce((sum, value) => sum + value, 0);
      let lastMark = -1;
      blocks.forEach((block, index) => {
        if (block.cache_control !== undefined) {
          lastMark = index;
          written.add(keyAt(index));
        }
      });
      const creation = lastMark > upTo ? tokens.slice(upTo + 1, lastMark + 1).reduce((sum, value) => sum + value, 0) : 0;
      const total = tokens.reduce((sum, value) => sum + value, 0);
      const usage = {
        input_tokens: total - read - creation,
        cache_read_input_tokens: read,
        cache_creation_input_tokens: creation,
        output_tokens: 40,
      };
      const content =
        requests <= rounds
          ? [{ type: 'tool_use', id: `toolu_${requests}`, name: 'add', input: { a: requests, b: 1 } }]
          : [{ type: 'text', text: 'The sums are done.' }];
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          id: `msg_${requests}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-sonnet-4-5',
          content,
          stop_reason: requests <= rounds ? 'tool_use' : 'end_turn',
          stop_sequence: null,
          usage,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    reset: () => {
      requests = 0;
      written.clear();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A 30-round conversation with a long system prompt, priced with caching on and off. */
async function cachingCost(rounds: number): Promise<MediaResult['caching']> {
  const server = await cachingServer(rounds);
  const system = 'You add numbers for the accounting team. '.repeat(120);
  const run = async (promptCache: 'auto' | false) => {
    server.reset();
    const machine = createConversationMachine({
      provider: anthropicProvider({
        model: 'claude-sonnet-4-5',
        apiKey: 'sk-ant-bench',
        baseURL: server.url,
        maxTokens: 1024,
        stream: false,
      }),
      tools: [add],
      system,
      promptCache,
      prices: modelPrices,
      maxToolIterations: rounds + 1,
    });
    const actor = createActor(machine, { input: {} }).start();
    actor.send({ type: 'user.message', content: 'Add 1 and 1, then keep going.' });
    return toPromise(actor);
  };
  const auto = await run('auto');
  const off = await run(false);
  await server.close();
  const autoUsd = auto.cost?.total ?? Number.NaN;
  const offUsd = off.cost?.total ?? Number.NaN;
  return {
    rounds,
    autoUsd,
    offUsd,
    ratio: autoUsd / offUsd,
    cachedInputTokens: auto.usage.cachedInputTokens ?? 0,
    cacheWriteTokens: auto.usage.cacheCreationInputTokens ?? 0,
  };
}

/** Runs alone: `npx tsx bench/media.ts`. */
if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await mediaScenario({ reps: 9, warmup: 3 });
  console.log(JSON.stringify(result, null, 2));
}
