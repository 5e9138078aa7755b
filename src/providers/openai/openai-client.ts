import { emptyApiKey, hasApiKey, type KeySource, missingApiKeyError } from '../errors/missing-api-key.js';
import { ProviderError } from '../../model/errors/provider-error.js';
import { lazySdkClient, notInstalled } from '../optional-sdk.js';
import type { FetchFunction } from '../transport/fetch-function.js';
import { installedOpenaiVersion, unsupportedOpenaiProblem } from './openai-sdk-version.js';
import { environmentVariable } from '../../util/runtime.js';

/** Where `openaiProvider`'s own client finds its key. */
const openaiKeySource: KeySource = {
  provider: 'openaiProvider',
  envVars: ['OPENAI_API_KEY'],
  alternative: "an OpenAI-compatible server that needs no key takes its `baseURL` and any `apiKey`, e.g. 'none'",
};

/**
 * The client of an `openaiProvider`: the one passed in, or an `openai` client made on first use
 * (the SDK is an optional peer) with its own retries off — the conversation machine retries, so
 * every attempt is a visible state. Both wires of `openaiProvider` use the same client class.
 * An installed `openai` older than the providers support is refused here, when the provider is
 * created, not in its first request.
 */
export function openaiClient<TClient>(
  client: TClient | undefined,
  options: { apiKey: string | undefined; baseURL: string | undefined; fetch: FetchFunction | undefined },
): () => Promise<TClient> {
  if (client !== undefined) return () => Promise.resolve(client);
  const installed = installedOpenaiVersion();
  const problem = installed === undefined ? undefined : unsupportedOpenaiProblem(installed);
  if (problem !== undefined) throw new ProviderError(problem, { code: 'unknown', retryable: false });
  const { apiKey, baseURL, fetch } = options;
  return lazySdkClient(
    () => import('openai').catch(notInstalled),
    (module) => {
      if (emptyApiKey(apiKey, openaiKeySource)) throw missingApiKeyError(openaiKeySource);
      try {
        return new module.OpenAI({
          ...(apiKey === undefined ? {} : { apiKey }),
          ...(baseURL === undefined ? {} : { baseURL }),
          ...(fetch === undefined ? {} : { fetch }),
          maxRetries: 0,
        }) as unknown as TClient;
      } catch (error) {
        // The SDK refuses to construct without credentials; its message lists its own options.
        if (!hasApiKey(apiKey, openaiKeySource)) throw missingApiKeyError(openaiKeySource, error);
        throw error;
      }
    },
    'openaiProvider needs the `openai` package: npm install openai (or pass `client`)',
  );
}

/**
 * The API key a request was made with, to keep out of errors: the client's own (passed in, or read
 * from the environment by the SDK), else the one in the options, else — for a client the provider
 * builds, which reads it — `OPENAI_API_KEY`.
 */
export function keyToHide(client: unknown, options: { apiKey: string | undefined; clientGiven: boolean }): string | undefined {
  const clientKey = typeof client === 'object' && client !== null ? (client as { apiKey?: unknown }).apiKey : undefined;
  if (typeof clientKey === 'string') return clientKey;
  return options.apiKey ?? (options.clientGiven ? undefined : environmentVariable('OPENAI_API_KEY'));
}
