import { ProviderError } from '../model/errors/provider-error.js';

/**
 * A client made on first use from an optional peer SDK (`openai`, `@anthropic-ai/sdk`), so the
 * package loads without it. Loading the SDK starts at once, in the background: importing it takes
 * long enough to eat a short `requestTimeoutMs` if the first request had to wait for it. A failure
 * — the SDK not installed, no API key in the environment — is not cached: installing the package
 * or setting the key fixes the next request.
 */
export function lazySdkClient<TModule, TClient>(
  load: () => Promise<TModule>,
  create: (module: TModule) => TClient,
  missingMessage: string,
): () => Promise<TClient> {
  let client: Promise<TClient> | undefined;
  let preloaded: Promise<TModule> | undefined = load();
  preloaded.catch(() => undefined);
  return () => {
    if (client) return client;
    const pending = (async () => {
      let module: TModule;
      try {
        const early = preloaded;
        preloaded = undefined;
        module = await (early ?? load());
      } catch (error) {
        throw new ProviderError(missingMessage, { code: 'unknown', retryable: false, cause: error });
      }
      return create(module);
    })();
    client = pending;
    pending.catch(() => {
      if (client === pending) client = undefined;
    });
    return pending;
  };
}

/**
 * The `.catch` of an optional peer's `import(…)`: it rethrows, and is there for bundlers — esbuild
 * (wrangler, tsup) refuses to bundle an `import('openai')` it cannot resolve unless the import has
 * a `.catch`, so without it a Workers app that never installed `openai` would not build.
 */
export const notInstalled = (error: unknown): never => {
  throw error;
};
