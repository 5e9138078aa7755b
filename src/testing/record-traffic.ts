import type { FetchFunction } from '../providers/transport/fetch-function.js';
import { base64FromBytes } from '../util/base64.js';
import { concatBytes } from '../util/concat-bytes.js';
import { option, resolveOptionsWith } from '../util/option-schema.js';
import {
  type Cassette,
  type CassetteInteraction,
  type CassetteProvider,
  type CassetteRequest,
  cassetteFile,
  defaultCassetteName,
  inferProvider,
  writeCassette,
} from './cassette.js';
import { createScrubber, keptHeaderSet, keptResponseHeaders, type TrafficScrubOptions } from './scrub-traffic.js';
import { readSentRequest, toCassetteRequest } from './sent-request.js';
import { type TrafficFetch, trafficFetch } from './traffic-fetch.js';

/**
 * What {@link recordTraffic} records, and where.
 *
 * @example
 * ```ts
 * const options: RecordTrafficOptions = { dir: 'test/cassettes', name: 'weather-tool-loop' };
 * ```
 */
export type RecordTrafficOptions = {
  /** The folder of the cassettes (relative to the working directory, or absolute); created when missing. */
  dir: string;
  /**
   * The cassette's name: the file is `<dir>/<name>.json`. May hold folders (`openai/weather`).
   * Default `cassette`: one cassette per `dir`.
   */
  name?: string;
  /** The cassette's `provider`. Default: from the first request's URL (`/v1/messages` → `anthropic`, …). */
  provider?: CassetteProvider;
  /** The cassette's one-line `description`. Default: the requests and their statuses. */
  description?: string;
  /** The `fetch` that reaches the provider. Default: the global `fetch`, looked up at each request. */
  fetch?: FetchFunction;
  /** More secrets to replace and headers to keep; see {@link TrafficScrubOptions}. */
  scrub?: TrafficScrubOptions;
};

const scrubOptions = option.optional(
  option.object(
    {
      secrets: option.optional(option.array(option.string())),
      keepHeaders: option.optional(option.array(option.string({ nonEmpty: true }))),
    },
    { expected: 'an object { secrets?, keepHeaders? }' },
  ),
);

/** The options both recording and replaying take. */
export const trafficOptionShape = {
  dir: option.string({ nonEmpty: true, expected: 'the folder of the cassettes, a non-empty string' }),
  name: option.withDefault(option.string({ nonEmpty: true, expected: 'a cassette name such as "weather-tool-loop"' }), defaultCassetteName),
  provider: option.optional(option.string({ nonEmpty: true })),
  description: option.optional(option.string()),
  fetch: option.optional(option.callable<FetchFunction>('a fetch function, e.g. globalThis.fetch')),
  scrub: scrubOptions,
};

const recordOptions = option.object(trafficOptionShape, { label: 'recordTraffic(options)', expected: 'an options object with dir' });

/** What a recorder needs, resolved. */
export type RecorderSettings = {
  file: string;
  provider: CassetteProvider | undefined;
  description: string | undefined;
  fetch: FetchFunction | undefined;
  scrub: TrafficScrubOptions | undefined;
};

const textDecoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The body as the cassette stores it: UTF-8 text as it is, anything else as base64. */
function storedBody(bytes: Uint8Array, scrub: (text: string) => string): Pick<CassetteInteraction['response'], 'body' | 'bodyEncoding'> {
  try {
    return { body: scrub(textDecoder.decode(bytes)) };
  } catch {
    return { body: base64FromBytes(bytes), bodyEncoding: 'base64' };
  }
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<{ bytes: Uint8Array; error: unknown }> {
  const parts: Uint8Array[] = [];
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { bytes: concatBytes(parts), error: undefined };
      parts.push(value);
    }
  } catch (error) {
    return { bytes: concatBytes(parts), error };
  }
}

function describeInteractions(interactions: readonly CassetteInteraction[]): string {
  const steps = interactions.map(({ request, response }, index) => {
    const stream = (response.headers['content-type'] ?? '').includes('event-stream') ? ' (stream)' : '';
    return `[${index + 1}] ${request.method} ${request.path} -> ${response.status}${stream}`;
  });
  return `recorded with actorloop recordTraffic, ${interactions.length} request${interactions.length === 1 ? '' : 's'}: ${steps.join('; ')}`;
}

/**
 * A recording `fetch` for resolved settings; {@link replayTraffic} uses it too, for `mode: 'record'`
 * and for `mode: 'auto'` without a cassette.
 */
export function createRecorder(settings: RecorderSettings): TrafficFetch {
  const send: FetchFunction = settings.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const keep = keptHeaderSet(settings.scrub);
  // One slot per request in the order they were sent; filled when its response body has ended.
  const slots: Array<CassetteInteraction | undefined> = [];
  const requests: CassetteRequest[] = [];
  const reading = new Set<Promise<void>>();
  let provider = settings.provider;

  const write = () => {
    const interactions = slots.filter((slot): slot is CassetteInteraction => slot !== undefined);
    if (interactions.length === 0) return;
    const cassette: Cassette = {
      provider: provider ?? 'openai-compatible',
      source: { note: `recorded with actorloop recordTraffic on ${new Date().toISOString().slice(0, 10)}` },
      description: settings.description ?? describeInteractions(interactions),
      framing: 'recorded',
      interactions,
    };
    writeCassette(settings.file, cassette);
  };

  const record = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const sent = await readSentRequest(input, init);
    const scrub = createScrubber(sent.headers, sent.url, settings.scrub);
    const { request, note } = toCassetteRequest(sent, scrub);
    requests.push(request);
    provider ??= inferProvider(sent.url);
    const slot = slots.length;
    slots.push(undefined);

    // A request that gets no response (refused, aborted) has nothing to replay: it is not recorded.
    const response = await send(...sent.forward);
    scrub.learn(response.headers);
    const headers = keptResponseHeaders(response.headers, keep);
    const finish = (bytes: Uint8Array, error: unknown) => {
      const broke = error === undefined ? undefined : `the response body broke off after ${bytes.length} bytes: ${String(error)}`;
      const notes = [note, broke].filter((text) => text !== undefined);
      slots[slot] = {
        request,
        response: { status: response.status, headers, ...storedBody(bytes, scrub.text) },
        ...(notes.length === 0 ? {} : { note: notes.join('; ') }),
      };
      write();
    };
    if (response.body === null) {
      finish(new Uint8Array(0), undefined);
      return response;
    }
    // The caller reads its branch live (a stream stays a stream); the other is read to the end for
    // the cassette, also when the caller stops early, so the recording is the whole body.
    const [forCaller, forCassette] = response.body.tee();
    const done = readAll(forCassette).then(({ bytes, error }) => finish(bytes, error));
    reading.add(done);
    void done.finally(() => reading.delete(done));
    const copy = new Response(forCaller, { status: response.status, statusText: response.statusText, headers: response.headers });
    Object.defineProperty(copy, 'url', { value: response.url });
    return copy;
  };

  return trafficFetch(record, {
    cassette: settings.file,
    mode: 'record',
    requests,
    mismatches: [],
    remaining: () => 0,
    async flush() {
      while (reading.size > 0) await Promise.all(reading);
      write();
    },
  });
}

/**
 * A `fetch` that sends every request to the real provider and records it, with its response, into
 * the cassette `<dir>/<name>.json` in the project's recorded format: requests without host or
 * headers, the query apart, JSON bodies parsed; responses with status, the allow-listed headers and
 * the body byte-exact (a stream reaches the caller live while it is recorded). Keys (the request's
 * `Authorization`, `x-api-key`, `api-key`, `x-goog-api-key`, a `key=` query parameter, and key
 * shapes such as `sk-…` anywhere), cookies and account ids are replaced with placeholders
 * (`<API_KEY>`, `<OPENAI_ORGANIZATION>`) or dropped. Each interaction is written when its body
 * ends; a new recorder starts the cassette afresh.
 *
 * Record once with a real key, commit the cassette, replay it with {@link replayTraffic}.
 *
 * @example
 * ```ts
 * import { createActor, toPromise } from 'xstate';
 * import { createConversationMachine, openaiProvider } from 'actorloop';
 * import { recordTraffic } from 'actorloop/testing';
 *
 * const record = recordTraffic({ dir: 'test/cassettes', name: 'weather-tool-loop' });
 * const provider = openaiProvider({ model: 'gpt-4o-mini', apiKey: process.env.OPENAI_API_KEY, fetch: record });
 * const actor = createActor(createConversationMachine({ provider }), { input: {} }).start();
 * actor.send({ type: 'user.message', content: 'What is the weather in Florence?' });
 * await toPromise(actor);
 * await record.flush(); // test/cassettes/weather-tool-loop.json
 * ```
 */
export function recordTraffic(options: RecordTrafficOptions): TrafficFetch {
  const resolved = resolveOptionsWith(recordOptions, options);
  return createRecorder({
    file: cassetteFile(resolved.dir, resolved.name),
    provider: resolved.provider,
    description: resolved.description,
    fetch: resolved.fetch,
    scrub: resolved.scrub,
  });
}
