import type { FetchFunction } from '../transport/fetch-function.js';
import { classifySdkError, redactSecret } from '../errors/classify-sdk-error.js';
import { hasApiKey, type KeySource, missingApiKeyError } from '../errors/missing-api-key.js';
import { lazySdkClient, notInstalled } from '../optional-sdk.js';
import { ProviderError } from '../../model/errors/provider-error.js';
import { option, resolveOptionsWith } from '../../util/option-schema.js';
import type { Provider, ProviderEvent, ProviderRequest, ReasoningEffort } from '../../model/provider.js';
import { withCacheBreakpoints } from './cache-breakpoints.js';
import { fromAnthropicMessage } from './from-anthropic-message.js';
import { fromAnthropicStream } from './from-anthropic-stream.js';
import { toAnthropicMessages, toAnthropicTools } from './to-anthropic-messages.js';
import {
  type AnthropicStructuredOutput,
  answerTool,
  answerToolAsText,
  structuredAnswerFields,
  structuredOutputMode,
} from './structured-answer.js';
import type { AnthropicClientLike, AnthropicRequestParams, AnthropicThinkingConfig } from './wire-types.js';

/** Where `anthropicProvider`'s own client finds its key (the SDK also takes a bearer token). */
const anthropicKeySource: KeySource = { provider: 'anthropicProvider', envVars: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'] };

/**
 * Options of {@link anthropicProvider}.
 *
 * @example
 * ```ts
 * const options: AnthropicProviderOptions = { model: 'claude-sonnet-4-5', maxTokens: 4096, stream: false };
 * const provider = anthropicProvider(options);
 * ```
 */
export type AnthropicProviderOptions = {
  /** The model id, e.g. `claude-sonnet-4-5`. */
  model: string;
  /** Used only when the provider builds its own client; defaults to `ANTHROPIC_API_KEY`. */
  apiKey?: string;
  /** Used only when the provider builds its own client, e.g. a proxy or a test server. */
  baseURL?: string;
  /**
   * The `fetch` the provider's own client sends with (ignored with `client`), e.g. {@link createNodeFetch}
   * for keep-alive `node:http` connections. Defaults to the SDK's choice, Node's global `fetch`.
   */
  fetch?: FetchFunction;
  /**
   * A client you built yourself (`new Anthropic(...)`). Its own retries are switched off per
   * request: the conversation machine retries, so every attempt is a visible state.
   */
  client?: AnthropicClientLike;
  /** `max_tokens` of every request; the Messages API requires it. */
  maxTokens: number;
  /** Extended thinking, passed through, e.g. `{ type: 'enabled', budget_tokens: 2048 }`. */
  thinking?: AnthropicThinkingConfig;
  /** Further request parameters, passed through. */
  params?: AnthropicRequestParams;
  /**
   * How a machine's `output` schema is asked for: `native` (`output_config.format`), `tool` (a
   * forced final-answer tool), or `auto` (default: native for Claude 4.5+ and Opus 4.1 ids).
   */
  structuredOutput?: AnthropicStructuredOutput;
  /** Stream the response (default `true`); `false` uses a single JSON response. */
  stream?: boolean;
  /**
   * The SDK's own per-attempt timeout in milliseconds. The machine's `requestTimeoutMs` is the
   * limit that matters; this exists because, without any timeout set, the SDK refuses
   * non-streaming requests whose `max_tokens` could take more than ten minutes. A client the
   * provider builds gets ten minutes unless this says otherwise.
   */
  timeoutMs?: number;
};

type AnthropicModule = typeof import('@anthropic-ai/sdk');

const defaultSdkTimeoutMs = 10 * 60 * 1000;

async function* fromEvents(events: ProviderEvent[]): AsyncGenerator<ProviderEvent> {
  yield* events;
}

/** Thinking budgets for a neutral reasoning effort; Anthropic's smallest budget is 1,024 tokens. */
const thinkingBudgets: Record<ReasoningEffort, number> = { minimal: 1024, low: 2048, medium: 8192, high: 24_576 };

/**
 * The `thinking` field: the provider's own option wins; otherwise a request's reasoning effort
 * (from middleware) becomes a budget, kept below `max_tokens` as the API requires — and left out
 * when `max_tokens` leaves no room for the smallest budget.
 *
 * @example
 * ```ts
 * thinkingParam(undefined, 'low', 4096); // { thinking: { type: 'enabled', budget_tokens: 2048 } }
 * ```
 */
export function thinkingParam(
  thinking: AnthropicThinkingConfig | undefined,
  effort: ReasoningEffort | undefined,
  maxTokens: number,
): { thinking?: AnthropicThinkingConfig } {
  if (thinking !== undefined) return { thinking };
  if (effort === undefined) return {};
  const budget = Math.min(thinkingBudgets[effort], maxTokens - 1);
  return budget < 1024 ? {} : { thinking: { type: 'enabled', budget_tokens: budget } };
}

function isAnthropicClient(value: unknown): value is AnthropicClientLike {
  const messages: unknown = (value as { messages?: unknown } | null | undefined)?.messages;
  return typeof messages === 'object' && messages !== null && typeof (messages as { create?: unknown }).create === 'function';
}

// The paths are bare (`maxTokens`, not `anthropicProvider.maxTokens`), as they always were. Unknown
// keys are ignored, not refused: anthropicProvider never refused them.
const anthropicOptionsSchema = option.object(
  {
    model: option.matching(
      'a non-empty model id such as "claude-sonnet-4-5"',
      (value): value is string => typeof value === 'string' && value.trim() !== '',
    ),
    maxTokens: option.integer({ minimum: 1, expected: 'a positive integer (the Messages API requires max_tokens)' }),
    stream: option.withDefault(option.boolean(), true),
    structuredOutput: option.withDefault(
      option.choice<AnthropicStructuredOutput>(['auto', 'native', 'tool'], "'auto' | 'native' | 'tool'"),
      'auto',
    ),
    // Left undefined when not given: requests then keep the SDK's timeout (see `defaultSdkTimeoutMs`).
    timeoutMs: option.optional(
      option.matching(
        'a positive number of milliseconds',
        (value): value is number => typeof value === 'number' && Number.isFinite(value) && value > 0,
      ),
    ),
    apiKey: option.secret(option.optional(option.string())),
    fetch: option.optional(option.callable<FetchFunction>('a fetch function, e.g. createNodeFetch()')),
    client: option.optional(option.matching('an @anthropic-ai/sdk client (new Anthropic(...))', isAnthropicClient)),
    // Passed through to the SDK and the API, which judge them.
    baseURL: option.unchecked<string | undefined>(),
    thinking: option.unchecked<AnthropicThinkingConfig | undefined>(),
    params: option.unchecked<AnthropicRequestParams | undefined>(),
  },
  { label: 'anthropicProvider(options)', expected: 'an options object with model and maxTokens', unknownKeys: 'ignore' },
);

/**
 * A provider for Anthropic's Messages API through the official `@anthropic-ai/sdk` (an optional
 * peer dependency: it is loaded only when no `client` is given). The history is converted with
 * thinking blocks and their signatures kept verbatim, tool results grouped into one user message
 * and roles made to alternate; responses, streamed or not, become provider events whose `finish`
 * carries the whole content in order. Failures are thrown as classified {@link ProviderError}s:
 * an `overloaded_error` inside a 200 stream and a stream cut before `message_stop` are retryable.
 *
 * @example
 * ```ts
 * const machine = createConversationMachine({
 *   provider: anthropicProvider({
 *     model: 'claude-sonnet-4-5',
 *     apiKey: process.env.ANTHROPIC_API_KEY,
 *     maxTokens: 4096,
 *     thinking: { type: 'enabled', budget_tokens: 2048 },
 *   }),
 *   tools: [add],
 * });
 * ```
 */
export function anthropicProvider(options: AnthropicProviderOptions): Provider {
  const resolved = resolveOptionsWith(anthropicOptionsSchema, options);
  const {
    model,
    apiKey,
    baseURL,
    maxTokens,
    thinking,
    params,
    stream: streaming,
    structuredOutput,
    timeoutMs,
    client: userClient,
  } = resolved;
  const getClient: () => Promise<AnthropicClientLike> = userClient
    ? () => Promise.resolve(userClient)
    : lazySdkClient(
        () => import('@anthropic-ai/sdk').catch(notInstalled),
        (sdk: AnthropicModule) =>
          new sdk.default({
            ...(apiKey === undefined ? {} : { apiKey }),
            ...(baseURL === undefined ? {} : { baseURL }),
            ...(resolved.fetch === undefined ? {} : { fetch: resolved.fetch }),
            maxRetries: 0,
            timeout: timeoutMs ?? defaultSdkTimeoutMs,
          }),
        'anthropicProvider needs the @anthropic-ai/sdk package: install it, or pass `client`',
      );

  return {
    name: 'anthropic',
    model,
    promptCacheTtls: ['5m', '1h'],
    mediaTokens: 'anthropic',
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      try {
        const client = await getClient();
        const { system, messages } = toAnthropicMessages(request.messages, request.system);
        const format = request.responseFormat;
        const mode = format && structuredOutputMode(structuredOutput, model);
        const thinkingField = thinkingParam(thinking, request.reasoningEffort, maxTokens);
        const tools = [...toAnthropicTools(request.tools), ...(format && mode === 'tool' ? [answerTool(format)] : [])];
        const prompt = {
          messages,
          ...(system === undefined ? {} : { system }),
          ...(tools.length === 0 ? {} : { tools }),
        };
        const body = {
          ...params,
          model,
          max_tokens: maxTokens,
          ...(request.promptCache ? withCacheBreakpoints(prompt, request.promptCache) : prompt),
          ...thinkingField,
          ...(format && mode
            ? structuredAnswerFields(format, mode, { hasTools: request.tools.length > 0, thinking: thinkingField.thinking, params })
            : {}),
        };
        const requestOptions = {
          signal: request.signal,
          maxRetries: 0,
          ...(timeoutMs === undefined ? {} : { timeout: timeoutMs }),
        };
        let events: AsyncIterable<ProviderEvent>;
        if (streaming) {
          events = fromAnthropicStream(await client.messages.create({ ...body, stream: true }, requestOptions), { signal: request.signal });
        } else {
          events = fromEvents(fromAnthropicMessage(await client.messages.create({ ...body, stream: false }, requestOptions)));
        }
        yield* format && mode === 'tool' ? answerToolAsText(events, format.name) : events;
      } catch (error) {
        const failure = classifySdkError(error, request.signal);
        // The SDK builds its client without a key and refuses only when it is about to send, with a
        // message that names its own auth options; a failure short of any response means that here.
        if (
          !userClient &&
          !ProviderError.isInstance(error) &&
          failure.code === 'unknown' &&
          failure.status === undefined &&
          !hasApiKey(apiKey, anthropicKeySource)
        )
          throw missingApiKeyError(anthropicKeySource, error);
        throw redactSecret(failure, apiKey);
      }
    },
  };
}
