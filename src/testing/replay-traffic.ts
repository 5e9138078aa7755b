import { existsSync } from 'node:fs';
import type { FetchFunction } from '../providers/transport/fetch-function.js';
import { bytesFromBase64 } from '../util/base64.js';
import { option, resolveOptionsWith } from '../util/option-schema.js';
import { type CassetteProvider, type CassetteRequest, type CassetteResponse, cassetteFile, readCassette } from './cassette.js';
import { type CassetteDifference, CassetteMismatchError } from './cassette-mismatch-error.js';
import { createRecorder, trafficOptionShape } from './record-traffic.js';
import { requestDifferences } from './request-differences.js';
import { createScrubber, type TrafficScrubOptions } from './scrub-traffic.js';
import { readSentRequest, toCassetteRequest } from './sent-request.js';
import { type TrafficFetch, trafficFetch } from './traffic-fetch.js';

/**
 * Which cassette {@link replayTraffic} answers from, and how strictly.
 *
 * @example
 * ```ts
 * const options: ReplayTrafficOptions = { dir: 'test/cassettes', name: 'weather-tool-loop', mode: 'auto' };
 * ```
 */
export type ReplayTrafficOptions = {
  /** The folder of the cassettes (relative to the working directory, or absolute). */
  dir: string;
  /** The cassette's name: the file is `<dir>/<name>.json`; may hold folders (`openai/weather`). Default `cassette`. */
  name?: string;
  /**
   * `exact` (default): each request must equal the recorded one — method, path, query, and the JSON
   * body (key order aside), both scrubbed alike — or the run ends `error` naming the differences.
   * `order`: the n-th request gets the n-th response, whatever it asks (cassettes another client
   * recorded, such as the project's shared fixtures).
   */
  match?: 'exact' | 'order';
  /**
   * `replay` (default): answer from the cassette, never touching the network; a missing cassette
   * throws {@link CassetteMissingError} here. `auto`: record when the cassette does not exist yet,
   * replay when it does. `record`: always record afresh, replacing the cassette.
   */
  mode?: 'replay' | 'auto' | 'record';
  /**
   * What a request the cassette cannot answer gets. `respond` (default): an HTTP 400 whose error
   * body carries the {@link CassetteMismatchError}'s message, so any provider SDK ends the run
   * `error` with it, unretried. `reject`: the `fetch` rejects with the error itself (for callers of
   * `fetch` without an SDK in between).
   */
  onMismatch?: 'respond' | 'reject';
  /** When recording: the `fetch` that reaches the provider. Default: the global `fetch`. */
  fetch?: FetchFunction;
  /** When recording: the cassette's `provider`. Default: from the first request's URL. */
  provider?: CassetteProvider;
  /** When recording: the cassette's `description`. */
  description?: string;
  /** More secrets to replace and headers to keep, when recording and when comparing. */
  scrub?: TrafficScrubOptions;
};

const replayOptions = option.object(
  {
    ...trafficOptionShape,
    match: option.withDefault(option.choice(['exact', 'order'] as const, "'exact' | 'order'"), 'exact'),
    mode: option.withDefault(option.choice(['replay', 'auto', 'record'] as const, "'replay' | 'auto' | 'record'"), 'replay'),
    onMismatch: option.withDefault(option.choice(['respond', 'reject'] as const, "'respond' | 'reject'"), 'respond'),
  },
  { label: 'replayTraffic(options)', expected: 'an options object with dir' },
);

/** How many differences a mismatch message lists; the error's `differences` has them all. */
const listedDifferences = 5;

/** The statuses whose responses have no body: a `Response` refuses one. */
const bodilessStatuses = new Set([204, 205, 304]);

/** Cuts an SSE body after each event (a blank line, LF or CRLF), keeping every byte, so a stream arrives event by event. */
function sseEvents(body: string): string[] {
  const events: string[] = [];
  const boundary = /\r\n\r\n|\n\n|\r\r/g;
  let start = 0;
  for (const match of body.matchAll(boundary)) {
    const end = (match.index ?? 0) + match[0].length;
    events.push(body.slice(start, end));
    start = end;
  }
  if (start < body.length) events.push(body.slice(start));
  return events;
}

function bodyChunks(response: CassetteResponse): Uint8Array[] {
  if (response.bodyEncoding === 'base64') return [bytesFromBase64(response.body)];
  const encoder = new TextEncoder();
  if ((response.headers['content-type'] ?? '').toLowerCase().includes('text/event-stream')) {
    return sseEvents(response.body).map((event) => encoder.encode(event));
  }
  return [encoder.encode(response.body)];
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/**
 * The recorded response as a live one: status and headers as recorded, the body unchanged, an SSE
 * body one event per chunk. The request's signal aborts it as it would a real `fetch`: before the
 * answer, or while the body is read.
 */
function replayedResponse(recorded: CassetteResponse, signal: AbortSignal | undefined): Response {
  const init = { status: recorded.status, headers: recorded.headers };
  if (bodilessStatuses.has(recorded.status)) return new Response(null, init);
  const chunks = bodyChunks(recorded);
  let onAbort: (() => void) | undefined;
  const detach = () => {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
    onAbort = undefined;
  };
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      if (!signal) return;
      onAbort = () => {
        detach();
        controller.error(abortReason(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
    },
    pull(controller) {
      const chunk = chunks.shift();
      if (chunk !== undefined) controller.enqueue(chunk);
      if (chunks.length === 0) {
        detach();
        controller.close();
      }
    },
    cancel() {
      detach();
    },
  });
  return new Response(body, init);
}

function mismatchMessage(
  file: string,
  index: number,
  match: string,
  recorded: CassetteRequest,
  differences: readonly CassetteDifference[],
): string {
  const listed = differences
    .slice(0, listedDifferences)
    .map((difference) => `  ${difference.path}: expected ${difference.expected}, received ${difference.received}`);
  const more = differences.length > listedDifferences ? [`  … and ${differences.length - listedDifferences} more`] : [];
  return [
    `Cassette mismatch: request #${index + 1} differs from interactions[${index}] (${recorded.method} ${recorded.path}) of ${file} (match: '${match}'):`,
    ...listed,
    ...more,
    `Record the cassette again (mode: 'record') if the change is intended.`,
  ].join('\n');
}

function exhaustedMessage(file: string, index: number, request: CassetteRequest, recorded: number): string {
  return (
    `Cassette exhausted: request #${index + 1} (${request.method} ${request.path}) has no interaction to answer it: ` +
    `${file} recorded ${recorded} interaction${recorded === 1 ? '' : 's'}. Record the cassette again (mode: 'record') if the change is intended.`
  );
}

/**
 * The answer to a request the cassette cannot answer: a 400 whose body each SDK turns into its
 * error's message, and `x-should-retry: false`, so no SDK retries it. One body fits every error
 * schema: the OpenAI SDK reads `error.message`, Anthropic's the top-level `message`; the AI SDK
 * packages validate theirs (OpenAI and compatible `error.{message, code}`, Anthropic `type: 'error'`
 * and `error.{type, message}`, Google `error.{code: number, message, status}`, Mistral `object`,
 * `message`, `type`, `param`, `code`, Bedrock `message`) and fall back to the bare status text when
 * it does not fit.
 */
function mismatchResponse(error: CassetteMismatchError): Response {
  const { message } = error;
  const body = {
    type: 'error',
    object: 'error',
    message,
    param: null,
    code: null,
    error: { type: 'cassette_mismatch', code: 400, status: 'FAILED_PRECONDITION', message, param: null },
  };
  return new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/json', 'x-should-retry': 'false' } });
}

/**
 * A `fetch` that answers each request from the cassette `<dir>/<name>.json` (recorded by
 * {@link recordTraffic}, or any file of the project's recorded format), in order, never touching
 * the network: status and headers as recorded, the body byte-exact (streams event by event).
 *
 * With `match: 'exact'` (default) each request must equal the recorded one after the same
 * scrubbing — method, path, query, JSON body with key order ignored. One that differs, or one more
 * than the cassette holds, is answered with an HTTP 400 carrying a {@link CassetteMismatchError}'s
 * message, so the run ends `error` with it: the request number, the cassette, and the first
 * differences as JSON paths with expected and received values. `mode: 'auto'` records when the
 * cassette is missing; `mode: 'record'` always records. The cassette is read here, so a missing
 * ({@link CassetteMissingError}) or malformed ({@link CassetteFormatError}) one throws at once.
 *
 * @example
 * ```ts
 * import { createActor, toPromise } from 'xstate';
 * import { createConversationMachine, openaiProvider } from 'actorloop';
 * import { replayTraffic } from 'actorloop/testing';
 *
 * const replay = replayTraffic({ dir: 'test/cassettes', name: 'weather-tool-loop' });
 * const provider = openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-replay', fetch: replay });
 * const actor = createActor(createConversationMachine({ provider }), { input: {} }).start();
 * actor.send({ type: 'user.message', content: 'What is the weather in Florence?' });
 * const output = await toPromise(actor); // as recorded; a changed prompt ends it 'error', naming the difference
 * ```
 */
export function replayTraffic(options: ReplayTrafficOptions): TrafficFetch {
  const resolved = resolveOptionsWith(replayOptions, options);
  const file = cassetteFile(resolved.dir, resolved.name);
  if (resolved.mode === 'record' || (resolved.mode === 'auto' && !existsSync(file))) {
    return createRecorder({
      file,
      provider: resolved.provider,
      description: resolved.description,
      fetch: resolved.fetch,
      scrub: resolved.scrub,
    });
  }
  const cassette = readCassette(file);
  const requests: CassetteRequest[] = [];
  const mismatches: CassetteMismatchError[] = [];
  let next = 0;

  const refuse = (error: CassetteMismatchError): Response => {
    mismatches.push(error);
    if (resolved.onMismatch === 'reject') throw error;
    return mismatchResponse(error);
  };

  const replay = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const sent = await readSentRequest(input, init);
    if (sent.signal?.aborted) throw abortReason(sent.signal);
    const { request } = toCassetteRequest(sent, createScrubber(sent.headers, sent.url, resolved.scrub));
    requests.push(request);
    const index = next;
    const interaction = cassette.interactions[index];
    if (interaction === undefined) {
      const message = exhaustedMessage(file, index, request, cassette.interactions.length);
      return refuse(new CassetteMismatchError(message, { file, request: index, reason: 'exhausted' }));
    }
    if (resolved.match === 'exact') {
      const differences = requestDifferences(interaction.request, request);
      // The cursor stays: a retry of the same request meets the same interaction, and the same answer.
      if (differences.length > 0) {
        const message = mismatchMessage(file, index, resolved.match, interaction.request, differences);
        return refuse(new CassetteMismatchError(message, { file, request: index, reason: 'different', differences }));
      }
    }
    next = index + 1;
    return replayedResponse(interaction.response, sent.signal);
  };

  return trafficFetch(replay, {
    cassette: file,
    mode: 'replay',
    requests,
    mismatches,
    remaining: () => cassette.interactions.length - next,
    flush: async () => {},
  });
}
