import type { MediaTokenRule } from './media-tokens.js';
import type { Message, ProviderMetadata, TextPart, ReasoningPart, RedactedReasoningPart } from './messages.js';
import type { Usage } from './usage.js';

/**
 * A tool as a provider describes it to the model: a tool without its `execute`, since the
 * provider only ever sends it.
 *
 * @example
 * ```ts
 * const described: ToolDescription = { name: add.name, description: add.description, inputSchema: add.inputSchema };
 * ```
 */
export type ToolDescription = {
  name: string;
  description: string;
  /** JSON Schema (an object schema) of the tool's arguments. */
  inputSchema: Record<string, unknown>;
};

/**
 * What one provider request is asked to do.
 *
 * @example
 * ```ts
 * const logged: Provider = {
 *   name: 'logged',
 *   stream(request: ProviderRequest) {
 *     console.log(`${request.messages.length} messages, ${request.tools.length} tools`);
 *     return inner.stream(request);
 *   },
 * };
 * ```
 */
export type ProviderRequest = {
  /** The system prompt, kept apart because the wires place it differently. */
  system?: string;
  /** The history, provider-neutral; system messages in it come after `system`. */
  messages: Message[];
  tools: ToolDescription[];
  /** Aborted when the machine leaves the request (cancel, timeout, stop): close the connection. */
  signal: AbortSignal;
  /** Free data the host attached to the run, handed through untouched. */
  sessionData?: unknown;
  /**
   * How hard a reasoning model should think, set by middleware (see `reasoningEffort()`): OpenAI
   * sends it as `reasoning_effort`, Anthropic as a thinking budget. A provider's own option wins.
   */
  reasoningEffort?: ReasoningEffort;
  /**
   * The machine wants the final answer as a JSON object matching `schema` (the `output` option):
   * use the wire's native structured-output mode where it has one. The machine validates and
   * repairs the answer either way.
   */
  responseFormat?: ResponseFormat;
  /**
   * Prompt caching, as the machine's `promptCache` asks for it (absent: off). Each wire places it
   * its own way: Anthropic `cache_control` breakpoints, OpenAI `prompt_cache_key` and retention.
   */
  promptCache?: PromptCacheRequest;
};

/**
 * How long a provider keeps a cached prompt prefix: Anthropic offers `'5m'` and `'1h'`, OpenAI
 * `'5m'` (in memory, its default) and `'24h'`.
 *
 * @example
 * ```ts
 * const ttl: PromptCacheTtl = '1h';
 * ```
 */
export type PromptCacheTtl = '5m' | '1h' | '24h';

/**
 * The prompt caching a request asks for: how long to keep the prefix (the wire's default when
 * absent), and the key OpenAI routes requests of one conversation by.
 *
 * @example
 * ```ts
 * const cache: PromptCacheRequest = { ttl: '1h', key: 'support-bot' };
 * ```
 */
export type PromptCacheRequest = { ttl?: PromptCacheTtl; key?: string };

/**
 * A structured final answer a request asks for.
 *
 * @example
 * ```ts
 * const format: ResponseFormat = { name: 'weather_report', schema: { type: 'object', properties: { celsius: { type: 'number' } } }, strict: false };
 * ```
 */
export type ResponseFormat = {
  name: string;
  description?: string;
  /** JSON Schema of the answer (an object schema). */
  schema: Record<string, unknown>;
  /** OpenAI strict mode. */
  strict: boolean;
};

/**
 * One reasoning effort for every wire.
 *
 * @example
 * ```ts
 * const effort: ReasoningEffort = 'low';
 * ```
 */
export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high';

/**
 * Why the model stopped, normalised over the wires; `rawFinishReason` keeps the wire's word.
 *
 * @example
 * ```ts
 * const output = await toPromise(actor);
 * if (output.finishReason === 'length') console.warn('the answer was cut at the token limit');
 * ```
 */
export type FinishReason = 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'refusal' | 'pause' | 'other';

/**
 * A tool call as the provider assembled it: the argument text exactly as streamed, so the machine
 * can tell malformed JSON from valid JSON and report it to the model. `providerMetadata` (e.g. the
 * Responses API's item) is carried into the history's tool-call part unchanged.
 *
 * @example
 * ```ts
 * const call: ProviderToolCall = { type: 'tool-call', toolCallId: 'c1', toolName: 'add', argsText: '{"a":2,"b":3}' };
 * ```
 */
export type ProviderToolCall = {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  argsText: string;
  providerMetadata?: ProviderMetadata;
};

/**
 * The assembled content of one response, in the order the model produced it.
 *
 * @example
 * ```ts
 * const content: ProviderContentPart[] = [
 *   { type: 'text', text: 'Adding.' },
 *   { type: 'tool-call', toolCallId: 'c1', toolName: 'add', argsText: '{"a":2,"b":3}' },
 * ];
 * ```
 */
export type ProviderContentPart = TextPart | ReasoningPart | RedactedReasoningPart | ProviderToolCall;

/**
 * What a provider yields while it streams one response. Deltas are for live display only; the
 * `finish` event carries the whole response, and is always the last event of a successful stream.
 *
 * @example
 * ```ts
 * for await (const event of provider.stream(request)) {
 *   if (event.type === 'text.delta') process.stdout.write(event.delta);
 *   else if (event.type === 'finish') console.log(event.finishReason, event.usage);
 * }
 * ```
 */
export type ProviderEvent =
  | { type: 'text.delta'; delta: string }
  | { type: 'reasoning.delta'; delta: string }
  | { type: 'tool.call.delta'; toolCallId: string; name?: string; argsDelta: string }
  | {
      type: 'finish';
      content: ProviderContentPart[];
      finishReason: FinishReason;
      rawFinishReason?: string;
      usage: Usage;
      /** The model that answered, as the response names it (e.g. `gpt-4o-mini-2024-07-18`). */
      model?: string;
      /** The response's id on the wire. */
      responseId?: string;
    };

/**
 * What the conversation machine knows of a model: one streaming request at a time.
 * A provider throws (or its iterable rejects) on failure; the machine classifies the error with
 * {@link toProviderError}, so a provider may throw its SDK's errors as they are.
 *
 * @example
 * ```ts
 * const echo: Provider = {
 *   name: 'echo',
 *   async *stream({ messages }) {
 *     const text = 'you said ' + JSON.stringify(messages.at(-1));
 *     yield { type: 'text.delta', delta: text };
 *     yield { type: 'finish', content: [{ type: 'text', text }], finishReason: 'stop', usage: emptyUsage() };
 *   },
 * };
 * ```
 */
export interface Provider {
  /** A short name for logs, traces and errors, e.g. `openai` (the GenAI `gen_ai.provider.name`). */
  readonly name: string;
  /** The model requested, when the provider knows it (traces and price lookups use it). */
  readonly model?: string;
  /**
   * The prompt-cache lifetimes the wire offers, when the provider places caching itself: a machine
   * whose `promptCache.ttl` is not among them is refused when it is created, naming these.
   */
  readonly promptCacheTtls?: readonly PromptCacheTtl[];
  /**
   * How the wire counts an image's tokens (`'openai'`: 512-px tiles; `'anthropic'`: pixels / 750):
   * the token estimate behind compaction and budgets uses it. Absent: the larger of the two.
   */
  readonly mediaTokens?: MediaTokenRule;
  stream(request: ProviderRequest): AsyncIterable<ProviderEvent>;
}
