import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { toProviderError } from '../../model/errors/classify-error.js';
import { ProviderError } from '../../model/errors/provider-error.js';
import { redactSecret } from '../errors/classify-sdk-error.js';
import type { JsonValue } from '../../model/json.js';
import type { ProviderMetadata } from '../../model/messages.js';
import type {
  FinishReason,
  Provider,
  ProviderContentPart,
  ProviderEvent,
  ProviderRequest,
  ProviderToolCall,
} from '../../model/provider.js';
import type { Usage } from '../../model/usage.js';
import { isRecord } from '../../util/is-record.js';
import type {
  AiSdkCallOptions,
  AiSdkFinishReason,
  AiSdkLanguageModel,
  AiSdkProviderData,
  AiSdkStreamPart,
  AiSdkUsage,
} from './language-model.js';
import { aiSdkMetadataKey, toAiSdkPrompt } from './to-ai-sdk-prompt.js';

/**
 * What {@link aiSdkProvider} takes besides the model: call settings sent with every request.
 *
 * @example
 * ```ts
 * const options: AiSdkProviderOptions = { maxOutputTokens: 2048, providerOptions: { google: { thinkingConfig: { includeThoughts: true } } } };
 * ```
 */
export type AiSdkProviderOptions = {
  /** The provider's name in logs, traces and prices. Default: the model's (`google.generative-ai` → `google`). */
  name?: string;
  /** Extra HTTP headers for every request. */
  headers?: Record<string, string>;
} & Pick<AiSdkCallOptions, 'maxOutputTokens' | 'temperature' | 'topP' | 'topK' | 'stopSequences' | 'seed' | 'providerOptions'>;

const finishReasons: Record<string, FinishReason> = {
  stop: 'stop',
  length: 'length',
  'content-filter': 'content-filter',
  'tool-calls': 'tool-calls',
  error: 'other',
  other: 'other',
  unknown: 'other',
};

function finishReasonOf(reason: AiSdkFinishReason): { finishReason: FinishReason; rawFinishReason?: string } {
  const unified = typeof reason === 'string' ? reason : reason.unified;
  const raw = typeof reason === 'string' ? undefined : reason.raw;
  return { finishReason: finishReasons[unified] ?? 'other', ...(raw === undefined ? {} : { rawFinishReason: raw }) };
}

/** Usage in actorloop's terms: input counts every input token, cached ones included, as the native wires report it. */
function usageOf(usage: AiSdkUsage): Usage {
  if (isRecord(usage.inputTokens) || isRecord(usage.outputTokens)) {
    const input = (usage.inputTokens ?? {}) as { total?: number; cacheRead?: number; cacheWrite?: number };
    const output = (usage.outputTokens ?? {}) as { total?: number; reasoning?: number };
    const inputTokens = input.total ?? 0;
    const outputTokens = output.total ?? 0;
    return {
      inputTokens,
      outputTokens,
      totalTokens: inputTokens + outputTokens,
      ...(input.cacheRead ? { cachedInputTokens: input.cacheRead } : {}),
      ...(input.cacheWrite ? { cacheCreationInputTokens: input.cacheWrite } : {}),
      ...(output.reasoning ? { reasoningTokens: output.reasoning } : {}),
    };
  }
  const flat = usage as {
    inputTokens?: number;
    outputTokens?: number;
    totalTokens?: number;
    reasoningTokens?: number;
    cachedInputTokens?: number;
  };
  const inputTokens = flat.inputTokens ?? 0;
  const outputTokens = flat.outputTokens ?? 0;
  return {
    inputTokens,
    outputTokens,
    totalTokens: flat.totalTokens ?? inputTokens + outputTokens,
    ...(flat.cachedInputTokens ? { cachedInputTokens: flat.cachedInputTokens } : {}),
    ...(flat.reasoningTokens ? { reasoningTokens: flat.reasoningTokens } : {}),
  };
}

/** A part's AI SDK metadata as kept in the history, under its own key. */
function keptMetadata(data: AiSdkProviderData | undefined): { providerMetadata?: ProviderMetadata } {
  if (!data || Object.keys(data).length === 0) return {};
  // JSON as the model gave it: a thought signature is a string, kept byte for byte.
  return { providerMetadata: { [aiSdkMetadataKey]: JSON.parse(JSON.stringify(data)) as JsonValue } };
}

/**
 * A failure of the AI SDK's classes (`APICallError`: `statusCode`, `responseHeaders`,
 * `isRetryable`) in the shape the machine classifies: status, headers (`retry-after`), the
 * provider's error body, context-length messages. Never retried here: the machine retries.
 */
export function aiSdkError(error: unknown): ProviderError {
  if (ProviderError.isInstance(error)) return error;
  // A stream event that is not JSON, or a stream that stopped before its finish reason: the answer
  // was garbled or cut on the way — a broken transfer, retried as the native providers retry it.
  if (isRecord(error) && (error.name === 'AI_JSONParseError' || error.name === 'AI_InvalidResponseDataError')) {
    return new ProviderError(`the response is incomplete: ${typeof error.message === 'string' ? error.message : String(error)}`, {
      code: 'incomplete_stream',
      retryable: true,
      cause: error,
    });
  }
  if (!isRecord(error) || (error.statusCode === undefined && error.isRetryable === undefined)) return toProviderError(error);
  const message = typeof error.message === 'string' ? error.message : String(error);
  // A success status with the failure underneath: the body broke on the way (provider-utils wraps a
  // connection dropped mid-stream as "Failed to process successful response", status 200) — what
  // broke it decides, and a broken transfer is retried; never the 200 taken as a bad request.
  if (typeof error.statusCode === 'number' && error.statusCode < 400) {
    const underneath = toProviderError(error.cause);
    return underneath.code === 'unknown'
      ? new ProviderError(`the response is incomplete: ${message}`, { code: 'incomplete_stream', retryable: true, cause: error })
      : new ProviderError(`${message}: ${underneath.message}`, { code: underneath.code, retryable: underneath.retryable, cause: error });
  }
  let body: unknown;
  if (typeof error.responseBody === 'string') {
    try {
      body = JSON.parse(error.responseBody) as unknown;
    } catch {
      body = undefined;
    }
  }
  const shaped = Object.assign(new Error(message), {
    name: typeof error.name === 'string' && error.name !== 'Error' ? error.name : 'APICallError',
    ...(typeof error.statusCode === 'number' ? { status: error.statusCode } : {}),
    ...(isRecord(error.responseHeaders) ? { headers: error.responseHeaders } : {}),
    ...(isRecord(body) && isRecord(body.error) ? { error: body.error } : {}),
    cause: error,
  });
  const classified = toProviderError(shaped);
  // Bedrock answers a key it does not know with a 403 that names the error in a header: the
  // credentials are wrong (fix the key), not the account's permissions (fix the policy).
  const amazonType = isRecord(error.responseHeaders) ? error.responseHeaders['x-amzn-errortype'] : undefined;
  if (classified.code === 'permission' && typeof amazonType === 'string' && amazonType.startsWith('UnrecognizedClientException')) {
    return new ProviderError(classified.message, { code: 'authentication', retryable: false, status: 403, cause: error });
  }
  // No status: the request never got an answer (the SDK marks a failed fetch retryable).
  if (typeof error.statusCode !== 'number' && error.isRetryable === true && classified.code === 'unknown') {
    return new ProviderError(message, { code: 'network', retryable: true, cause: error });
  }
  return classified;
}

/** Request headers whose values are credentials (the scheme of an `authorization` value is not secret). */
const credentialHeaders = new Set(['authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key']);

/**
 * The credentials a model sends. The specification carries no key: the provider packages
 * (`@ai-sdk/openai`, `-openai-compatible`, `-google`, `-anthropic`, `-mistral`, …) keep theirs in
 * `config.headers()`, read here only when there is an error to report, and only when they are at
 * hand (headers made asynchronously, e.g. an access token fetched per request, are not waited for).
 * A model without them gives only the adapter's own `headers`.
 */
function credentialsOf(model: AiSdkLanguageModel, extra: Record<string, string> | undefined): string[] {
  const headers: Record<string, unknown> = { ...extra };
  try {
    const config: unknown = (model as { config?: unknown }).config;
    if (isRecord(config) && typeof config.headers === 'function') {
      const own: unknown = (config.headers as () => unknown)();
      if (isRecord(own) && typeof own.then === 'function') (own as unknown as Promise<unknown>).then(undefined, () => undefined);
      else if (isRecord(own)) Object.assign(headers, own);
    }
  } catch {
    // No key to read (a package that loads it lazily and has none): nothing it could echo either.
  }
  return Object.entries(headers).flatMap(([name, value]) => {
    if (!credentialHeaders.has(name.toLowerCase()) || typeof value !== 'string') return [];
    const secret = value.replace(/^(bearer|basic|token)\s+/i, '').trim();
    return secret.length >= 8 ? [secret] : [];
  });
}

/**
 * An error without the model's credentials in it: a server that echoes the key back (a proxy's
 * "invalid key sk-…") cannot leak it into outputs, events or snapshots — as the native providers
 * redact theirs. The AI SDK's own error underneath keeps the raw body: redacted too.
 */
function withoutCredentials(error: ProviderError, secrets: string[]): ProviderError {
  let redacted = error;
  for (const secret of secrets) redacted = redactSecret(redacted, secret);
  let inner: unknown = redacted.cause;
  for (let depth = 0; depth < 4 && isRecord(inner); depth++, inner = inner.cause) {
    for (const key of ['message', 'responseBody']) {
      const value = inner[key];
      if (typeof value === 'string' && secrets.some((secret) => value.includes(secret)))
        inner[key] = secrets.reduce((text, secret) => text.split(secret).join('[redacted]'), value);
    }
  }
  return redacted;
}

type OpenPart = { kind: 'text' | 'reasoning'; text: string; providerMetadata?: AiSdkProviderData };

/**
 * An AI SDK language model (`@ai-sdk/provider` specification v2 — ai 5's provider packages —, v3,
 * ai 6's, or v4, ai 7's) as an actorloop provider: `@ai-sdk/google`, `@ai-sdk/amazon-bedrock`, `@ai-sdk/mistral`,
 * `@ai-sdk/openai-compatible` and every other package of the specification. actorloop's machine
 * keeps doing the retries, fallback, budgets, approvals and persistence; the adapter never
 * retries. Text, reasoning and tool-call deltas stream; media parts go as the specification's file
 * parts; each part's `providerMetadata` (Gemini's thought signatures, Bedrock's reasoning
 * signatures) is kept in the history and sent back verbatim as its `providerOptions`.
 *
 * @example
 * ```ts
 * import { google } from '@ai-sdk/google';
 * import { aiSdkProvider } from 'actorloop/ai-sdk';
 *
 * const machine = createConversationMachine({ provider: aiSdkProvider(google('gemini-2.5-flash')), tools: [weather] });
 * ```
 */
export function aiSdkProvider(model: AiSdkLanguageModel, options: AiSdkProviderOptions = {}): Provider {
  if (!isRecord(model) || typeof (model as { doStream?: unknown }).doStream !== 'function') {
    throw new InvalidOptionsError('model', 'an AI SDK language model (e.g. google("gemini-2.5-flash")), with doStream', model);
  }
  const version = model.specificationVersion;
  if (version !== 'v2' && version !== 'v3' && version !== 'v4') {
    throw new InvalidOptionsError(
      'model.specificationVersion',
      "'v2' (ai 5's provider packages), 'v3' (ai 6's) or 'v4' (ai 7's); update the provider package",
      version,
    );
  }
  const name = options.name ?? (typeof model.provider === 'string' ? (model.provider.split('.')[0] ?? model.provider) : 'ai-sdk');
  // Every other option is a call setting the specification names: sent with each request as given.
  const { name: _name, ...settings } = options;
  const failure = (error: unknown) => withoutCredentials(aiSdkError(error), credentialsOf(model, options.headers));

  return {
    name,
    model: model.modelId,
    async *stream(request: ProviderRequest): AsyncIterable<ProviderEvent> {
      const call: AiSdkCallOptions = {
        ...settings,
        prompt: toAiSdkPrompt(request.messages, request.system, version),
        abortSignal: request.signal,
        ...(request.tools.length === 0
          ? {}
          : {
              tools: request.tools.map((tool) => ({
                type: 'function' as const,
                name: tool.name,
                ...(tool.description === '' ? {} : { description: tool.description }),
                inputSchema: tool.inputSchema,
              })),
              toolChoice: { type: 'auto' as const },
            }),
        ...(request.responseFormat
          ? {
              responseFormat: {
                type: 'json' as const,
                schema: request.responseFormat.schema,
                name: request.responseFormat.name,
                ...(request.responseFormat.description === undefined ? {} : { description: request.responseFormat.description }),
              },
            }
          : {}),
      };
      let reader: ReadableStreamDefaultReader<unknown>;
      try {
        const { stream } = await model.doStream(call as never);
        reader = stream.getReader();
      } catch (error) {
        throw failure(error);
      }
      const content: ProviderContentPart[] = [];
      const open = new Map<string, OpenPart & { index: number }>();
      const calls = new Map<string, string>();
      let modelId: string | undefined;
      let responseId: string | undefined;
      try {
        for (;;) {
          let next: { done: boolean; value?: unknown };
          try {
            next = await reader.read();
          } catch (error) {
            throw failure(error);
          }
          if (next.done) break;
          const part = next.value as AiSdkStreamPart;
          switch (part.type) {
            case 'response-metadata':
              if (part.modelId) modelId = part.modelId;
              if (part.id) responseId = part.id;
              break;
            case 'text-start':
            case 'reasoning-start': {
              const kind = part.type === 'text-start' ? 'text' : 'reasoning';
              // The part takes its place in the answer when it starts: order is the model's.
              content.push({ type: kind, text: '' });
              open.set(`${kind}:${part.id}`, {
                kind,
                text: '',
                index: content.length - 1,
                ...(part.providerMetadata ? { providerMetadata: part.providerMetadata } : {}),
              });
              break;
            }
            case 'text-delta':
            case 'reasoning-delta': {
              const kind = part.type === 'text-delta' ? 'text' : 'reasoning';
              let entry = open.get(`${kind}:${part.id}`);
              if (!entry) {
                content.push({ type: kind, text: '' });
                entry = { kind, text: '', index: content.length - 1 };
                open.set(`${kind}:${part.id}`, entry);
              }
              entry.text += part.delta;
              if (part.providerMetadata) entry.providerMetadata = { ...entry.providerMetadata, ...part.providerMetadata };
              if (part.delta !== '') yield { type: kind === 'text' ? 'text.delta' : 'reasoning.delta', delta: part.delta };
              break;
            }
            case 'text-end':
            case 'reasoning-end': {
              const kind = part.type === 'text-end' ? 'text' : 'reasoning';
              const entry = open.get(`${kind}:${part.id}`);
              if (entry && part.providerMetadata) entry.providerMetadata = { ...entry.providerMetadata, ...part.providerMetadata };
              break;
            }
            case 'tool-input-start':
              if (part.providerExecuted) break;
              calls.set(part.id, part.toolName);
              yield { type: 'tool.call.delta', toolCallId: part.id, name: part.toolName, argsDelta: '' };
              break;
            case 'tool-input-delta':
              if (calls.has(part.id)) yield { type: 'tool.call.delta', toolCallId: part.id, argsDelta: part.delta };
              break;
            case 'tool-call': {
              // A tool the provider ran itself (a web search) is not the machine's to run.
              if (part.providerExecuted) break;
              const toolCall: ProviderToolCall = {
                type: 'tool-call',
                toolCallId: part.toolCallId,
                toolName: part.toolName,
                argsText: part.input,
                ...keptMetadata(part.providerMetadata),
              };
              content.push(toolCall);
              break;
            }
            case 'error':
              throw failure(part.error);
            case 'finish': {
              // The provider packages report `{ unified: 'other', raw: undefined }` when the wire never
              // said why it stopped: a stream cut short (Gemini's has no end marker), not an answer.
              // Version 2 says `'unknown'` for the same, version 4 `'interrupted'`.
              const unsaid =
                typeof part.finishReason === 'object'
                  ? part.finishReason.unified === 'interrupted' ||
                    (part.finishReason.unified === 'other' && part.finishReason.raw === undefined)
                  : part.finishReason === 'unknown';
              if (unsaid) {
                throw new ProviderError('the model stream ended without saying why it stopped: the response is incomplete', {
                  code: 'incomplete_stream',
                  retryable: true,
                });
              }
              for (const entry of open.values()) {
                const kept = keptMetadata(entry.providerMetadata);
                // Reasoning with no data of its own (`reasoning_content`, Mistral's thinking) is marked as this
                // adapter's all the same, so it goes back like the rest: DeepSeek's thinking mode refuses a tool
                // loop whose earlier turns lack it.
                const marked =
                  entry.kind === 'reasoning' && entry.text !== '' && !kept.providerMetadata
                    ? { providerMetadata: { [aiSdkMetadataKey]: {} } }
                    : kept;
                content[entry.index] = { type: entry.kind, text: entry.text, ...marked };
              }
              yield {
                type: 'finish',
                // Empty texts and reasoning with nothing to send back carry nothing the history needs.
                content: content.filter(
                  (item) => item.type === 'tool-call' || ('text' in item && item.text !== '') || item.providerMetadata !== undefined,
                ),
                ...finishReasonOf(part.finishReason),
                usage: usageOf(part.usage),
                ...(modelId ? { model: modelId } : {}),
                ...(responseId ? { responseId } : {}),
              };
              return;
            }
            default:
              break;
          }
        }
      } finally {
        // Closes the connection when the machine stops reading (cancel, timeout) or the stream failed.
        reader.cancel().catch(() => undefined);
      }
      throw new ProviderError('the AI SDK model stream ended without a finish part: the response is incomplete', {
        code: 'incomplete_stream',
        retryable: true,
      });
    },
  };
}
