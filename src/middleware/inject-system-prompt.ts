import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { ProviderRequest } from '../model/provider.js';
import type { RequestMiddleware } from './request-middleware.js';

/**
 * Options of {@link injectSystemPrompt}.
 *
 * @example
 * ```ts
 * const options: InjectSystemPromptOptions = { position: 'prepend' };
 * ```
 */
export type InjectSystemPromptOptions = {
  /** Where the text goes: after the machine's `system` (default), before it, or instead of it. */
  position?: 'append' | 'prepend' | 'replace';
};

/**
 * Middleware that adds per-conversation text to the system prompt, built from the request — most
 * often from `sessionData` (the user's name, plan, locale, retrieved documents). Returning
 * `undefined` or `''` leaves the prompt as it is.
 *
 * @example
 * ```ts
 * const machine = createConversationMachine({
 *   provider,
 *   system: 'You are a support agent.',
 *   middleware: [injectSystemPrompt(({ sessionData }) => `The customer is ${(sessionData as { name: string }).name}.`)],
 * });
 * createActor(machine, { input: { sessionData: { name: 'Ada' } } });
 * ```
 */
export function injectSystemPrompt(
  build: (request: ProviderRequest) => string | undefined,
  options: InjectSystemPromptOptions = {},
): RequestMiddleware {
  if (typeof build !== 'function') throw new InvalidOptionsError('injectSystemPrompt(build)', 'a function (request) => string', build);
  const position = options.position ?? 'append';
  if (!['append', 'prepend', 'replace'].includes(position)) {
    throw new InvalidOptionsError('injectSystemPrompt.position', "'append' | 'prepend' | 'replace'", position);
  }
  return (request, next) => {
    const text = build(request);
    if (text === undefined || text === '') return next(request);
    if (typeof text !== 'string') throw new InvalidOptionsError('injectSystemPrompt(build)', 'a function returning a string', text);
    return next({ ...request, system: joinSystem(request.system, text, position) });
  };
}

function joinSystem(system: string | undefined, text: string, position: 'append' | 'prepend' | 'replace'): string {
  if (position === 'replace' || system === undefined || system === '') return text;
  return position === 'append' ? `${system}\n\n${text}` : `${text}\n\n${system}`;
}
