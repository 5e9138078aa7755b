import type { ProviderRequest, ReasoningEffort } from '../model/provider.js';
import type { RequestMiddleware } from './request-middleware.js';
import { option, resolveOptionsWith } from '../util/option-schema.js';

const efforts: readonly unknown[] = ['minimal', 'low', 'medium', 'high'] satisfies ReasoningEffort[];
const effortSchema = option.choice(efforts as ReasoningEffort[], efforts.join(' | '));

type ChooseEffort = (request: ProviderRequest) => ReasoningEffort | undefined;

// Anything but an effort or a function is refused naming both forms.
const reasoningEffortSchema = option.either<ReasoningEffort | ChooseEffort>(`${effortSchema.expected} or a function (request) => effort`, [
  [(value) => typeof value === 'function', option.callable<ChooseEffort>('a function (request) => effort')],
  [(value) => efforts.includes(value), effortSchema],
]);

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
  const resolved = resolveOptionsWith(reasoningEffortSchema, effort, 'reasoningEffort(effort)');
  return (request, next) => {
    const chosen = typeof resolved === 'function' ? resolved(request) : resolved;
    if (chosen === undefined) return next(request);
    // An effort a function chooses is only known per request, so it is checked there.
    return next({ ...request, reasoningEffort: effortSchema.resolve(chosen, 'reasoningEffort(effort)') });
  };
}
