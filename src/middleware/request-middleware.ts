import type { ProviderEvent, ProviderRequest } from '../model/provider.js';

/**
 * Calls the rest of the chain (the next middleware, or the provider itself) with a request: at
 * most once per request — retries belong to the machine's `retry` policy, where each attempt is a
 * visible state.
 */
export type NextRequest = (request: ProviderRequest) => AsyncIterable<ProviderEvent>;

/**
 * Shapes one provider request: change the request before `next` (history truncation, RAG, prompt
 * injection, reasoning effort), look at or transform the events after it, or answer without
 * calling it. Middleware never loops: retries, caps and doom-loop checks stay in the statechart.
 *
 * @example
 * ```ts
 * const logRequests: RequestMiddleware = (request, next) => {
 *   console.log(`sending ${request.messages.length} messages`);
 *   return next(request);
 * };
 * createConversationMachine({ provider, middleware: [logRequests, truncateHistory({ maxMessages: 40 })] });
 * ```
 */
export type RequestMiddleware = (
  request: ProviderRequest,
  next: NextRequest,
) => AsyncIterable<ProviderEvent> | Promise<AsyncIterable<ProviderEvent>>;
