import { openaiPromptCacheTtls, promptCacheFields } from '../openai-wire/prompt-cache-fields.js';
import type { FetchFunction } from '../transport/fetch-function.js';
import { isRecord } from '../../util/is-record.js';
import { classifyResponsesSdkError } from '../errors/classify-response-failure.js';
import { redactSecret } from '../errors/classify-sdk-error.js';
import { ProviderError } from '../../model/errors/provider-error.js';
import { fromResponsesResponse, fromResponsesStream } from '../openai-responses/from-responses-stream.js';
import { toResponsesInput, toResponsesTools } from '../openai-responses/to-responses-input.js';
import type {
  OpenAIResponsesClientLike,
  OpenAIResponsesReasoning,
  OpenAIResponsesRequestBody,
  OpenAIResponsesRequestParams,
  OpenAIResponsesResponse,
  OpenAIResponsesStreamEvent,
} from '../openai-responses/wire-types.js';
import type { Provider, ProviderEvent, ProviderRequest } from '../../model/provider.js';
import { keyToHide, openaiClient } from './openai-client.js';
import type { OpenAIReasoningEffort } from './reasoning-effort.js';
import type { ResolvedOpenAIResponsesOptions } from './validate-options.js';

/**
 * Options of `openaiProvider({ api: 'responses', … })`: the OpenAI Responses API
 * (`POST /v1/responses`).
 *
 * @example
 * ```ts
 * const options: OpenAIResponsesProviderOptions = { api: 'responses', model: 'gpt-5-mini', reasoningEffort: 'low', reasoningSummary: 'auto' };
 * ```
 */
export type OpenAIResponsesProviderOptions = {
  /** Speak the Responses API. */
  api: 'responses';
  /** The model id, e.g. `gpt-5-mini`. */
  model: string;
  /** Defaults to the `OPENAI_API_KEY` environment variable (read by the SDK). Ignored with `client`. */
  apiKey?: string;
  /** Another endpoint that speaks the Responses API (Azure OpenAI `…/openai/v1`, a proxy). Ignored with `client`. */
  baseURL?: string;
  /**
   * The `fetch` the provider's own client sends with (ignored with `client`), e.g. {@link createNodeFetch}
   * for keep-alive `node:http` connections. Defaults to the SDK's choice, Node's global `fetch`.
   */
  fetch?: FetchFunction;
  /** A ready client (`new OpenAI(...)`); its own retry setting is overridden per request, as the machine retries. */
  client?: OpenAIResponsesClientLike;
  /**
   * Extra request parameters (`max_output_tokens`, `text`, `tool_choice`, …). They cannot replace
   * what the provider sets itself (`model`, `input`, `tools`, `stream`); `include` and `reasoning`
   * are merged with it; `store`, `previous_response_id`, `background` and `conversation` are
   * refused (use the options below).
   */
  params?: OpenAIResponsesRequestParams;
  /** Stream the response (default `true`); `false` sends one non-streaming request. */
  stream?: boolean;
  /**
   * `strict` of every function tool (default `false`, as on Chat Completions; the Responses API
   * itself would default to strict mode, which makes every optional parameter required).
   */
  strict?: boolean;
  /** `reasoning.effort` for reasoning models. */
  reasoningEffort?: OpenAIReasoningEffort;
  /**
   * `reasoning.summary`: stream a summary of the reasoning as `reasoning.delta` events. OpenAI
   * produces no raw reasoning text; without a summary, reasoning shows only as `reasoningTokens`.
   */
  reasoningSummary?: 'auto' | 'concise' | 'detailed';
  /**
   * Let OpenAI store responses (`store: true`; default `false`, stateless: the whole history goes
   * with every request and nothing needs to live on the server).
   */
  store?: boolean;
  /**
   * Chain requests with `previous_response_id` (default `false`): each request names the last
   * response of the history and sends only the messages after it; OpenAI keeps the rest.
   * Implies `store: true`.
   */
  previousResponseId?: boolean;
  /**
   * Ask for reasoning items with `encrypted_content` (`include: ['reasoning.encrypted_content']`)
   * so they can go back in the history without being stored. Default: on for OpenAI reasoning
   * models (`o1`, `o3`, `o4-mini`, `gpt-5*` except the `-chat` ones, `codex-*`) or when
   * `reasoningEffort` (here or from the `reasoningEffort()` middleware) or `reasoningSummary` is
   * set, unless `previousResponseId` is on. Other models
   * refuse it ("Encrypted content is not supported with this model"); set it for a reasoning model
   * behind a name the rule does not know (an Azure deployment).
   */
  encryptedReasoning?: boolean;
  /** The provider's name in logs and errors (default `openai`). */
  name?: string;
};

/**
 * Whether a model id names an OpenAI reasoning model, which can return its reasoning encrypted.
 * A router prefix (`openai/gpt-5`) is ignored; the `-chat` variants of gpt-5 do not reason.
 *
 * @example
 * ```ts
 * isOpenAIReasoningModel('gpt-5-nano'); // true
 * isOpenAIReasoningModel('gpt-4o'); // false
 * ```
 */
export function isOpenAIReasoningModel(model: string): boolean {
  const id = model.toLowerCase().slice(model.lastIndexOf('/') + 1);
  if (id.includes('-chat')) return false;
  return /^(o\d|gpt-5|codex)/.test(id);
}

/** `include` of a request: the user's entries, and encrypted reasoning when it is asked for. */
function includeOf(options: ResolvedOpenAIResponsesOptions, request: ProviderRequest): string[] {
  const include = [...(options.params?.include ?? [])];
  const effort = options.reasoningEffort ?? request.reasoningEffort;
  const encrypted =
    options.encryptedReasoning ??
    (!options.previousResponseId &&
      (isOpenAIReasoningModel(options.model) || effort !== undefined || options.reasoningSummary !== undefined));
  if (encrypted && !include.includes('reasoning.encrypted_content')) include.push('reasoning.encrypted_content');
  return include;
}

/** `reasoning` of a request: `params.reasoning` with the effort (the provider's, else the middleware's) and summary set. */
function reasoningOf(options: ResolvedOpenAIResponsesOptions, request: ProviderRequest): OpenAIResponsesReasoning | undefined {
  const effort = options.reasoningEffort ?? request.reasoningEffort;
  const summary = options.reasoningSummary;
  if (options.params?.reasoning === undefined && effort === undefined && summary === undefined) return undefined;
  return { ...options.params?.reasoning, ...(effort === undefined ? {} : { effort }), ...(summary === undefined ? {} : { summary }) };
}

/** `text` of a request: the structured answer the machine asks for as `text.format`, unless `params.text.format` says otherwise. */
function textOf(options: ResolvedOpenAIResponsesOptions, request: ProviderRequest): OpenAIResponsesRequestParams['text'] {
  const text = options.params?.text;
  const format = request.responseFormat;
  if (format === undefined || text?.format !== undefined) return text;
  return {
    ...text,
    format: {
      type: 'json_schema',
      name: format.name,
      ...(format.description === undefined ? {} : { description: format.description }),
      schema: format.schema,
      strict: format.strict,
    },
  };
}

/** The request body for one provider request. */
function requestBody(options: ResolvedOpenAIResponsesOptions, request: ProviderRequest): OpenAIResponsesRequestBody {
  const { store } = options;
  const { input, previousResponseId } = toResponsesInput(request.messages, { stored: store, chain: options.previousResponseId });
  const tools = toResponsesTools(request.tools, options.strict);
  const reasoning = reasoningOf(options, request);
  const include = includeOf(options, request);
  const text = textOf(options, request);
  return {
    // The user's own `params` win over the machine's `promptCache`.
    ...promptCacheFields(request.promptCache),
    ...options.params,
    model: options.model,
    input,
    // Instructions are not carried over by previous_response_id, so they go with every request.
    ...(request.system === undefined || request.system === '' ? {} : { instructions: request.system }),
    ...(tools.length > 0 ? { tools } : {}),
    ...(reasoning === undefined ? {} : { reasoning }),
    ...(include.length > 0 ? { include } : {}),
    ...(text === undefined ? {} : { text }),
    store,
    ...(previousResponseId === undefined ? {} : { previous_response_id: previousResponseId }),
    stream: options.stream,
  };
}

/** What the SDK returns for `stream: true`: an async iterable of events. */
function isStream(value: unknown): value is AsyncIterable<OpenAIResponsesStreamEvent> {
  return isRecord(value) && Symbol.asyncIterator in value;
}

/**
 * A `TypeError` thrown by the SDK while it reads a whole (non-streamed) response means the body
 * was not a response object — openai 7 reads an empty 200 body as nothing and then fails on it
 * (`'object' in undefined`): a broken transfer, retried like a stream cut short. Connection
 * failures arrive as the SDK's own errors, not as a bare `TypeError`.
 */
async function unreadable<T>(created: PromiseLike<T>, streaming: boolean): Promise<T> {
  try {
    return await created;
  } catch (error) {
    if (streaming || !(error instanceof TypeError)) throw error;
    throw new ProviderError(`the OpenAI SDK could not read the response: ${error.message}`, {
      code: 'incomplete_stream',
      retryable: true,
      cause: error,
    });
  }
}

/**
 * The Responses API side of `openaiProvider`: stateless by default (`store: false`, the whole
 * history as `input` items, reasoning items round-tripped as `encrypted_content`), or chained with
 * `previous_response_id`. The SDK's retries are off: the machine retries, each attempt a visible
 * state. Called by `openaiProvider` with its options resolved (a copy, so options changed after
 * creation do not change the requests of a running machine).
 */
export function openaiResponsesProvider(options: ResolvedOpenAIResponsesOptions): Provider {
  const { apiKey, baseURL, stream: streaming, store: keepIds } = options;
  const getClient = openaiClient<OpenAIResponsesClientLike>(options.client, { apiKey, baseURL, fetch: options.fetch });

  return {
    name: options.name,
    model: options.model,
    promptCacheTtls: openaiPromptCacheTtls,
    mediaTokens: 'openai',
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      const { signal } = request;
      let openai: OpenAIResponsesClientLike | undefined;
      try {
        openai = await getClient();
        const response = await unreadable(openai.responses.create(requestBody(options, request), { signal, maxRetries: 0 }), streaming);
        const read = { keepIds, signal };
        if (streaming) {
          if (!isStream(response)) {
            throw new ProviderError('the OpenAI client returned no stream for a `stream: true` request', {
              code: 'unknown',
              retryable: false,
            });
          }
          yield* fromResponsesStream(response, read);
        } else {
          // openai 7 hands an empty 200 body back as nothing (6 threw a parse error): a broken transfer.
          if (response === undefined || response === null || response === '') {
            throw new ProviderError('the response body was empty', { code: 'incomplete_stream', retryable: true });
          }
          if (!isRecord(response) || (!Array.isArray(response.output) && typeof response.status !== 'string')) {
            throw new ProviderError('the OpenAI client returned no response object', { code: 'unknown', retryable: false });
          }
          yield* fromResponsesResponse(response as OpenAIResponsesResponse, read);
        }
      } catch (error) {
        throw redactSecret(
          classifyResponsesSdkError(error, signal),
          keyToHide(openai, { apiKey, clientGiven: options.client !== undefined }),
        );
      }
    },
  };
}
