import { ProviderError } from '../../model/errors/provider-error.js';
import { environmentVariable } from '../../util/runtime.js';

/** How one provider is given its key, to say so when it has none. */
export type KeySource = {
  /** The factory the user called, e.g. `openaiProvider`. */
  provider: string;
  /** The environment variables the SDK reads the key from, first the one to suggest. */
  envVars: readonly string[];
  /** What else fixes it, e.g. how to reach a server that needs no key. */
  alternative?: string;
};

/**
 * Whether the provider's own client has a key to send: `apiKey` when given (an empty string is
 * none — the SDK ignores the environment then), else one of the environment variables.
 */
export function hasApiKey(apiKey: string | undefined, source: KeySource): boolean {
  if (apiKey !== undefined) return apiKey !== '';
  return source.envVars.some((name) => Boolean(environmentVariable(name)));
}

/**
 * The error a run ends with when the SDK refused to send a request for want of credentials. The
 * SDK's own words name its constructor options and every auth scheme it knows, not what to do with
 * this provider; they stay at the end, so nothing the SDK said is lost.
 */
export function missingApiKeyError(source: KeySource, sdkError?: unknown): ProviderError {
  const [first, ...others] = source.envVars;
  const env = others.length === 0 ? first : `${first} (or ${others.join(', ')})`;
  const said = sdkError === undefined ? '' : ` (The SDK said: ${sdkError instanceof Error ? sdkError.message : String(sdkError)})`;
  return new ProviderError(
    `${source.provider} has no API key: set ${env} or pass \`apiKey\`${source.alternative ? `; ${source.alternative}` : ''}.${said}`,
    { code: 'authentication', retryable: false, ...(sdkError === undefined ? {} : { cause: sdkError }) },
  );
}

/**
 * An empty key — `apiKey: ''`, or the environment variable set to '' — is no key on every SDK
 * version; older SDKs would send a request with it (and get a 401 back, or leave the machine).
 */
export function emptyApiKey(apiKey: string | undefined, source: KeySource): boolean {
  if (apiKey !== undefined) return apiKey === '';
  const [first] = source.envVars;
  return first !== undefined && environmentVariable(first) === '' && !source.envVars.some((name) => Boolean(environmentVariable(name)));
}
