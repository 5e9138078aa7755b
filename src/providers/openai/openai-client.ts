import { lazySdkClient } from '../optional-sdk.js';

/**
 * An `openai` client made on first use (the SDK is an optional peer), with its own retries off:
 * the conversation machine retries, so every attempt is a visible state. Both wires of
 * `openaiProvider` use the same client class.
 */
export function openaiClientLoader<TClient>(options: { apiKey: string | undefined; baseURL: string | undefined }): () => Promise<TClient> {
  const { apiKey, baseURL } = options;
  return lazySdkClient(
    () => import('openai'),
    (module) =>
      new module.OpenAI({
        ...(apiKey === undefined ? {} : { apiKey }),
        ...(baseURL === undefined ? {} : { baseURL }),
        maxRetries: 0,
      }) as unknown as TClient,
    'openaiProvider needs the `openai` package: npm install openai (or pass `client`)',
  );
}

/**
 * The API key a request is made with, to keep out of errors: the client's own (passed in, or read
 * from the environment by the SDK), else the one given in the options.
 */
export function keyInUse(client: unknown, optionsKey: string | undefined): string | undefined {
  const clientKey = typeof client === 'object' && client !== null ? (client as { apiKey?: unknown }).apiKey : undefined;
  return typeof clientKey === 'string' ? clientKey : optionsKey;
}
