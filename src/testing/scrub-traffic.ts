import type { JsonValue } from '../model/json.js';

/**
 * What a cassette leaves out beyond the defaults: more secrets to replace, more response headers
 * to keep. The same settings apply when a replay compares a live request with the recorded one,
 * so both sides are scrubbed alike.
 *
 * @example
 * ```ts
 * const scrub: TrafficScrubOptions = { secrets: [process.env.CUSTOMER_ID ?? ''], keepHeaders: ['x-groq-region'] };
 * ```
 */
export type TrafficScrubOptions = {
  /**
   * More values to replace with `<REDACTED>` wherever they appear: the query, request bodies,
   * response bodies (a customer id, a tenant name). Values shorter than 8 characters are ignored,
   * so an empty or short string cannot blank out ordinary text.
   */
  secrets?: readonly string[];
  /**
   * More response headers to keep (case-insensitive) beyond the allow-list. Auth, cookie and
   * account headers are never kept, whatever this says.
   */
  keepHeaders?: readonly string[];
};

/**
 * The response headers a cassette keeps (the recorded fixtures' list): what SDKs and retry logic
 * read — content type, request ids, rate limits, retry hints. Everything else is dropped, which is
 * what keeps cookies, account ids and transport headers (`content-length`, `content-encoding`: the
 * body is stored decoded) out.
 */
const keptHeaders = new Set([
  'content-type',
  'retry-after',
  'retry-after-ms',
  'x-should-retry',
  'request-id',
  'x-request-id',
  'apim-request-id',
  'openai-processing-ms',
  'openai-version',
  'mistral-correlation-id',
  'x-kong-request-id',
  'x-amzn-requestid',
  'x-amzn-errortype',
  'x-ds-trace-id',
]);
const keptHeaderPrefixes = ['x-ratelimit-', 'anthropic-ratelimit-'];

/** Never recorded, even when `keepHeaders` names them. */
const refusedHeaders = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'cookie',
  'set-cookie',
  'openai-organization',
  'openai-project',
  'anthropic-organization-id',
  'x-amz-security-token',
]);

/** Request headers whose value is a key (after an auth scheme such as `Bearer`). */
const keyHeaders = ['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'x-amz-security-token'];

/** Headers (request or response) whose value is an account id, by the placeholder it becomes. */
const accountHeaders: Record<string, string> = {
  'openai-organization': '<OPENAI_ORGANIZATION>',
  'openai-project': '<OPENAI_PROJECT>',
  'anthropic-organization-id': '<ANTHROPIC_ORGANIZATION_ID>',
};

/** Query parameters that carry a key (Gemini's `key=`). */
const keyParameters = /([?&]|^)(key|api_key|apikey|api-key|access_token|token)=([^&#]*)/gi;

/**
 * Key and account-id shapes replaced wherever they appear, also when no header announced them: a
 * key echoed in an error body, one pasted into a prompt, an organisation id in a 429 message.
 */
const secretPatterns: ReadonlyArray<readonly [RegExp, string]> = [
  [/(?<![A-Za-z0-9])sk-(?:ant-|proj-|svcacct-)?[A-Za-z0-9_-]{16,}/g, '<API_KEY>'],
  [/(?<![A-Za-z0-9])AIza[0-9A-Za-z_-]{35}/g, '<API_KEY>'],
  [/(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])/g, '<AWS_ACCESS_KEY_ID>'],
  [/(?<![A-Za-z0-9])org-[A-Za-z0-9]{16,}/g, '<OPENAI_ORGANIZATION>'],
  [/(?<![A-Za-z0-9])proj_[A-Za-z0-9]{16,}/g, '<OPENAI_PROJECT>'],
];

/** A value shorter than this is not treated as a secret: replacing it would rewrite ordinary text. */
const minimumSecretLength = 8;

/**
 * Replaces secrets in what a cassette records. One per request: it knows the key that request
 * carried, so that key is replaced wherever it shows up, whatever its shape.
 */
export type Scrubber = {
  text(text: string): string;
  json(value: JsonValue): JsonValue;
  query(query: string): string;
  /** Learns account ids from a response's headers, before its body is scrubbed. */
  learn(headers: Headers): void;
};

/** Whether a response header goes into the cassette. */
export function keepsHeader(name: string, keep: ReadonlySet<string>): boolean {
  const lower = name.toLowerCase();
  if (refusedHeaders.has(lower)) return false;
  return keptHeaders.has(lower) || keep.has(lower) || keptHeaderPrefixes.some((prefix) => lower.startsWith(prefix));
}

/** The response headers a cassette keeps, lower-case. */
export function keptResponseHeaders(headers: Headers, keep: ReadonlySet<string>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of headers) if (keepsHeader(name, keep)) kept[name.toLowerCase()] = value;
  return kept;
}

/** The lower-case set of `keepHeaders`. */
export function keptHeaderSet(options: TrafficScrubOptions | undefined): ReadonlySet<string> {
  return new Set((options?.keepHeaders ?? []).map((name) => name.toLowerCase()));
}

function withoutScheme(value: string): string {
  const match = /^(?:bearer|basic|token)\s+(.+)$/i.exec(value.trim());
  return (match?.[1] ?? value).trim();
}

/**
 * A scrubber for one request: the key its headers or query carry, the account ids of its headers,
 * the user's `secrets`, then the key shapes of {@link secretPatterns}.
 */
export function createScrubber(requestHeaders: Headers, url: URL, options: TrafficScrubOptions | undefined): Scrubber {
  const secrets = new Map<string, string>();
  const add = (value: string | null | undefined, placeholder: string) => {
    if (value && value.length >= minimumSecretLength && !secrets.has(value)) secrets.set(value, placeholder);
  };
  for (const name of keyHeaders) add(withoutScheme(requestHeaders.get(name) ?? ''), '<API_KEY>');
  for (const [name, placeholder] of Object.entries(accountHeaders)) add(requestHeaders.get(name), placeholder);
  for (const match of url.search.matchAll(keyParameters)) add(decodeURIComponentSafe(match[3] ?? ''), '<API_KEY>');
  for (const secret of options?.secrets ?? []) add(secret, '<REDACTED>');

  const text = (input: string): string => {
    let output = input;
    // Longest first, so a secret that contains another is replaced whole.
    for (const [secret, placeholder] of [...secrets].sort((a, b) => b[0].length - a[0].length)) {
      output = output.split(secret).join(placeholder);
    }
    for (const [pattern, placeholder] of secretPatterns) output = output.replace(pattern, placeholder);
    return output;
  };
  const json = (value: JsonValue): JsonValue => {
    if (typeof value === 'string') return text(value);
    if (Array.isArray(value)) return value.map(json);
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, entry]) => [key, json(entry)]));
    }
    return value;
  };
  return {
    text,
    json,
    query: (query) => text(query.replace(keyParameters, (_match, lead: string, name: string) => `${lead}${name}=<API_KEY>`)),
    learn(headers) {
      for (const [name, placeholder] of Object.entries(accountHeaders)) add(headers.get(name), placeholder);
    },
  };
}

function decodeURIComponentSafe(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
