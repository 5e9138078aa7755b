/**
 * Images, files and audio in user messages (DESIGN §16): the neutral parts are validated as they
 * arrive (a bad one is `event.rejected` naming it, never stored), stored as JSON (bytes as base64, a
 * `data:` URL split, an image's type read from its bytes), and sent by each wire in its own shape
 * through the real SDKs over real HTTP. A part a wire cannot take fails the request before anything
 * is sent (`unsupported_content`, naming the part, its media type and the wire), and the history
 * keeps it.
 */
import { createHash } from 'node:crypto';
import { createActor, toPromise } from 'xstate';
import { describe, expect, it, vi } from 'vitest';

/** Node's Buffer, held before any test hides the global. */
const globalThisBuffer = Buffer;
import {
  createConversationHost,
  EventRejectedError,
  memoryStore,
  anthropicProvider,
  createConversationMachine,
  defaultMaxMediaBytes,
  handlerProvider,
  mediaLabel,
  mediaSupport,
  openaiProvider,
  sniffImageMediaType,
  type Message,
  type Provider,
  type RunOutput,
  type UserContent,
  userContentText,
} from '../src/index.js';
import { mediaPartProblem, storedMediaPart } from '../src/model/media.js';
import { findMessagesProblem } from '../src/model/messages.js';
import { messagePartsScript } from '../src/observe/inspect/message-parts-script.js';
import { invalidMessageText } from '../src/machines/rounds/run-context.js';
import { storedUserContent, userContentProblem } from '../src/model/user-content.js';
import { base64ByteLength, base64FromBytes, base64Problem, bytesFromBase64 } from '../src/util/base64.js';
import { call, startService, until } from './support/http-service.js';
import { responsesStream } from './support/responses-events.js';
import { serveEachTest } from './support/serve-each-test.js';
import { eventsOf, runConversation } from './support/run-conversation.js';
import { scriptedModel } from './support/scripted-model.js';
import { anthropicTextSse, jsonResponse, openaiSse, type WireServer, type WireStep } from './support/wire-server.js';

/** A 1×1 PNG. */
const pngBase64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const pngBytes = Uint8Array.from(Buffer.from(pngBase64, 'base64'));
/** The first bytes of a PDF. */
const pdfBase64 = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1').toString('base64');
/** A WAV header with no samples. */
const wavBase64 = 'UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA=';

describe('base64 on every runtime: native where there is one, btoa/atob where not', () => {
  const roundTrip = () => {
    const NodeBuffer = globalThisBuffer;
    for (const length of [0, 1, 2, 3, 4, 5, 255, 0x8000 - 1, 0x8000, 0x8000 + 1, 100_003]) {
      const bytes = Uint8Array.from({ length }, (_, index) => (index * 131 + length) & 0xff);
      // A view into a larger buffer: only its own bytes count.
      const view = new Uint8Array([9, ...bytes, 9]).subarray(1, length + 1);
      const base64 = base64FromBytes(view);
      expect(base64).toBe(NodeBuffer.from(bytes).toString('base64'));
      expect(base64Problem(base64)).toBeUndefined();
      expect(base64ByteLength(base64)).toBe(length);
      const back = bytesFromBase64(base64);
      expect(back).toBeInstanceOf(Uint8Array);
      // Compared as Buffers: a deep equality over 100,000 elements is slow for nothing.
      expect(NodeBuffer.compare(back, bytes)).toBe(0);
    }
  };

  it('round-trips bytes of every length, across the chunk size, exactly as Buffer does', () => {
    roundTrip();
  });

  it('the same without Buffer (Deno, Workers): through btoa and atob', () => {
    vi.stubGlobal('Buffer', undefined);
    try {
      roundTrip();
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('names what is wrong with text that is not standard base64', () => {
    expect(base64Problem('aGk')).toMatch(/length, 3, is not a multiple of 4/);
    expect(base64Problem('aG-k')).toMatch(/holds "-" at 2, which is not in the base64 alphabet/);
    expect(base64Problem('a=Gk')).toMatch(/= at 1, before its last two characters/);
    expect(base64Problem('aG=k')).toMatch(/a character after its = padding/);
  });
});

describe('media parts in the neutral model', () => {
  it('reads an image type from its first bytes: PNG, JPEG, GIF, WebP; nothing else', () => {
    expect(sniffImageMediaType(pngBytes)).toBe('image/png');
    expect(sniffImageMediaType(Uint8Array.of(0xff, 0xd8, 0xff, 0xe0))).toBe('image/jpeg');
    expect(sniffImageMediaType(new TextEncoder().encode('GIF89a'))).toBe('image/gif');
    expect(sniffImageMediaType(new TextEncoder().encode('RIFF\0\0\0\0WEBPVP8 '))).toBe('image/webp');
    expect(sniffImageMediaType(new TextEncoder().encode('RIFF\0\0\0\0WAVEfmt '))).toBeUndefined();
    expect(sniffImageMediaType(Uint8Array.of(0x89, 0x50))).toBeUndefined();
  });

  it('takes base64, a data: URL, an https: URL or bytes, and names anything else with what it expected', () => {
    const ok = [
      { type: 'image', data: pngBase64 },
      { type: 'image', data: pngBytes },
      { type: 'image', data: `data:image/png;base64,${pngBase64}` },
      { type: 'image', data: 'https://example.com/cat.jpg' },
      { type: 'file', data: pdfBase64, mediaType: 'application/pdf', filename: 'q3.pdf' },
      { type: 'file', data: wavBase64, mediaType: 'audio/wav' },
    ] as const;
    for (const part of ok) expect(mediaPartProblem(part, 'content[0]', defaultMaxMediaBytes), JSON.stringify(part)).toBeUndefined();

    const refused: Array<[Record<string, unknown>, RegExp]> = [
      [
        { type: 'image', data: 'file:///etc/passwd' },
        /content\[1\]\.data is a file: URL; a part takes base64, a data: URL, an https: URL or bytes/,
      ],
      [{ type: 'image', data: 'http://example.com/cat.png' }, /is a http: URL/],
      [{ type: 'image', data: 'javascript:alert(1)' }, /is a javascript: URL/],
      [{ type: 'image', data: 'https://' }, /not a valid https: URL/],
      [{ type: 'image', data: '' }, /data must be base64, a data: URL, an https: URL or bytes \(Uint8Array\), got ""/],
      [{ type: 'image', data: 42 }, /got number/],
      [{ type: 'image', data: 'aGk' }, /not valid base64: its length, 3/],
      [{ type: 'image', data: 'aG!k' }, /not valid base64: it holds "!"/],
      [{ type: 'image', data: 'data:image/png,notbase64' }, /a data: URL that is not base64/],
      [{ type: 'image', data: `data:png;base64,${pngBase64}` }, /data: URL whose media type "png" is not type\/subtype/],
      [{ type: 'image', data: pngBase64, mediaType: 'png' }, /mediaType must be a media type such as image\/png .* got "png"/],
      [
        { type: 'image', data: pdfBase64, mediaType: 'application/pdf' },
        /must be an image\/… type for an image part, got application\/pdf; send other media as a file part/,
      ],
      [{ type: 'image', data: pdfBase64 }, /has no mediaType and its bytes are not PNG, JPEG, GIF or WebP: give its mediaType/],
      [{ type: 'file', data: pdfBase64 }, /mediaType is required for a file part/],
      [{ type: 'file', data: pdfBase64, mediaType: 'application/pdf', filename: 3 }, /filename must be a string, got number/],
    ];
    for (const [part, message] of refused) {
      expect(mediaPartProblem(part as { type: 'image' }, 'content[1]', defaultMaxMediaBytes), JSON.stringify(part)).toMatch(message);
    }
  });

  it('measures the bytes, not the characters, against maxMediaBytes, for every form of data', () => {
    const bytes = new Uint8Array(3000).fill(7);
    const base64 = Buffer.from(bytes).toString('base64');
    for (const data of [bytes, base64, `data:application/octet-stream;base64,${base64}`]) {
      expect(mediaPartProblem({ type: 'file', data, mediaType: 'application/pdf' }, 'content[0]', 3000)).toBeUndefined();
      expect(mediaPartProblem({ type: 'file', data, mediaType: 'application/pdf' }, 'content[0]', 2999)).toBe(
        'content[0] holds 3000 bytes, over the 2999 bytes a part may hold (maxMediaBytes)',
      );
    }
  });

  it('stores bytes as base64 and a data: URL split, reading an image type from its bytes; a URL stays as given', () => {
    expect(storedMediaPart({ type: 'image', data: pngBytes })).toEqual({ type: 'image', data: pngBase64, mediaType: 'image/png' });
    expect(storedMediaPart({ type: 'image', data: `data:image/png;base64,${pngBase64}` })).toEqual({
      type: 'image',
      data: pngBase64,
      mediaType: 'image/png',
    });
    expect(storedMediaPart({ type: 'image', data: pngBase64 })).toEqual({ type: 'image', data: pngBase64, mediaType: 'image/png' });
    const byUrl = { type: 'image', data: 'https://example.com/cat.jpg' } as const;
    expect(storedMediaPart(byUrl)).toBe(byUrl);
    const pdf = { type: 'file', data: new TextEncoder().encode('%PDF-1.4'), mediaType: 'application/pdf', filename: 'a.pdf' } as const;
    expect(storedMediaPart(pdf)).toEqual({ type: 'file', data: 'JVBERi0xLjQ=', mediaType: 'application/pdf', filename: 'a.pdf' });
    const text: UserContent = [{ type: 'text', text: 'hi' }];
    expect(storedUserContent(text)).toBe(text);
  });

  it('labels a part for people and summaries, never with its bytes', () => {
    expect(mediaLabel({ type: 'image', data: pngBase64, mediaType: 'image/png' })).toBe('[image image/png, 70 B]');
    expect(mediaLabel({ type: 'file', data: 'A'.repeat(4 * 1024 * 1024), mediaType: 'application/pdf', filename: 'q3.pdf' })).toBe(
      '[file q3.pdf application/pdf, 3.0 MB]',
    );
    expect(mediaLabel({ type: 'image', data: 'https://example.com/b.jpg' })).toBe('[image]');
    expect(
      userContentText([
        { type: 'text', text: 'Which bird?' },
        { type: 'image', data: 'https://example.com/b.jpg' },
      ]),
    ).toBe('Which bird? [image]');
  });

  it("the viewers' pages show a part by the same label, never its bytes", () => {
    const partsOf = new Function(`${messagePartsScript}; return partsOf;`)() as (message: Message) => Array<[string, string]>;
    const parts = [
      { type: 'image', data: pngBase64, mediaType: 'image/png' },
      { type: 'image', data: 'https://example.com/b.jpg' },
      { type: 'file', data: 'A'.repeat(4 * 1024 * 1024), mediaType: 'application/pdf', filename: 'q3.pdf' },
      { type: 'file', data: 'A'.repeat(4 * 1024), mediaType: 'audio/wav' },
    ] as const;
    expect(partsOf({ role: 'user', content: [{ type: 'text', text: 'see' }, ...parts] })).toEqual([
      ['', 'see'],
      ...parts.map((part) => ['media', mediaLabel(part)]),
    ]);
  });

  it('a history handed to a run is checked the same way, part by part', () => {
    expect(findMessagesProblem([{ role: 'user', content: [{ type: 'image', data: pngBase64, mediaType: 'image/png' }] }])).toBeUndefined();
    expect(
      findMessagesProblem([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'x' },
            { type: 'image', data: 'ftp://x' },
          ],
        },
      ]),
    ).toMatch(/^input\.messages\[0\]: content\[1\]\.data is a ftp: URL/);
    expect(findMessagesProblem([{ role: 'user', content: [{ type: 'file', data: pdfBase64 }] }])).toMatch(/mediaType is required/);
  });

  it('content needs some text or media; a message turned away is named with its part, its media shown as labels', () => {
    expect(userContentProblem([{ type: 'image', data: pngBase64 }])).toBeUndefined();
    // The same content checked again, against another limit, is judged by that limit (the check is remembered per limit).
    const content = [{ type: 'image', data: pngBase64 }];
    expect(userContentProblem(content, 100)).toBeUndefined();
    expect(userContentProblem(content, 10)).toMatch(/holds 70 bytes, over the 10 bytes/);
    expect(userContentProblem(content, 100)).toBeUndefined();
    expect(userContentProblem([{ type: 'text', text: ' ' }])).toMatch(/non-empty array of text, image and file parts/);
    expect(userContentProblem([{ type: 'audio', data: wavBase64 }])).toBe(
      'content[0] must be a { type: "text", text }, { type: "image", data } or { type: "file", data, mediaType } part',
    );
    const text = invalidMessageText(
      {
        type: 'user.message',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image', data: 'A'.repeat(5000) },
        ],
      },
      1000,
    );
    expect(text).toBe(
      'user.message content[1] holds 3750 bytes, over the 1000 bytes a part may hold (maxMediaBytes); got [{"type":"text","text":"look"},"[image, 4 KB]"]',
    );
  });
});

describe('media parts through a conversation', () => {
  it('a user.message with bytes is stored as JSON (base64, its type read) and reaches the provider; the snapshot persists it', async () => {
    const { output, requests, actor } = await runConversation([{ text: 'A red pixel.' }], {
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', data: pngBytes },
      ],
    });
    expect(output.status).toBe('done');
    expect(output.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', data: pngBase64, mediaType: 'image/png' },
      ],
    });
    // handlerProvider speaks Chat Completions: the image goes as an image_url data: URL.
    expect(requests[0]?.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: `data:image/png;base64,${pngBase64}` } },
      ],
    });
    const persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot())) as { context: { messages: Message[] } };
    expect(persisted.context.messages[0]).toEqual(output.messages[0]);
  });

  it('a malformed part or one over maxMediaBytes is rejected naming it, never stored, and the run goes on', async () => {
    const { output, events, requests } = await runConversation([{ text: 'ok' }], {
      maxMediaBytes: 1000,
      content: 'hello',
      onStart: (actor) => {
        actor.send({ type: 'user.message', content: [{ type: 'image', data: 'file:///etc/passwd' }] });
        actor.send({ type: 'user.message', content: [{ type: 'file', data: new Uint8Array(1001), mediaType: 'application/pdf' }] });
        actor.send({ type: 'user.message', content: [{ type: 'file', data: pdfBase64 }] as never });
      },
    });
    expect(output.status).toBe('done');
    expect(eventsOf(events, 'event.rejected').map((event) => event.message)).toEqual([
      expect.stringMatching(/^user\.message content\[0\]\.data is a file: URL; .* got \["\[image\]"\]$/),
      'user.message content[0] holds 1001 bytes, over the 1000 bytes a part may hold (maxMediaBytes); got ["[file application/pdf, 1001 B]"]',
      expect.stringMatching(/^user\.message content\[0\]\.mediaType is required for a file part/),
    ]);
    expect(output.messages.filter((message) => message.role === 'user')).toEqual([{ role: 'user', content: 'hello' }]);
    expect(requests).toHaveLength(1);
  });

  it('user.interrupt takes parts too: an interrupt while idle starts the run with the image stored; a bad one is rejected naming it', async () => {
    const model = scriptedModel([{ text: 'A pixel.' }]);
    const actor = createActor(createConversationMachine({ provider: handlerProvider(model.handler), retry: false }), { input: {} });
    const rejected: string[] = [];
    actor.on('event.rejected', (event) => rejected.push(event.message));
    actor.start();
    actor.send({ type: 'user.interrupt', content: [{ type: 'image', data: 'javascript:alert(1)' }] });
    actor.send({
      type: 'user.interrupt',
      content: [
        { type: 'text', text: 'Now?' },
        { type: 'image', data: pngBytes },
      ],
    });
    const output = await toPromise(actor);
    expect(rejected).toEqual([expect.stringMatching(/^user\.interrupt content\[0\]\.data is a javascript: URL/)]);
    expect(output.messages[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Now?' },
        { type: 'image', data: pngBase64, mediaType: 'image/png' },
      ],
    });
  });

  it('host.send: a part over the machine’s maxMediaBytes is an EventRejectedError naming it, and nothing is stored', async () => {
    const store = memoryStore();
    const host = createConversationHost({
      machine: createConversationMachine({ provider: handlerProvider(scriptedModel([]).handler), maxMediaBytes: 64 }),
      store,
    });
    try {
      const sending = host.send('m-big', { type: 'user.message', content: [{ type: 'image', data: pngBase64 }] });
      await expect(sending).rejects.toThrow(EventRejectedError);
      await expect(sending).rejects.toThrow('content[0] holds 70 bytes, over the 64 bytes a part may hold (maxMediaBytes)');
      expect(await store.load('m-big')).toBeUndefined();
    } finally {
      await host.close();
    }
  });

  it('maxMediaBytes is checked as an option: a positive integer', () => {
    expect(() => createConversationMachine({ provider: handlerProvider(scriptedModel([]).handler), maxMediaBytes: 0 })).toThrow(
      /maxMediaBytes/,
    );
  });
});

const serve = serveEachTest();

const chatAnswer = openaiSse([
  {
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4o',
    choices: [{ index: 0, delta: { content: 'Seen.' }, finish_reason: null }],
  },
  { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
]);
const anthropicAnswer = anthropicTextSse('Seen.');

type Wire = 'chat-completions' | 'responses' | 'anthropic';
const wires: Record<Wire, { answer: () => WireStep; provider: (url: string) => Provider }> = {
  'chat-completions': {
    answer: () => chatAnswer,
    provider: (url) => openaiProvider({ model: 'gpt-4o', apiKey: 'sk-test', baseURL: `${url}/v1` }),
  },
  responses: {
    answer: () => responsesStream({ items: [{ type: 'message', text: 'Seen.' }] }),
    provider: (url) => openaiProvider({ api: 'responses', model: 'gpt-5-mini', apiKey: 'sk-test', baseURL: `${url}/v1` }),
  },
  anthropic: {
    answer: () => anthropicAnswer,
    provider: (url) => anthropicProvider({ model: 'claude-sonnet-4-5', apiKey: 'sk-ant', baseURL: url, maxTokens: 256 }),
  },
};

/** One user message to `wire`; `retried` keeps the machine's default retry policy (a failure that is retryable is tried again). */
async function ask(
  wire: Wire,
  content: UserContent,
  { answers = [wires[wire].answer()], retried = false }: { answers?: WireStep[]; retried?: boolean } = {},
): Promise<{ output: RunOutput; server: WireServer }> {
  const server = await serve(answers);
  const machine = createConversationMachine({ provider: wires[wire].provider(server.url), ...(retried ? {} : { retry: false }) });
  const actor = createActor(machine, {
    input: {
      messages: [
        { role: 'user', content: 'Earlier question.' },
        { role: 'assistant', content: [{ type: 'text', text: 'Earlier answer.' }] },
      ],
    },
  }).start();
  actor.send({ type: 'user.message', content });
  return { output: await toPromise(actor), server };
}

/** The user content of the last message of the request the server received. */
function sentUserContent(wire: Wire, server: WireServer): unknown {
  const body = server.requests[0]?.body as { messages?: Array<{ content: unknown }>; input?: Array<{ content?: unknown }> };
  const list = wire === 'responses' ? body.input : body.messages;
  return list?.at(-1)?.content;
}

const everyKind: UserContent = [
  { type: 'text', text: 'Compare these.' },
  { type: 'image', data: pngBytes },
  { type: 'image', data: 'https://example.com/cat.jpg' },
  { type: 'file', data: pdfBase64, mediaType: 'application/pdf', filename: 'q3.pdf' },
];

describe('each wire sends media in its own shape, through the real SDKs', () => {
  it('Chat Completions: image_url (inline as a data: URL, or by URL) and file; input_audio for WAV and MP3', async () => {
    const { output, server } = await ask('chat-completions', [...everyKind, { type: 'file', data: wavBase64, mediaType: 'audio/wav' }]);
    expect(output.status, JSON.stringify(output.error)).toBe('done');
    expect(sentUserContent('chat-completions', server)).toEqual([
      { type: 'text', text: 'Compare these.' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${pngBase64}` } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
      { type: 'file', file: { file_data: `data:application/pdf;base64,${pdfBase64}`, filename: 'q3.pdf' } },
      { type: 'input_audio', input_audio: { data: wavBase64, format: 'wav' } },
    ]);
  });

  it('Responses: input_image and input_file, inline or by URL', async () => {
    const { output, server } = await ask('responses', [
      ...everyKind,
      { type: 'file', data: 'https://example.com/q4.pdf', mediaType: 'application/pdf' },
    ]);
    expect(output.status, JSON.stringify(output.error)).toBe('done');
    expect(sentUserContent('responses', server)).toEqual([
      { type: 'input_text', text: 'Compare these.' },
      { type: 'input_image', image_url: `data:image/png;base64,${pngBase64}`, detail: 'auto' },
      { type: 'input_image', image_url: 'https://example.com/cat.jpg', detail: 'auto' },
      { type: 'input_file', file_data: `data:application/pdf;base64,${pdfBase64}`, filename: 'q3.pdf' },
      { type: 'input_file', file_url: 'https://example.com/q4.pdf' },
    ]);
  });

  it('Anthropic: image and document blocks, inline or by URL; plain text as a text document', async () => {
    const { output, server } = await ask('anthropic', [
      ...everyKind,
      { type: 'file', data: Buffer.from('Q3 was good.').toString('base64'), mediaType: 'text/plain', filename: 'notes.txt' },
    ]);
    expect(output.status, JSON.stringify(output.error)).toBe('done');
    expect(sentUserContent('anthropic', server)).toEqual([
      { type: 'text', text: 'Compare these.' },
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: pngBase64 } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdfBase64 }, title: 'q3.pdf' },
      // The newest message's last block carries the prompt-cache breakpoint (promptCache 'auto').
      {
        type: 'document',
        source: { type: 'text', media_type: 'text/plain', data: 'Q3 was good.' },
        title: 'notes.txt',
        cache_control: { type: 'ephemeral' },
      },
    ]);
  });

  const unsupported: Array<[Wire, UserContent, RegExp]> = [
    [
      'anthropic',
      ['Listen.', { type: 'file', data: wavBase64, mediaType: 'audio/wav' }].map((part) =>
        typeof part === 'string' ? { type: 'text', text: part } : part,
      ) as UserContent,
      /^the anthropic wire cannot take messages\[2\]\.content\[1\] \(audio\/wav, inline\); it takes image\/png, .*\. Nothing was sent\.$/,
    ],
    [
      'responses',
      [{ type: 'file', data: wavBase64, mediaType: 'audio/wav' }],
      /^the responses wire cannot take .*content\[0\] \(audio\/wav, inline\)/,
    ],
    [
      'chat-completions',
      [{ type: 'file', data: 'https://example.com/q4.pdf', mediaType: 'application/pdf' }],
      /^the chat-completions wire cannot take .*content\[0\] \(application\/pdf, by URL\)/,
    ],
    ['chat-completions', [{ type: 'file', data: 'AAAA', mediaType: 'video/mp4' }], /cannot take .* \(video\/mp4, inline\)/],
  ];
  for (const [wire, content, message] of unsupported) {
    it(`${wire}: a part it cannot take (${JSON.stringify(content).match(/"mediaType":"([^"]+)"/)?.[1]}) fails the request before anything is sent; the history keeps it`, async () => {
      const { output, server } = await ask(wire, content);
      expect(server.requests).toHaveLength(0);
      expect(output.status).toBe('error');
      expect(output.error).toMatchObject({ code: 'unsupported_content', retryable: false });
      expect(output.error?.message).toMatch(message);
      expect(output.messages.at(-1)).toEqual({ role: 'user', content });
    });
  }

  it('a URL the provider cannot fetch: its 400 ends the run at once, the error naming the part and its URL', async () => {
    const cases: Array<[Wire, WireStep, RegExp]> = [
      [
        'chat-completions',
        // OpenAI's answer to an image it could not download.
        jsonResponse(400, {
          error: {
            message: 'Error while downloading https://example.com/cat.jpg.',
            type: 'invalid_request_error',
            param: null,
            code: 'invalid_image_url',
          },
        }),
        /^400 Error while downloading https:\/\/example\.com\/cat\.jpg\. \(the image by URL at messages\[2\]\.content\[1\]: https:\/\/example\.com\/cat\.jpg\)$/,
      ],
      [
        'anthropic',
        // Anthropic's: no URL in the message; every part by URL of the request is named.
        jsonResponse(400, {
          type: 'error',
          error: { type: 'invalid_request_error', message: 'Unable to download the file. Please verify the URL and try again.' },
        }),
        /Unable to download the file\. Please verify the URL and try again\..* \(the image by URL at messages\[2\]\.content\[1\]: https:\/\/example\.com\/cat\.jpg\)$/,
      ],
    ];
    for (const [wire, answer, message] of cases) {
      const { output, server } = await ask(
        wire,
        [
          { type: 'text', text: 'What is this?' },
          { type: 'image', data: 'https://example.com/cat.jpg' },
        ],
        { answers: [answer, answer], retried: true },
      );
      expect(output.status, wire).toBe('error');
      expect(output.error, wire).toMatchObject({ status: 400, retryable: false });
      expect(output.error?.message, wire).toMatch(message);
      expect(server.requests, wire).toHaveLength(1);
    }
  });

  it('one support table, in code, names every wire', () => {
    expect(Object.keys(mediaSupport).sort()).toEqual(['anthropic', 'chat-completions', 'responses']);
  });
});

describe('media over HTTP: POST /conversations/{id}/messages', () => {
  it('takes content as parts: the run stores the image split and sends it; the view shows it', async () => {
    const seen: unknown[] = [];
    const service = await startService({
      reply: (_text, _results, request) => {
        seen.push(request.messages.at(-1)?.content);
        return { text: 'A red pixel.' };
      },
    });
    try {
      const content = [
        { type: 'text', text: 'What is this?' },
        { type: 'image', data: `data:image/png;base64,${pngBase64}` },
      ];
      expect((await call(service.url, 'POST', '/conversations/m-1/messages', { body: { content } })).status).toBe(202);
      await until(async () => (await call(service.url, 'GET', '/conversations/m-1')).json().status === 'done', 'the run');
      const view = (await call(service.url, 'GET', '/conversations/m-1')).json() as { messages: Message[] };
      expect(view.messages[0]).toEqual({
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', data: pngBase64, mediaType: 'image/png' },
        ],
      });
      expect(seen).toEqual([
        [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${pngBase64}` } },
        ],
      ]);
    } finally {
      await service.close();
    }
  });

  it('the history carries a stored image as a reference, and GET …/media?ref= serves its bytes — only to its conversation', async () => {
    const service = await startService();
    try {
      // Over 1 KB of base64: kept by reference (smaller parts stay inline).
      const big = Buffer.concat([Buffer.from(pngBase64, 'base64'), Buffer.alloc(3000, 7)]);
      const content = [
        { type: 'text', text: 'Keep this.' },
        { type: 'image', data: big.toString('base64'), mediaType: 'image/png' },
      ];
      expect((await call(service.url, 'POST', '/conversations/m-3/messages', { body: { content } })).status).toBe(202);
      await until(async () => (await call(service.url, 'GET', '/conversations/m-3')).json().status === 'done', 'the run');
      const history = (await call(service.url, 'GET', '/conversations/m-3/history')).json() as {
        entries: Array<{ event: { type: string; content?: Array<{ ref?: string }> } }>;
      };
      const ref = history.entries[0]?.event.content?.[1]?.ref;
      expect(ref).toBe(`sha256:${createHash('sha256').update(big).digest('hex')}`);
      const media = await fetch(`${service.url}/conversations/m-3/media?ref=${ref}`, { headers: { authorization: 'Bearer test-token' } });
      expect(media.status).toBe(200);
      expect(media.headers.get('content-type')).toBe('image/png');
      expect(media.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
      expect(media.headers.get('content-security-policy')).toBe("sandbox; default-src 'none'");
      expect(Buffer.compare(Buffer.from(await media.arrayBuffer()), big)).toBe(0);

      // Another conversation does not open it; a reference nobody has, or one that is not a reference, is named.
      expect((await call(service.url, 'POST', '/conversations/m-4/messages', { body: { content: 'hi' } })).status).toBe(202);
      await until(async () => (await call(service.url, 'GET', '/conversations/m-4')).json().status === 'done', 'the other run');
      for (const [path, status, type] of [
        [`/conversations/m-4/media?ref=${ref}`, 404, 'media-not-found'],
        [`/conversations/m-3/media?ref=sha256:${'0'.repeat(64)}`, 404, 'media-not-found'],
        [`/conversations/nobody/media?ref=${ref}`, 404, 'conversation-not-found'],
        ['/conversations/m-3/media?ref=../../etc/passwd', 400, 'invalid-field'],
      ] as const) {
        const answer = await call(service.url, 'GET', path);
        expect([answer.status, answer.json().type], path).toEqual([status, `urn:actorloop:problem:${type}`]);
      }
    } finally {
      await service.close();
    }
  });

  it('a part that is wrong is a 400 naming it, and nothing is stored', async () => {
    const service = await startService();
    try {
      const answer = await call(service.url, 'POST', '/conversations/m-2/messages', {
        body: {
          content: [
            { type: 'text', text: 'look' },
            { type: 'image', data: 'file:///etc/passwd' },
          ],
        },
      });
      expect(answer.status).toBe(400);
      expect(answer.json()).toMatchObject({
        field: 'content',
        detail:
          'content: expected a non-empty string, or a non-empty array of text, image and file parts, got an array where content[1].data is a file: URL; a part takes base64, a data: URL, an https: URL or bytes',
      });
      const wrongShape = await call(service.url, 'POST', '/conversations/m-2/messages', { body: { content: 42 } });
      expect(wrongShape.json()).toMatchObject({
        field: 'content',
        detail: 'content: expected a non-empty string, or a non-empty array of text, image and file parts, got 42',
      });
      expect((await call(service.url, 'GET', '/conversations/m-2')).status).toBe(404);
    } finally {
      await service.close();
    }
  });
});
