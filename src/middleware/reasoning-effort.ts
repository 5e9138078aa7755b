import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { ProviderRequest, ReasoningEffort } from '../model/provider.js';
import type { RequestMiddleware } from './request-middleware.js';

const efforts: ReadonlySet<string> = new Set(['minimal', 'low', 'medium', 'high']);

/**
 * Middleware that asks for one reasoning effort on every wire: OpenAI gets `reasoning_effort`,
 * Anthropic a thinking budget (1,024 / 2,048 / 8,192 / 24,576 tokens, kept below `maxTokens`). A
 * provider's own `reasoningEffort` or `thinking` option wins. Give a function to choose per request,
 * e.g. from `sessionData`; `undefined` leaves the request as it is.
 *
 * @example
 * ```ts
 * createConversationMachine({ provider, middleware: [reasoningEffort('low')] });
 * createConversationMachine({ provider, middleware: [reasoningEffort(({ sessionData }) => (sessionData as { plan: string }).plan === 'pro' ? 'high' : 'low')] });
 * ```
 */
export function reasoningEffort(effort: ReasoningEffort | ((request: ProviderRequest) => ReasoningEffort | undefined)): RequestMiddleware {
  if (typeof effort !== 'function' && !efforts.has(effort)) {
    throw new InvalidOptionsError('reasoningEffort(effort)', `${[...efforts].join(' | ')} or a function (request) => effort`, effort);
  }
  return (request, next) => {
    const chosen = typeof effort === 'function' ? effort(request) : effort;
    if (chosen === undefined) return next(request);
    if (!efforts.has(chosen)) throw new InvalidOptionsError('reasoningEffort(effort)', [...efforts].join(' | '), chosen);
    return next({ ...request, reasoningEffort: chosen });
  };
}
