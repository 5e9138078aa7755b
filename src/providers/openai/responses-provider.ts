import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { isRecord } from '../../util/is-record.js';
import { classifyResponsesSdkError } from '../errors/classify-response-failure.js';
import { redactSecret } from '../errors/classify-sdk-error.js';
import { ProviderError } from '../errors/provider-error.js';
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
import type { Provider, ProviderEvent, ProviderRequest } from '../provider.js';
import { keyToHide, openaiClient } from './openai-client.js';
import type { OpenAIReasoningEffort } from './reasoning-effort.js';

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
   * `reasoningEffort` / `reasoningSummary` is set, unless `previousResponseId` is on. Other models
   * refuse it ("Encrypted content is not supported with this model"); set it for a reasoning model
   * behind a name the rule does not know (an Azure deployment).
   */
  encryptedReasoning?: boolean;
  /** The provider's name in logs and errors (default `openai`). */
  name?: string;
};

/** Parameters that would change how the history is kept, which the options own. */
const refusedParams: Record<string, string> = {
  store: 'the `store` option',
  previous_response_id: 'the `previousResponseId` option (the provider takes the id from the history)',
  conversation: 'no `conversation`: actorloop keeps the history itself (or use `previousResponseId`)',
  background: 'no `background`: a run needs its answer within the request',
};

const reasoningSummaries: ReadonlySet<string> = new Set(['auto', 'concise', 'detailed']);

function validateResponsesOptions(options: OpenAIResponsesProviderOptions): void {
  for (const key of ['store', 'previousResponseId', 'encryptedReasoning'] as const) {
    if (options[key] !== undefined && typeof options[key] !== 'boolean') {
      throw new InvalidOptionsError(`openaiProvider.${key}`, 'a boolean', options[key]);
    }
  }
  if (options.reasoningSummary !== undefined && !reasoningSummaries.has(options.reasoningSummary)) {
    throw new InvalidOptionsError('openaiProvider.reasoningSummary', [...reasoningSummaries].join(' | '), options.reasoningSummary);
  }
  if (options.previousResponseId === true && options.store === false) {
    throw new InvalidOptionsError(
      'openaiProvider.store',
      'true or no value with previousResponseId: true (a previous response can only be named when OpenAI stored it)',
      false,
    );
  }
  for (const [key, instead] of Object.entries(refusedParams)) {
    if (options.params !== undefined && options.params[key] !== undefined) {
      throw new InvalidOptionsError(`openaiProvider.params.${key}`, instead, options.params[key]);
    }
  }
  const include = options.params?.include;
  if (include !== undefined && !(Array.isArray(include) && include.every((entry) => typeof entry === 'string'))) {
    throw new InvalidOptionsError('openaiProvider.params.include', 'an array of strings', include);
  }
  const reasoning = options.params?.reasoning;
  if (reasoning !== undefined && !isRecord(reasoning)) {
    throw new InvalidOptionsError('openaiProvider.params.reasoning', 'an object such as { effort, summary }', reasoning);
  }
}

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

type Settings = {
  model: string;
  params: OpenAIResponsesRequestParams;
  streaming: boolean;
  store: boolean;
  chain: boolean;
  include: string[];
  reasoning: OpenAIResponsesReasoning | undefined;
  strict: boolean | undefined;
};

function settingsOf(options: OpenAIResponsesProviderOptions): Settings {
  const { model, reasoningEffort, reasoningSummary } = options;
  const params = options.params ?? {};
  const chain = options.previousResponseId ?? false;
  const encrypted =
    options.encryptedReasoning ??
    (!chain && (isOpenAIReasoningModel(model) || reasoningEffort !== undefined || reasoningSummary !== undefined));
  const include = [...(params.include ?? [])];
  if (encrypted && !include.includes('reasoning.encrypted_content')) include.push('reasoning.encrypted_content');
  const reasoning =
    params.reasoning !== undefined || reasoningEffort !== undefined || reasoningSummary !== undefined
      ? {
          ...params.reasoning,
          ...(reasoningEffort === undefined ? {} : { effort: reasoningEffort }),
          ...(reasoningSummary === undefined ? {} : { summary: reasoningSummary }),
        }
      : undefined;
  return {
    model,
    params,
    streaming: options.stream ?? true,
    store: chain || (options.store ?? false),
    chain,
    include,
    reasoning,
    strict: options.strict,
  };
}

/** The request body for one provider request. */
function requestBody(request: ProviderRequest, settings: Settings): OpenAIResponsesRequestBody {
  const { input, previousResponseId } = toResponsesInput(request.messages, { stored: settings.store, chain: settings.chain });
  const tools = toResponsesTools(request.tools, settings.strict);
  return {
    ...settings.params,
    model: settings.model,
    input,
    // Instructions are not carried over by previous_response_id, so they go with every request.
    ...(request.system === undefined || request.system === '' ? {} : { instructions: request.system }),
    ...(tools.length > 0 ? { tools } : {}),
    ...(settings.reasoning === undefined ? {} : { reasoning: settings.reasoning }),
    ...(settings.include.length > 0 ? { include: settings.include } : {}),
    store: settings.store,
    ...(previousResponseId === undefined ? {} : { previous_response_id: previousResponseId }),
    stream: settings.streaming,
  };
}

/** What the SDK returns for `stream: true`: an async iterable of events. */
function isStream(value: unknown): value is AsyncIterable<OpenAIResponsesStreamEvent> {
  return isRecord(value) && Symbol.asyncIterator in value;
}

/**
 * The Responses API side of `openaiProvider`: stateless by default (`store: false`, the whole
 * history as `input` items, reasoning items round-tripped as `encrypted_content`), or chained with
 * `previous_response_id`. The SDK's retries are off: the machine retries, each attempt a visible
 * state. Called by `openaiProvider` once the common options are checked.
 */
export function openaiResponsesProvider(options: OpenAIResponsesProviderOptions): Provider {
  validateResponsesOptions(options);
  const settings = settingsOf(options);
  const { apiKey, baseURL } = options;
  const getClient = openaiClient<OpenAIResponsesClientLike>(options.client, { apiKey, baseURL });

  return {
    name: options.name ?? 'openai',
    async *stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
      const { signal } = request;
      let openai: OpenAIResponsesClientLike | undefined;
      try {
        openai = await getClient();
        const body = requestBody(request, settings);
        const response = await openai.responses.create(body, { signal, maxRetries: 0 });
        const read = { keepIds: settings.store, signal };
        if (settings.streaming) {
          if (!isStream(response)) {
            throw new ProviderError('the OpenAI client returned no stream for a `stream: true` request', {
              code: 'unknown',
              retryable: false,
            });
          }
          yield* fromResponsesStream(response, read);
        } else {
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
