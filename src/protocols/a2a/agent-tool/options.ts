import { InvalidOptionsError } from '../../../errors/invalid-options-error.js';
import type { A2AInputRequest } from './progress.js';

/**
 * Options of {@link a2aAgentTool}.
 *
 * @example
 * ```ts
 * const options: A2AAgentToolOptions = {
 *   name: 'research',
 *   timeoutMs: 120_000,
 *   onFailure: 'halt',
 *   headers: async () => ({ authorization: `Bearer ${await token()}` }),
 * };
 * ```
 */
export type A2AAgentToolOptions = {
  /**
   * The tool's name (what the model calls). Default: the agent card's name in snake case. With
   * both `name` and `description` given, the card is not fetched until the first call.
   */
  name?: string;
  /** What the model reads about the tool. Default: the card's description and its skills. */
  description?: string;
  /** Overrides the parent's `toolTimeoutMs` for this call; when it is up the remote task is canceled. */
  timeoutMs?: number;
  /**
   * The remote task failing, being rejected, or stopping for input nothing gives (and any other
   * failure of the call): `'error'` (default) gives the call an error result naming the remote agent
   * and its message, for the parent's model to decide; `'halt'` ends the parent `halted`
   * (`tool_halt`) with that message, like `agentTool`'s `onChildFailure: 'halt'`.
   */
  onFailure?: 'error' | 'halt';
  /**
   * The remote task is `input-required`: return the text to send on the same task, or `undefined`
   * to give up (the call fails naming what the agent asked). Without it the call fails at once.
   */
  onInputRequired?: (request: A2AInputRequest) => string | undefined | Promise<string | undefined>;
  /**
   * Headers for every request to the agent (card included), e.g. `authorization`; a function is
   * called before each request, so a token can be refreshed. Headers the A2A client sets itself win.
   */
  headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  /** The `fetch` every request goes through (default: the global one), for a proxy or your own auth. */
  fetch?: typeof fetch;
  /** How long the card fetch and each short request (`getTask`) may take. Default 10 000 ms. */
  requestTimeoutMs?: number;
  /** How long the `cancelTask` sent on the caller's cancel or timeout may take. Default 5 000 ms. */
  cancelTimeoutMs?: number;
};

/** The options after checking, defaults filled. */
export type ResolvedA2AAgentToolOptions = {
  name?: string;
  description?: string;
  timeoutMs?: number;
  onFailure: 'error' | 'halt';
  onInputRequired?: A2AAgentToolOptions['onInputRequired'];
  headers?: A2AAgentToolOptions['headers'];
  fetch?: typeof fetch;
  requestTimeoutMs: number;
  cancelTimeoutMs: number;
};

const label = 'a2aAgentTool';
const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

const positive = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0;

/** Checks the URL and the options at creation, so a typo never reaches a running conversation. */
export function resolveOptions(url: unknown, options: unknown): { url: URL; options: ResolvedA2AAgentToolOptions } {
  if (typeof url !== 'string' && !(url instanceof URL)) throw new InvalidOptionsError(`${label}(url)`, 'an http(s) URL', url);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidOptionsError(`${label}(url)`, 'an http(s) URL', url);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
    throw new InvalidOptionsError(`${label}(url)`, 'an http(s) URL', String(url));
  if (options === undefined) return { url: parsed, options: { onFailure: 'error', requestTimeoutMs: 10_000, cancelTimeoutMs: 5_000 } };
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidOptionsError(label, 'an options object { name?, description?, timeoutMs?, onFailure?, … }', options);
  }
  const given = options as A2AAgentToolOptions;
  const {
    name,
    description,
    timeoutMs,
    onFailure = 'error',
    onInputRequired,
    headers,
    requestTimeoutMs = 10_000,
    cancelTimeoutMs = 5_000,
  } = given;
  if (name !== undefined && (typeof name !== 'string' || !toolNamePattern.test(name))) {
    throw new InvalidOptionsError(`${label}.name`, 'a name of 1 to 64 letters, digits, "_" or "-"', name);
  }
  if (description !== undefined && typeof description !== 'string')
    throw new InvalidOptionsError(`${label}.description`, 'a string', description);
  if (timeoutMs !== undefined && !positive(timeoutMs))
    throw new InvalidOptionsError(`${label}.timeoutMs`, 'a positive number of milliseconds', timeoutMs);
  if (onFailure !== 'error' && onFailure !== 'halt') throw new InvalidOptionsError(`${label}.onFailure`, '"error" or "halt"', onFailure);
  if (onInputRequired !== undefined && typeof onInputRequired !== 'function') {
    throw new InvalidOptionsError(`${label}.onInputRequired`, 'a function (request) => string | undefined', onInputRequired);
  }
  if (
    headers !== undefined &&
    typeof headers !== 'function' &&
    (typeof headers !== 'object' || headers === null || Array.isArray(headers))
  ) {
    throw new InvalidOptionsError(`${label}.headers`, 'an object of header strings or a function returning one', headers);
  }
  if (given.fetch !== undefined && typeof given.fetch !== 'function')
    throw new InvalidOptionsError(`${label}.fetch`, 'a fetch function', given.fetch);
  if (!positive(requestTimeoutMs))
    throw new InvalidOptionsError(`${label}.requestTimeoutMs`, 'a positive number of milliseconds', requestTimeoutMs);
  if (!positive(cancelTimeoutMs))
    throw new InvalidOptionsError(`${label}.cancelTimeoutMs`, 'a positive number of milliseconds', cancelTimeoutMs);
  return {
    url: parsed,
    options: {
      ...(name === undefined ? {} : { name }),
      ...(description === undefined ? {} : { description }),
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      onFailure,
      ...(onInputRequired === undefined ? {} : { onInputRequired }),
      ...(headers === undefined ? {} : { headers }),
      ...(given.fetch === undefined ? {} : { fetch: given.fetch }),
      requestTimeoutMs,
      cancelTimeoutMs,
    },
  };
}
