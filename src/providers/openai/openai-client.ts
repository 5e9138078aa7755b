import { lazySdkClient } from '../optional-sdk.js';
import type { FetchFunction } from '../transport/fetch-function.js';

/**
 * The client of an `openaiProvider`: the one passed in, or an `openai` client made on first use
 * (the SDK is an optional peer) with its own retries off — the conversation machine retries, so
 * every attempt is a visible state. Both wires of `openaiProvider` use the same client class.
 */
export function openaiClient<TClient>(
  client: TClient | undefined,
  options: { apiKey: string | undefined; baseURL: string | undefined; fetch: FetchFunction | undefined },
): () => Promise<TClient> {
  if (client !== undefined) return () => Promise.resolve(client);
  const { apiKey, baseURL, fetch } = options;
  return lazySdkClient(
    () => import('openai'),
    (module) =>
      new module.OpenAI({
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(baseURL === undefined ? {} : { baseURL }),
        ...(fetch === undefined ? {} : { fetch }),
        maxRetries: 0,
      }) as unknown as TClient,
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
  return options.apiKey ?? (options.clientGiven ? undefined : process.env.OPENAI_API_KEY);
}
