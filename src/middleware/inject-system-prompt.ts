import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { ProviderRequest } from '../model/provider.js';
import type { RequestMiddleware } from './request-middleware.js';
import { option, resolveOptionsWith } from '../util/option-schema.js';

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

type Position = NonNullable<InjectSystemPromptOptions['position']>;
const positions: readonly unknown[] = ['append', 'prepend', 'replace'] satisfies Position[];

const buildSchema = option.callable<(request: ProviderRequest) => string | undefined>('a function (request) => string');

// Unknown keys are ignored, not refused: injectSystemPrompt never refused them. A `null` position
// means the default, as `options.position ?? 'append'` always read it.
const injectSystemPromptOptionsSchema = option.object(
  {
    position: option.transform(
      option.matching(
        "'append' | 'prepend' | 'replace'",
        (value): value is Position | null | undefined => value == null || positions.includes(value),
      ),
      (position): Position => position ?? 'append',
    ),
  },
  { label: 'injectSystemPrompt(options)', expected: 'an object { position? }', unknownKeys: 'ignore' },
);

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
  const buildText = resolveOptionsWith(buildSchema, build, 'injectSystemPrompt(build)');
  const { position } = resolveOptionsWith(injectSystemPromptOptionsSchema, options, 'injectSystemPrompt');
  return (request, next) => {
    const text = buildText(request);
    if (text === undefined || text === '') return next(request);
    // The function's answer is only known per request, so it is checked there.
    if (typeof text !== 'string') throw new InvalidOptionsError('injectSystemPrompt(build)', 'a function returning a string', text);
    return next({ ...request, system: joinSystem(request.system, text, position) });
  };
}

function joinSystem(system: string | undefined, text: string, position: Position): string {
  if (position === 'replace' || system === undefined || system === '') return text;
  return position === 'append' ? `${system}\n\n${text}` : `${text}\n\n${system}`;
}
