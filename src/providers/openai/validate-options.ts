import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { isRecord } from '../../util/is-record.js';
import { reasoningEfforts } from './reasoning-effort.js';

/** Options that only one of the two APIs has, and what to say when given to the other. */
const chatOnly = ['sendReasoning'] as const;
const responsesOnly = ['reasoningSummary', 'store', 'previousResponseId', 'encryptedReasoning'] as const;

function hasMethod(value: unknown, path: string[]): boolean {
  let current: unknown = value;
  for (const key of path) {
    if (!isRecord(current)) return false;
    current = current[key];
  }
  return typeof current === 'function';
}

/**
 * Checks the options every `openaiProvider` has, whichever API it speaks: the options object,
 * `api`, `model`, `apiKey`, `baseURL`, `client` (shaped for its API), `params`, `stream`, `strict`,
 * `reasoningEffort`, and that no option of the other API is given. Throws an
 * {@link InvalidOptionsError} naming the option; the key itself is never echoed.
 */
export function validateOpenAIOptions(options: unknown): asserts options is Record<string, unknown> {
  if (!isRecord(options)) throw new InvalidOptionsError('openaiProvider(options)', 'an options object with at least `model`', options);
  const api = options.api ?? 'chat';
  if (api !== 'chat' && api !== 'responses') {
    throw new InvalidOptionsError('openaiProvider.api', "'chat' (Chat Completions, the default) or 'responses' (the Responses API)", api);
  }
  if (typeof options.model !== 'string' || options.model === '') {
    throw new InvalidOptionsError('openaiProvider.model', 'a non-empty model id string', options.model);
  }
  // The key itself is never echoed, even when it has the wrong type.
  if (options.apiKey !== undefined && typeof options.apiKey !== 'string') {
    throw new InvalidOptionsError('openaiProvider.apiKey', 'a string');
  }
  if (options.baseURL !== undefined && typeof options.baseURL !== 'string') {
    throw new InvalidOptionsError('openaiProvider.baseURL', 'a URL string', options.baseURL);
  }
  if (options.fetch !== undefined && typeof options.fetch !== 'function') {
    throw new InvalidOptionsError('openaiProvider.fetch', 'a fetch function, e.g. createNodeFetch()', options.fetch);
  }
  if (api === 'chat' && options.client !== undefined && !hasMethod(options.client, ['chat', 'completions', 'create'])) {
    throw new InvalidOptionsError('openaiProvider.client', 'an OpenAI client (with chat.completions.create)', options.client);
  }
  if (api === 'responses' && options.client !== undefined && !hasMethod(options.client, ['responses', 'create'])) {
    throw new InvalidOptionsError('openaiProvider.client', "an OpenAI client (with responses.create) for api: 'responses'", options.client);
  }
  if (options.params !== undefined && (!isRecord(options.params) || Array.isArray(options.params))) {
    throw new InvalidOptionsError('openaiProvider.params', 'an object of request parameters', options.params);
  }
  if (options.stream !== undefined && typeof options.stream !== 'boolean') {
    throw new InvalidOptionsError('openaiProvider.stream', 'a boolean', options.stream);
  }
  if (api === 'chat' && options.sendReasoning !== undefined && typeof options.sendReasoning !== 'boolean') {
    throw new InvalidOptionsError('openaiProvider.sendReasoning', 'a boolean', options.sendReasoning);
  }
  if (options.strict !== undefined && typeof options.strict !== 'boolean') {
    throw new InvalidOptionsError('openaiProvider.strict', 'a boolean', options.strict);
  }
  if (options.reasoningEffort !== undefined && !reasoningEfforts.has(options.reasoningEffort as string)) {
    throw new InvalidOptionsError('openaiProvider.reasoningEffort', [...reasoningEfforts].join(' | '), options.reasoningEffort);
  }
  if (options.name !== undefined && (typeof options.name !== 'string' || options.name === '')) {
    throw new InvalidOptionsError('openaiProvider.name', 'a non-empty string', options.name);
  }
  const foreign = api === 'chat' ? responsesOnly : chatOnly;
  for (const key of foreign) {
    if (options[key] === undefined) continue;
    throw new InvalidOptionsError(
      `openaiProvider.${key}`,
      api === 'chat'
        ? "no value unless api: 'responses' (it is an option of the Responses API)"
        : "no value with api: 'responses' (it is a Chat Completions option; the Responses API takes its reasoning back as encrypted items)",
      options[key],
    );
  }
}
