import type { Provider, ProviderEvent, ProviderRequest } from '../model/provider.js';
import { MiddlewareError } from './middleware-error.js';
import type { RequestMiddleware } from './request-middleware.js';

const isAsyncIterable = (value: unknown): value is AsyncIterable<ProviderEvent> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

/**
 * A provider whose requests pass through `middleware` in order: the first entry is the outermost,
 * the provider the innermost. With no middleware the provider is returned as it is.
 *
 * @example
 * ```ts
 * const shaped = withMiddleware(openaiProvider({ model: 'gpt-4o-mini' }), [truncateHistory({ maxMessages: 40 })]);
 * ```
 */
export function withMiddleware(provider: Provider, middleware: readonly RequestMiddleware[]): Provider {
  if (middleware.length === 0) return provider;
  const through = (index: number, request: ProviderRequest): AsyncIterable<ProviderEvent> => {
    const layer = middleware[index];
    if (layer === undefined) return provider.stream(request);
    return (async function* () {
      let called = false;
      const next = (nextRequest: ProviderRequest) => {
        if (called) throw new MiddlewareError(index, 'called next() twice for one request; retries belong to the `retry` option');
        called = true;
        return through(index + 1, nextRequest);
      };
      const events: unknown = await layer(request, next);
      if (!isAsyncIterable(events)) {
        throw new MiddlewareError(
          index,
          `must return an async iterable of provider events (next(request)), got ${events === null ? 'null' : typeof events}`,
        );
      }
      yield* events;
    })();
  };
  return {
    name: provider.name,
    ...(provider.model === undefined ? {} : { model: provider.model }),
    ...(provider.promptCacheTtls === undefined ? {} : { promptCacheTtls: provider.promptCacheTtls }),
    ...(provider.mediaTokens === undefined ? {} : { mediaTokens: provider.mediaTokens }),
    stream: (request) => through(0, request),
  };
}
