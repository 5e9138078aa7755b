import { isRecord } from '../../util/is-record.js';
import { childPath, type OptionSchema, option, type ResolvedOption, resolveOptionsWith } from '../../util/option-schema.js';
import type { OpenAIResponsesClientLike, OpenAIResponsesRequestParams } from '../openai-responses/wire-types.js';
import type { FetchFunction } from '../transport/fetch-function.js';
import type { OpenAIClientLike, OpenAIRequestParams } from './openai-chat-request.js';
import { type OpenAIReasoningEffort, reasoningEfforts } from './reasoning-effort.js';

function hasMethod(value: unknown, path: string[]): boolean {
  let current: unknown = value;
  for (const key of path) {
    if (!isRecord(current)) return false;
    current = current[key];
  }
  return typeof current === 'function';
}

// Left out means Chat Completions, and so does `null`: `options.api ?? 'chat'` always read it that way.
const chatApi = option.transform(
  option.matching(
    "'chat' (Chat Completions, the default) or 'responses' (the Responses API)",
    (value): value is 'chat' | null | undefined => value === undefined || value === null || value === 'chat',
  ),
  (): 'chat' => 'chat',
);

/** `params` go to the server unchecked (it judges them), copied so that later changes to the caller's object do not reach a running machine. */
function requestParams<T>(): OptionSchema<T | undefined> {
  return option.optional(option.record(option.unchecked(), 'an object of request parameters') as unknown as OptionSchema<T>);
}

// The shared options are spread into both wires' shapes in the order they were always checked, so
// the first wrong option named stays the same.
const connectionShape = {
  model: option.string({ nonEmpty: true, expected: 'a non-empty model id string' }),
  apiKey: option.secret(option.optional(option.string())),
  baseURL: option.optional(option.string({ expected: 'a URL string' })),
  fetch: option.optional(option.callable<FetchFunction>('a fetch function, e.g. createNodeFetch()')),
};

const requestShape = {
  strict: option.optional(option.boolean()),
  reasoningEffort: option.optional(option.choice([...reasoningEfforts] as OpenAIReasoningEffort[], [...reasoningEfforts].join(' | '))),
  name: option.withDefault(option.string({ nonEmpty: true }), 'openai'),
};

const responsesOnly = option.absent("no value unless api: 'responses' (it is an option of the Responses API)");
const chatOnly = option.absent(
  "no value with api: 'responses' (it is a Chat Completions option; the Responses API takes its reasoning back as encrypted items)",
);

// Unknown keys are ignored: openaiProvider never refused them, and OpenAI-compatible setups pass extras.
const objectSettings = {
  label: 'openaiProvider(options)',
  expected: 'an options object with at least `model`',
  unknownKeys: 'ignore',
} as const;

const openaiChatOptionsSchema = option.object(
  {
    api: chatApi,
    ...connectionShape,
    client: option.optional(
      option.matching('an OpenAI client (with chat.completions.create)', (value): value is OpenAIClientLike =>
        hasMethod(value, ['chat', 'completions', 'create']),
      ),
    ),
    params: requestParams<OpenAIRequestParams>(),
    stream: option.withDefault(option.boolean(), true),
    sendReasoning: option.withDefault(option.boolean(), false),
    ...requestShape,
    reasoningSummary: responsesOnly,
    store: responsesOnly,
    previousResponseId: responsesOnly,
    encryptedReasoning: responsesOnly,
  },
  objectSettings,
);

const openaiResponsesFieldsSchema = option.object(
  {
    api: option.choice(['responses']),
    ...connectionShape,
    client: option.optional(
      option.matching("an OpenAI client (with responses.create) for api: 'responses'", (value): value is OpenAIResponsesClientLike =>
        hasMethod(value, ['responses', 'create']),
      ),
    ),
    params: requestParams<OpenAIResponsesRequestParams>(),
    stream: option.withDefault(option.boolean(), true),
    ...requestShape,
    sendReasoning: chatOnly,
    // Left undefined when not given: `previousResponseId: true` may only be refused an explicit `false`.
    store: option.optional(option.boolean()),
    previousResponseId: option.withDefault(option.boolean(), false),
    // Its default depends on each request's reasoning effort, so it is decided per request.
    encryptedReasoning: option.optional(option.boolean()),
    reasoningSummary: option.optional(option.choice(['auto', 'concise', 'detailed'], 'auto | concise | detailed')),
  },
  objectSettings,
);

const storedWhenChained = option.optional(
  option.choice([true], 'true or no value with previousResponseId: true (a previous response can only be named when OpenAI stored it)'),
);

/** The `params` the Responses provider refuses (the options own how the history is kept) or merges with its own; the rest pass through. */
const responsesParamsSchema = option.optional(
  option.object(
    {
      store: option.absent('the `store` option'),
      previous_response_id: option.absent('the `previousResponseId` option (the provider takes the id from the history)'),
      conversation: option.absent('no `conversation`: actorloop keeps the history itself (or use `previousResponseId`)'),
      background: option.absent('no `background`: a run needs its answer within the request'),
      // The provider merges these two with its own, so their shape matters here.
      include: option.optional(
        option.matching(
          'an array of strings',
          (value): value is string[] => Array.isArray(value) && value.every((entry) => typeof entry === 'string'),
        ),
      ),
      reasoning: option.optional(option.matching('an object such as { effort, summary }', isRecord)),
    },
    { unknownKeys: 'ignore' },
  ),
);

// Rules between options come after every option on its own, as they always did; `store` resolves
// to whether OpenAI stores the responses.
const openaiResponsesOptionsSchema = option.transform(openaiResponsesFieldsSchema, (resolved, path) => {
  if (resolved.previousResponseId) storedWhenChained.resolve(resolved.store, childPath(path, 'store'));
  responsesParamsSchema.resolve(resolved.params, childPath(path, 'params'));
  return { ...resolved, store: resolved.store ?? resolved.previousResponseId };
});

/** The options of `openaiProvider` on Chat Completions, defaults applied. */
export type ResolvedOpenAIChatOptions = ResolvedOption<typeof openaiChatOptionsSchema>;

/** The options of `openaiProvider({ api: 'responses' })`, defaults applied; `store` is true whenever OpenAI stores responses. */
export type ResolvedOpenAIResponsesOptions = ResolvedOption<typeof openaiResponsesOptionsSchema>;

// `api` picks the wire, and with it which client shape and which options are allowed; anything but
// `api: 'responses'` (a non-object included) is checked as Chat Completions, which names a bad `api`.
const openaiOptionsSchema = option.either<ResolvedOpenAIChatOptions | ResolvedOpenAIResponsesOptions>(openaiChatOptionsSchema.expected, [
  [(value) => isRecord(value) && value.api === 'responses', openaiResponsesOptionsSchema],
  [() => true, openaiChatOptionsSchema],
]);

/**
 * The options of `openaiProvider`, resolved once for either API: each option checked, defaults
 * applied, `params` copied. Throws an `InvalidOptionsError` naming the option
 * (`openaiProvider.model`); the API key itself is never echoed.
 */
export function resolveOpenAIOptions(options: unknown): ResolvedOpenAIChatOptions | ResolvedOpenAIResponsesOptions {
  return resolveOptionsWith(openaiOptionsSchema, options, 'openaiProvider');
}
