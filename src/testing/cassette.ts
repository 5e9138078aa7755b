import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { JsonValue } from '../model/json.js';
import { isRecord } from '../util/is-record.js';
import { CassetteFormatError } from './cassette-format-error.js';
import { CassetteMissingError } from './cassette-missing-error.js';

/**
 * The wire a cassette speaks: `openai` (Chat Completions), `openai-responses` (`/v1/responses`),
 * `anthropic` (Messages), `openai-compatible` (the Chat Completions dialect of other servers), or
 * another name (`google`, `mistral`, `bedrock`, …) as the recorded fixtures use.
 *
 * @example
 * ```ts
 * const provider: CassetteProvider = 'anthropic';
 * ```
 */
export type CassetteProvider = 'openai' | 'openai-responses' | 'anthropic' | 'openai-compatible' | (string & {});

/**
 * A recorded request: no host, no headers (they carry the keys), the query apart.
 *
 * @example
 * ```ts
 * const request: CassetteRequest = { method: 'POST', path: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [] } };
 * ```
 */
export type CassetteRequest = {
  method: string;
  /** The URL's path, without host or query. */
  path: string;
  /** The URL's query without `?`, only when there was one (`alt=sse`); keys in it are replaced. */
  query?: string;
  /** The parsed JSON body sent, secrets replaced; `null` when there was none or it was not JSON. */
  body: JsonValue | null;
};

/**
 * A recorded response: status, the headers of the allow-list, and the body as it came.
 *
 * @example
 * ```ts
 * const response: CassetteResponse = { status: 200, headers: { 'content-type': 'application/json' }, body: '{"id":"chatcmpl-1"}' };
 * ```
 */
export type CassetteResponse = {
  status: number;
  /** Lower-case names; only the allow-list (`content-type`, request ids, rate limits, retry hints). */
  headers: Record<string, string>;
  /** The raw body text, byte-exact (SSE text for streams); base64 of the bytes when `bodyEncoding` says so. */
  body: string;
  /** `base64`: the body was not UTF-8 text (AWS event-stream framing); `body` holds its bytes in base64. */
  bodyEncoding?: 'base64';
};

/**
 * One request and the response it got.
 *
 * @example
 * ```ts
 * const interaction: CassetteInteraction = {
 *   request: { method: 'POST', path: '/v1/messages', body: { model: 'claude-haiku-4-5', max_tokens: 64, messages: [] } },
 *   response: { status: 200, headers: { 'content-type': 'application/json' }, body: '{"type":"message"}' },
 * };
 * ```
 */
export type CassetteInteraction = {
  request: CassetteRequest;
  response: CassetteResponse;
  /** The recording kept only parsed JSON, re-serialised: same value, not the wire bytes (imported fixtures). */
  bodyReserialized?: boolean;
  /** Anything a reader should know about this interaction (a body cut short while recording). */
  note?: string;
};

/**
 * Where a cassette came from: a recording of another project (`repo`, `path`, `commit`), or a note.
 *
 * @example
 * ```ts
 * const source: CassetteSource = { note: 'recorded with actorloop recordTraffic, 2026-01-31' };
 * ```
 */
export type CassetteSource = { repo?: string; path?: string; commit?: string; note?: string };

/**
 * The project's recorded format (the same as its shared conformance fixtures): one conversation
 * per file, `<dir>/<name>.json`, requests in the order they were sent.
 *
 * @example
 * ```ts
 * const cassette: Cassette = readCassette('test/cassettes/weather.json');
 * console.log(cassette.provider, cassette.interactions.length);
 * ```
 */
export type Cassette = {
  provider: CassetteProvider;
  source?: CassetteSource;
  /** One line about what was recorded. */
  description?: string;
  /** `recorded`: bodies exactly as the server sent them; `added`: SSE framing added to bare chunks by a converter. */
  framing?: 'recorded' | 'added';
  interactions: CassetteInteraction[];
};

/** The name a cassette gets when none is given: one cassette per `dir`. */
export const defaultCassetteName = 'cassette';

/**
 * The file of cassette `name` under `dir`. A name may hold folders (`openai/weather`), as the
 * recorded fixtures do; a trailing `.json` is accepted; a name that climbs out of `dir` is refused.
 */
export function cassetteFile(dir: string, name: string, option = 'name'): string {
  const bare = name.endsWith('.json') ? name.slice(0, -'.json'.length) : name;
  const segments = bare.split(/[\\/]/);
  if (bare === '' || path.isAbsolute(bare) || segments.some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new InvalidOptionsError(option, 'a cassette name relative to dir, such as "weather" or "openai/weather"', name);
  }
  return path.resolve(dir, `${bare}.json`);
}

/**
 * The wire of a request, from its URL, for a new cassette's `provider`: the shared fixtures'
 * folder names, so a recorded cassette sits beside them.
 */
export function inferProvider(url: URL): CassetteProvider {
  const { hostname, pathname } = url;
  if (pathname.endsWith('/v1/messages')) return 'anthropic';
  if (pathname.endsWith('/v1/responses') || pathname.endsWith('/openai/responses')) return 'openai-responses';
  if (/:(stream)?generateContent$/i.test(pathname) || hostname.endsWith('generativelanguage.googleapis.com')) return 'google';
  if (hostname.startsWith('bedrock-runtime.') || /\/converse(-stream)?$/.test(pathname)) return 'bedrock';
  if (hostname === 'api.mistral.ai') return 'mistral';
  // A local server standing in for OpenAI (a test's) counts as OpenAI; any other host is a compatible one.
  const local = hostname === 'localhost' || hostname.startsWith('[') || /^[\d.]+$/.test(hostname);
  if (pathname === '/v1/chat/completions' && (hostname === 'api.openai.com' || local)) return 'openai';
  return 'openai-compatible';
}

// ---------------------------------------------------------------------------------------------
// Reading and checking: every field the replay uses, named by its JSON path when it is wrong.

function fail(file: string, field: string, problem: string): never {
  throw new CassetteFormatError(file, field, problem);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `a string (${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)})`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

function stringField(file: string, record: Record<string, unknown>, key: string, at: string): string {
  const value = record[key];
  if (typeof value !== 'string') fail(file, `${at}.${key}`, `expected a string, got ${describe(value)}`);
  return value;
}

function optionalString(file: string, record: Record<string, unknown>, key: string, at: string): string | undefined {
  return record[key] === undefined ? undefined : stringField(file, record, key, at);
}

function checkRequest(file: string, value: unknown, at: string): CassetteRequest {
  if (!isRecord(value)) fail(file, at, `expected an object { method, path, body }, got ${describe(value)}`);
  const method = stringField(file, value, 'method', at);
  const requestPath = stringField(file, value, 'path', at);
  if (!requestPath.startsWith('/'))
    fail(file, `${at}.path`, `expected a path starting with "/" (no host, no query), got ${JSON.stringify(requestPath)}`);
  const query = optionalString(file, value, 'query', at);
  if (!('body' in value)) fail(file, `${at}.body`, 'missing: the parsed JSON body, or null when it was not recorded');
  return { method, path: requestPath, ...(query === undefined ? {} : { query }), body: value.body as JsonValue | null };
}

function checkResponse(file: string, value: unknown, at: string): CassetteResponse {
  if (!isRecord(value)) fail(file, at, `expected an object { status, headers, body }, got ${describe(value)}`);
  const status = value.status;
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 200 || status > 599) {
    fail(file, `${at}.status`, `expected an HTTP status from 200 to 599, got ${describe(status)}`);
  }
  const headers = value.headers;
  if (!isRecord(headers)) fail(file, `${at}.headers`, `expected an object of header values by name, got ${describe(headers)}`);
  for (const [name, header] of Object.entries(headers)) {
    if (typeof header !== 'string') fail(file, `${at}.headers.${name}`, `expected a string, got ${describe(header)}`);
  }
  const body = stringField(file, value, 'body', at);
  const encoding = value.bodyEncoding;
  if (encoding !== undefined && encoding !== 'base64')
    fail(file, `${at}.bodyEncoding`, `expected "base64" or nothing, got ${describe(encoding)}`);
  return {
    status,
    headers: headers as Record<string, string>,
    body,
    ...(encoding === 'base64' ? { bodyEncoding: 'base64' as const } : {}),
  };
}

/**
 * Checks a parsed cassette against the recorded format and returns it typed. Fields the replay
 * does not use (`source`, `note`, …) are kept as they are.
 */
export function checkCassette(value: unknown, file: string): Cassette {
  if (!isRecord(value)) fail(file, '', `expected a JSON object { provider, interactions }, got ${describe(value)}`);
  stringField(file, value, 'provider', '$');
  const interactions = value.interactions;
  if (!Array.isArray(interactions)) fail(file, 'interactions', `expected an array of { request, response }, got ${describe(interactions)}`);
  const checked = interactions.map((interaction: unknown, index): CassetteInteraction => {
    const at = `interactions[${index}]`;
    if (!isRecord(interaction)) fail(file, at, `expected an object { request, response }, got ${describe(interaction)}`);
    return {
      ...(interaction as Record<string, unknown>),
      request: checkRequest(file, interaction.request, `${at}.request`),
      response: checkResponse(file, interaction.response, `${at}.response`),
    } as CassetteInteraction;
  });
  return { ...(value as Record<string, unknown>), interactions: checked } as Cassette;
}

/**
 * Reads and checks a cassette file.
 *
 * @example
 * ```ts
 * const cassette = readCassette('test/cassettes/weather.json');
 * const firstAnswer = cassette.interactions[0]?.response.body;
 * ```
 * @throws {CassetteMissingError} when the file does not exist.
 * @throws {CassetteFormatError} when it is not JSON or not in the recorded format (naming the field).
 */
export function readCassette(file: string): Cassette {
  if (!existsSync(file)) throw new CassetteMissingError(file);
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new CassetteFormatError(file, '', `not JSON (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
  return checkCassette(parsed, file);
}

/**
 * Writes a cassette as 2-space JSON, folders created. Written to a temporary file first and
 * renamed, so a test killed mid-write never leaves half a cassette to be replayed.
 */
export function writeCassette(file: string, cassette: Cassette): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(cassette, null, 2)}\n`);
  renameSync(temporary, file);
}
