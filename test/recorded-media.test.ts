/**
 * Real recorded requests that carry an image or a PDF (test/fixtures/recorded: Chat Completions
 * `image_url` and `file`, Responses `input_image` and `input_file`, Anthropic `image` and
 * `document`, inline and by URL), replayed through the wire server, the real `openai` and
 * `@anthropic-ai/sdk` clients, actorloop's providers and the conversation machine. The user message
 * is built as neutral parts from the recorded request (the same base64, `data:` URL or https URL the
 * recording sent); the run must answer with the recorded text, and the request we send must carry
 * every part in the wire's own shape, with the same bytes or URL, media type and file name.
 */
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import type { RunOutput } from '../src/machines/names/types.js';
import type { UserContentPart } from '../src/model/messages.js';
import type { FinishReason, Provider } from '../src/model/provider.js';
import { anthropicProvider, fromAnthropicStopReason, type AnthropicRequestParams } from '../src/providers/anthropic/index.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import { expectedResponse, recordedRequestToNeutral as anthropicRequestToNeutral } from './support/anthropic-recorded.js';
import { parseRecordedResponse, recordedRequestToNeutral as chatRequestToNeutral } from './support/openai-recorded.js';
import {
  assertResponsesRequestMatches,
  parseRecordedResponsesOutput,
  recordedResponsesRequestToNeutral,
  recordedText,
} from './support/openai-responses-recorded.js';
import { fetchOption, replayTransports, type TransportCase } from './support/transports.js';
import {
  assertRequestMatches,
  cassetteSteps,
  loadCassette,
  startWireServer,
  type Cassette,
  type WireServer,
} from './support/wire-server.js';

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

type Folder = 'openai' | 'openai-responses' | 'anthropic';
const folders: Folder[] = ['openai', 'openai-responses', 'anthropic'];

/** The recordings live in the repository, next to this file (PROVENANCE.md there says where each comes from). */
const fixturesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/recorded');
const cassettes: Cassette[] = folders.flatMap((folder) =>
  readdirSync(path.join(fixturesDir, folder))
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => loadCassette(path.join(fixturesDir, folder, name))),
);

const transports = replayTransports();

// ---------------------------------------------------------------------------------------------
// One user part, as any of the three wires carries it, reduced to what must survive the mapping.

/** Inline bytes (their media type, length and digest, so a diff stays readable) or a URL. */
type Source = { inline: string } | { url: string };

type WirePart = {
  /** The wire's own block type: `image_url`, `input_file`, `document`… */
  block: string;
  text?: string;
  source?: Source;
  filename?: string;
  /** OpenAI's image detail; absent means `auto`, the API's default. */
  detail?: string;
  /** Every key path of the block, to compare the shapes (which fields each side sends). */
  keys: string[];
};

const digest = (mediaType: string, base64: string): string => {
  const bytes = Buffer.from(base64, 'base64');
  return `${mediaType}, ${bytes.length} bytes, sha256 ${createHash('sha256').update(bytes).digest('hex')}`;
};

/** A `data:` URL's bytes, or an https URL as it is. */
function sourceOfUrl(url: string): Source {
  const inline = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (inline) return { inline: digest(inline[1]!, inline[2]!) };
  if (!url.startsWith('https://')) throw new Error(`not a data: or https: URL: ${url.slice(0, 40)}`);
  return { url };
}

function keyPaths(value: Json, prefix = ''): string[] {
  return Object.entries(value)
    .flatMap(([key, inner]) => (isRecord(inner) ? keyPaths(inner, `${prefix}${key}.`) : [`${prefix}${key}`]))
    .sort();
}

/** The parts of one user message's content, on `folder`'s wire. */
function wireParts(folder: Folder, content: unknown): WirePart[] {
  if (!Array.isArray(content)) throw new Error(`expected the user content as parts, got ${JSON.stringify(content)?.slice(0, 60)}`);
  return content.map((raw: unknown): WirePart => {
    if (!isRecord(raw)) throw new Error('a content part is not an object');
    const block = String(raw.type);
    const keys = keyPaths(raw);
    if (block === 'text' || block === 'input_text') return { block, text: String(raw.text), keys };
    if (folder === 'openai' && block === 'image_url' && isRecord(raw.image_url)) {
      const detail = raw.image_url.detail;
      return { block, source: sourceOfUrl(String(raw.image_url.url)), ...(detail === undefined ? {} : { detail: String(detail) }), keys };
    }
    if (folder === 'openai' && block === 'file' && isRecord(raw.file))
      return { block, source: sourceOfUrl(String(raw.file.file_data)), filename: String(raw.file.filename), keys };
    if (folder === 'openai-responses' && block === 'input_image')
      return {
        block,
        source: sourceOfUrl(String(raw.image_url)),
        ...(raw.detail === undefined ? {} : { detail: String(raw.detail) }),
        keys,
      };
    if (folder === 'openai-responses' && block === 'input_file') {
      const source = typeof raw.file_data === 'string' ? sourceOfUrl(raw.file_data) : { url: String(raw.file_url) };
      return { block, source, ...(raw.filename === undefined ? {} : { filename: String(raw.filename) }), keys };
    }
    if (folder === 'anthropic' && (block === 'image' || block === 'document') && isRecord(raw.source)) {
      if (raw.source.type !== 'base64' && raw.source.type !== 'url')
        throw new Error(`an ${block} source this test does not know: ${String(raw.source.type)}`);
      const source: Source =
        raw.source.type === 'base64'
          ? { inline: digest(String(raw.source.media_type), String(raw.source.data)) }
          : { url: String(raw.source.url) };
      return { block, source, ...(raw.title === undefined ? {} : { filename: String(raw.title) }), keys };
    }
    throw new Error(`a ${folder} user part this test does not know: ${block}`);
  });
}

/** What must survive the mapping (the fields sent, `keys`, are compared on their own, see `optionalKeys`); no `detail` means `auto`. */
const meaning = ({ keys: _keys, detail, ...part }: WirePart) => ({
  ...part,
  ...(part.source && part.block.includes('image') ? { detail: detail ?? 'auto' } : {}),
});

/**
 * Fields a side may send or leave out, where actorloop's blocks and the recorded ones differ in
 * shape on purpose: Chat Completions leaves `image_url.detail` out (the Mirascope recording sent
 * `auto`, the API's default, fantasy's none; `meaning` compares it as `auto` when absent);
 * Anthropic marks the newest message's last block as the prompt-cache breakpoint (`promptCache`
 * is `'auto'` by default), which the recorded clients did not ask for. Every other field must be
 * on both sides.
 */
const optionalKeys: Record<Folder, string[]> = {
  openai: ['image_url.detail'],
  'openai-responses': [],
  anthropic: ['cache_control.type'],
};

// ---------------------------------------------------------------------------------------------
// The neutral parts a recorded user message stands for.

/** A file sent by URL names no media type on the wire; its extension does (both recordings are PDFs). */
function mediaTypeOfUrl(url: string): string {
  if (/\.pdf$/i.test(new URL(url).pathname)) return 'application/pdf';
  throw new Error(`no media type known for ${url}`);
}

const dataUrlType = (url: string): string => /^data:([^;,]+)/.exec(url)?.[1] ?? mediaTypeOfUrl(url);

/** The user message's parts as actorloop's neutral parts, `data` exactly as the recording sent it. */
function neutralParts(folder: Folder, content: unknown[]): UserContentPart[] {
  return content.map((raw): UserContentPart => {
    const part = raw as Json;
    const type = String(part.type);
    if (type === 'text' || type === 'input_text') return { type: 'text', text: String(part.text) };
    if (folder === 'openai' && type === 'image_url') return { type: 'image', data: String((part.image_url as Json).url) };
    if (folder === 'openai' && type === 'file') {
      const file = part.file as Json;
      return {
        type: 'file',
        data: String(file.file_data),
        mediaType: dataUrlType(String(file.file_data)),
        filename: String(file.filename),
      };
    }
    if (folder === 'openai-responses' && type === 'input_image') return { type: 'image', data: String(part.image_url) };
    if (folder === 'openai-responses' && type === 'input_file') {
      const data = String(part.file_data ?? part.file_url);
      return {
        type: 'file',
        data,
        mediaType: dataUrlType(data),
        ...(part.filename === undefined ? {} : { filename: String(part.filename) }),
      };
    }
    if (folder === 'anthropic' && (type === 'image' || type === 'document')) {
      const source = part.source as Json;
      const inline = source.type === 'base64';
      const data = String(inline ? source.data : source.url);
      if (type === 'image') return inline ? { type: 'image', data, mediaType: String(source.media_type) } : { type: 'image', data };
      return { type: 'file', data, mediaType: inline ? String(source.media_type) : mediaTypeOfUrl(data) };
    }
    throw new Error(`no neutral part for a ${folder} ${type} block`);
  });
}

type Recorded = {
  system?: string;
  /** The recorded user message's parts, on the wire. */
  content: unknown[];
  provider: (server: WireServer, transport: TransportCase) => Provider;
  /** The answer and finish reason, read from the recorded bytes (not by our parsers). */
  answer: string;
  finish: FinishReason;
  /** The user content of the request the server received. */
  sentContent: (body: unknown) => unknown;
  /** The whole request compared with the recorded one, as the other replay suites do. */
  matchRequest: (received: unknown) => void;
};

const lastUser = (list: unknown): Json => {
  const users = (Array.isArray(list) ? list : []).filter((item): item is Json => isRecord(item) && item.role === 'user');
  if (users.length !== 1) throw new Error(`expected one user message, found ${users.length}`);
  return users[0]!;
};

const chatFinish: Record<string, FinishReason> = { stop: 'stop', length: 'length', tool_calls: 'tool-calls' };

function recorded(cassette: Cassette): Recorded {
  const [interaction] = cassette.interactions;
  if (!interaction || cassette.interactions.length !== 1) throw new Error(`${cassette.name}: expected one interaction`);
  const body = interaction.request.body as Json;
  const folder = cassette.provider as Folder;
  if (folder === 'openai') {
    const request = chatRequestToNeutral(body);
    // The sampling fields the recorded client set (`max_completion_tokens`), sent again as they were.
    const params = Object.fromEntries(
      Object.entries(body).filter(([key]) => !['model', 'messages', 'stream', 'stream_options'].includes(key)),
    );
    const response = parseRecordedResponse(interaction.response);
    return {
      ...(request.system === undefined ? {} : { system: request.system }),
      content: lastUser(body.messages).content as unknown[],
      provider: (server, transport) =>
        openaiProvider({
          model: request.model,
          apiKey: 'sk-replay',
          baseURL: `${server.url}/v1`,
          ...fetchOption(transport),
          stream: request.stream,
          params,
        }),
      answer: response.text,
      finish: chatFinish[response.finishReason ?? ''] ?? 'other',
      sentContent: (sent) => lastUser((sent as Json).messages).content,
      matchRequest: (received) => assertRequestMatches(interaction.request, received),
    };
  }
  if (folder === 'openai-responses') {
    const request = recordedResponsesRequestToNeutral(body);
    const output = parseRecordedResponsesOutput(interaction.response);
    return {
      ...(request.system === undefined ? {} : { system: request.system }),
      content: lastUser(body.input).content as unknown[],
      provider: (server, transport) =>
        openaiProvider({
          api: 'responses',
          model: request.model,
          apiKey: 'sk-replay',
          baseURL: `${server.url}/v1`,
          ...fetchOption(transport),
          ...request.options,
        }),
      answer: recordedText(output),
      finish: output.status === 'completed' ? 'stop' : 'other',
      sentContent: (sent) => lastUser((sent as Json).input).content,
      // Compares model, system, items (texts), store, include, stream and every other parameter.
      matchRequest: (received) => assertResponsesRequestMatches(interaction.request, received),
    };
  }
  const request = anthropicRequestToNeutral({ ...body, messages: [] });
  const expected = expectedResponse(interaction.response);
  return {
    ...(request.system === undefined ? {} : { system: request.system }),
    content: lastUser(body.messages).content as unknown[],
    provider: (server, transport) =>
      anthropicProvider({
        model: request.model,
        apiKey: 'sk-ant-replay',
        baseURL: server.url,
        ...fetchOption(transport),
        maxTokens: request.maxTokens,
        stream: request.stream,
        params: request.params as AnthropicRequestParams,
      }),
    answer: expected.content.map((part) => (part.type === 'text' ? part.text : '')).join(''),
    finish: fromAnthropicStopReason(expected.stopReason),
    sentContent: (sent) => lastUser((sent as Json).messages).content,
    matchRequest: (received) => assertRequestMatches(interaction.request, received),
  };
}

async function run(provider: Provider, system: string | undefined, content: UserContentPart[]): Promise<RunOutput> {
  const machine = createConversationMachine({ provider, ...(system === undefined ? {} : { system }), retry: false });
  const actor = createActor(machine, { input: {} }).start();
  actor.send({ type: 'user.message', content });
  return toPromise(actor);
}

describe('recorded requests with images and PDFs, replayed through the real SDKs', () => {
  it('finds the media cassettes, one request each, every part of them a kind this test reads', () => {
    expect(cassettes.map((cassette) => `${cassette.provider}/${cassette.name}`)).toEqual([
      'openai/fantasy-gpt-5-image-base64-streaming',
      'openai/mirascope-ts-gpt-4o-mini-image-url',
      'openai/mirascope-ts-gpt-4o-mini-pdf-base64',
      'openai-responses/mirascope-ts-gpt-4o-mini-image-base64',
      'openai-responses/mirascope-ts-gpt-4o-mini-pdf-base64',
      'openai-responses/mirascope-ts-gpt-4o-mini-pdf-url',
      'openai-responses/pydanticai-gpt-4o-image-url',
      'anthropic/fantasy-sonnet-4-image-base64-streaming',
      'anthropic/mirascope-ts-haiku-4.5-image-url',
      'anthropic/mirascope-ts-haiku-4.5-pdf-base64',
      'anthropic/mirascope-ts-haiku-4.5-pdf-url',
    ]);
    // Between them: every media block of every wire, inline and by URL.
    const blocks = new Set(
      cassettes.flatMap((cassette) =>
        wireParts(cassette.provider as Folder, recorded(cassette).content)
          .filter((part) => part.source)
          .map((part) => `${cassette.provider} ${part.block} ${part.source && 'url' in part.source ? 'url' : 'inline'}`),
      ),
    );
    expect([...blocks].sort()).toEqual([
      'anthropic document inline',
      'anthropic document url',
      'anthropic image inline',
      'anthropic image url',
      'openai file inline',
      'openai image_url inline',
      'openai image_url url',
      'openai-responses input_file inline',
      'openai-responses input_file url',
      'openai-responses input_image inline',
      'openai-responses input_image url',
    ]);
  });

  for (const cassette of cassettes)
    for (const transport of transports) {
      const folder = cassette.provider as Folder;
      it(`${folder}/${cassette.name} (${transport.name})`, async () => {
        const replay = recorded(cassette);
        const content = neutralParts(folder, replay.content);
        expect(content.some((part) => part.type !== 'text')).toBe(true);
        expect(replay.answer).not.toBe('');

        const server = await startWireServer(cassetteSteps(cassette));
        try {
          const output = await run(replay.provider(server, transport), replay.system, content);

          // The recorded answer comes back as the run's answer.
          expect(output.status, JSON.stringify(output.error)).toBe('done');
          expect(output.text).toBe(replay.answer);
          expect(output.finishReason).toBe(replay.finish);
          // The history keeps every part the user sent, in order.
          const stored = output.messages[0];
          expect(stored?.role).toBe('user');
          expect(Array.isArray(stored?.content) ? stored.content.map((part) => part.type) : stored?.content).toEqual(
            content.map((part) => part.type),
          );

          // One request, to the recorded path, carrying the same conversation…
          expect(server.requests).toHaveLength(1);
          const sent = server.requests[0]!;
          expect(sent.path).toBe(cassette.interactions[0]!.request.path);
          replay.matchRequest(sent);

          // …and every part in the wire's own block, same bytes or URL, media type, file name; nothing dropped.
          const ours = wireParts(folder, replay.sentContent(sent.body));
          const theirs = wireParts(folder, replay.content);
          expect(ours.map(meaning)).toEqual(theirs.map(meaning));
          const required = (keys: string[]) => keys.filter((key) => !optionalKeys[folder].includes(key));
          ours.forEach((part, index) => {
            expect(required(part.keys), `the fields of part ${index} (${part.block})`).toEqual(required(theirs[index]!.keys));
          });
        } finally {
          await server.close();
        }
      });
    }

  it('a PDF by URL, as recorded on Responses and Anthropic, is refused by Chat Completions before anything is sent', async () => {
    const urls = cassettes
      .filter((cassette) => cassette.provider !== 'openai')
      .flatMap((cassette) => neutralParts(cassette.provider as Folder, recorded(cassette).content))
      .filter((part) => part.type === 'file' && typeof part.data === 'string' && part.data.startsWith('https://'));
    expect(urls.length).toBeGreaterThanOrEqual(2);
    for (const part of urls) {
      const server = await startWireServer([]);
      try {
        const provider = openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-replay', baseURL: `${server.url}/v1`, stream: false });
        const content: UserContentPart[] = [{ type: 'text', text: 'What is this PDF about?' }, part];
        const output = await run(provider, undefined, content);
        expect(server.requests).toHaveLength(0);
        expect(output.status).toBe('error');
        expect(output.error).toMatchObject({ code: 'unsupported_content', retryable: false });
        expect(output.error?.message).toMatch(
          /^the chat-completions wire cannot take messages\[0\]\.content\[1\] \(application\/pdf, by URL\)/,
        );
        expect(output.messages.at(-1)).toEqual({ role: 'user', content });
      } finally {
        await server.close();
      }
    }
  });
});
