import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import { toProviderError } from '../model/errors/classify-error.js';
import { ProviderError } from '../model/errors/provider-error.js';
import { estimateTokens } from '../model/estimate-tokens.js';
import { findJsonProblem } from '../model/json.js';
import { type Message, userContentText } from '../model/messages.js';
import type { FinishReason, Provider, ProviderContentPart, ProviderEvent, ProviderRequest } from '../model/provider.js';
import type { Usage } from '../model/usage.js';
import { option, type OptionSchema, resolveOptionsWith } from '../util/option-schema.js';

/**
 * One tool call a scripted turn makes. `args` is sent as JSON; `argsText` instead sends the
 * argument text exactly as given, for scripting a model that writes malformed JSON.
 *
 * @example
 * ```ts
 * const call: ScriptedToolCall = { name: 'weather', args: { city: 'Paris' } };
 * const broken: ScriptedToolCall = { name: 'weather', argsText: '{"city": "Par' };
 * ```
 */
export type ScriptedToolCall = {
  name: string;
  /** Plain JSON (checked when the provider is created). Default `{}`. */
  args?: unknown;
  /** The raw argument text, in place of `args`. */
  argsText?: string;
  /** The call's id. Default `call_<request>_<call>`, unique within the provider. */
  id?: string;
};

/**
 * A failure a scripted turn answers with, as a provider's HTTP error: the status decides, as it
 * does for a real wire, whether the machine retries (408, 409, 429, 5xx) or ends `error` (400,
 * 401, 403, 404, 422). `retry-after` / `retry-after-ms` in `headers` are honoured too.
 *
 * @example
 * ```ts
 * const slowDown: ScriptedError = { status: 429, message: 'rate limited', headers: { 'retry-after-ms': '5' } };
 * ```
 */
export type ScriptedError = { status: number; message: string; headers?: Record<string, string> };

/**
 * What the model answers to one request. Streamed as a real wire streams: reasoning, then text,
 * then the tool calls, each in small deltas, then a `finish` event. With `error`, whatever the
 * turn streams comes first and the error is thrown after it — a stream that fails part way.
 *
 * @example
 * ```ts
 * const answer: ScriptedAnswer = { reasoning: 'The user wants the weather.', toolCalls: [{ name: 'weather', args: { city: 'Paris' } }] };
 * const cutOff: ScriptedAnswer = { text: 'The answer is', error: { status: 503, message: 'upstream reset' } };
 * ```
 */
export type ScriptedAnswer = {
  text?: string;
  reasoning?: string;
  toolCalls?: readonly ScriptedToolCall[];
  error?: ScriptedError;
  /** Wait this long before answering; a cancelled request stops waiting at once. */
  delayMs?: number;
  /** Counts to report; a count left out is estimated from the lengths (four characters a token). */
  usage?: Partial<Usage>;
  /** Default `tool-calls` when the turn has calls, else `stop`. */
  finishReason?: FinishReason;
};

/**
 * One turn of a script: an answer, or a function that answers from the request (it may be async,
 * and may throw as a wire would: a thrown error is classified like any provider's).
 *
 * @example
 * ```ts
 * const turns: ScriptedTurn[] = [
 *   { toolCalls: [{ name: 'weather', args: { city: 'Paris' } }] },
 *   (request) => ({ text: `I saw ${request.messages.length} messages.` }),
 * ];
 * ```
 */
export type ScriptedTurn = ScriptedAnswer | ((request: ProviderRequest) => ScriptedAnswer | Promise<ScriptedAnswer>);

/**
 * How a scripted provider names itself in traces, prices and `RunOutput`.
 *
 * @example
 * ```ts
 * const provider = scriptedProvider([{ text: 'Hi.' }], { name: 'fake-openai', model: 'gpt-4o-mini' });
 * ```
 */
export type ScriptedProviderOptions = {
  /** Default `scripted`. */
  name?: string;
  /** Default `scripted`. */
  model?: string;
};

/**
 * A {@link Provider} that answers from a script, and what it was asked.
 *
 * @example
 * ```ts
 * const provider: ScriptedProvider = scriptedProvider([{ text: 'Hi.' }]);
 * // … run a conversation …
 * expect(provider.requests[0]?.messages.at(-1)).toEqual({ role: 'user', content: 'Hello' });
 * expect(provider.remaining).toBe(0);
 * ```
 */
export interface ScriptedProvider extends Provider {
  readonly model: string;
  /** Every request received, in order (a retry is a request of its own). */
  readonly requests: readonly ProviderRequest[];
  /** Turns not served yet. */
  readonly remaining: number;
}

const finishReasons = [
  'stop',
  'tool-calls',
  'length',
  'content-filter',
  'refusal',
  'pause',
  'other',
] as const satisfies readonly FinishReason[];

const jsonProblemPattern = /^(.*?) must be (plain JSON .*)$/s;

/** Arguments a snapshot can hold: what a real wire's parsed JSON would be. */
const plainJson: OptionSchema<unknown> = option.transform(option.unchecked('plain JSON'), (value, path) => {
  const problem = findJsonProblem(value, path);
  if (problem === undefined) return value;
  const [, where = path, expected = problem] = jsonProblemPattern.exec(problem) ?? [];
  throw new InvalidOptionsError(where, expected);
});

const toolCallSchema = option.transform(
  option.object(
    {
      name: option.string({ nonEmpty: true, expected: 'a tool name (a non-empty string)' }),
      args: option.optional(plainJson),
      argsText: option.optional(option.string()),
      id: option.optional(option.string({ nonEmpty: true })),
    },
    { expected: 'a tool call { name, args?, argsText?, id? }' },
  ),
  (call, path) => {
    if (call.args !== undefined && call.argsText !== undefined)
      throw new InvalidOptionsError(`${path}.argsText`, 'args or argsText, not both');
    return call;
  },
);

const tokenCount = option.optional(option.integer({ minimum: 0, expected: 'a number of tokens (an integer ≥ 0)' }));

const answerShape = {
  text: option.optional(option.string()),
  reasoning: option.optional(option.string()),
  toolCalls: option.optional(option.array(toolCallSchema, 'an array of tool calls { name, args?, argsText?, id? }')),
  error: option.optional(
    option.object(
      {
        status: option.integer({ minimum: 400, maximum: 599, expected: 'an HTTP error status (an integer from 400 to 599)' }),
        message: option.string({ nonEmpty: true }),
        headers: option.optional(option.record(option.string(), 'an object of header values (strings) by name')),
      },
      { expected: 'an error { status, message, headers? }' },
    ),
  ),
  delayMs: option.optional(option.milliseconds({ minimum: 0 })),
  usage: option.optional(
    option.object(
      {
        inputTokens: tokenCount,
        outputTokens: tokenCount,
        totalTokens: tokenCount,
        cachedInputTokens: tokenCount,
        cacheCreationInputTokens: tokenCount,
        cacheCreation1hInputTokens: tokenCount,
        reasoningTokens: tokenCount,
      },
      { expected: 'token counts { inputTokens?, outputTokens?, totalTokens?, … }' },
    ),
  ),
  finishReason: option.optional(option.choice(finishReasons)),
};

const answerFields = 'text?, reasoning?, toolCalls?, error?, delayMs?, usage?, finishReason?';
const scriptedAnswer = option.object(answerShape, { expected: `an answer { ${answerFields} }` });
const scriptedTurn = option.object(answerShape, { expected: `a turn { ${answerFields} } or a function (request) => turn` });

type CheckedAnswer = ReturnType<typeof scriptedAnswer.resolve>;
type TurnFunction = Extract<ScriptedTurn, (request: ProviderRequest) => unknown>;
type CheckedTurn = CheckedAnswer | TurnFunction;

const turnsSchema = option.array(
  option.either<CheckedTurn>('a turn or a function (request) => turn', [
    [(value) => typeof value === 'function', option.callable<TurnFunction>('a function')],
    [() => true, scriptedTurn],
  ]),
  'an array of turns',
);

const optionsSchema = option.object({
  name: option.withDefault(option.string({ nonEmpty: true }), 'scripted'),
  model: option.withDefault(option.string({ nonEmpty: true }), 'scripted'),
});

/**
 * A provider that answers from a script instead of a model: turn `n` answers the `n`-th request.
 * It streams like a real wire (deltas, then a `finish` with the whole response, a finish reason and
 * usage), so a conversation machine runs on it exactly as on OpenAI or Anthropic — retries,
 * cancels and tool rounds included. A bad turn is refused when the provider is created, naming
 * the turn and the field; a request after the last turn fails the run, naming what it asked.
 *
 * @example
 * ```ts
 * const provider = scriptedProvider([
 *   { toolCalls: [{ name: 'weather', args: { city: 'Paris' } }] },
 *   { text: 'It is sunny in Paris.' },
 * ]);
 * const machine = createConversationMachine({ provider, tools: [weather] });
 * const output = await toPromise(createActor(machine, { input: { prompt: 'Weather in Paris?' } }).start());
 * expectTrajectory(output, [{ tool: 'weather', args: { city: 'Paris' } }]);
 * ```
 */
export function scriptedProvider(turns: readonly ScriptedTurn[], options: ScriptedProviderOptions = {}): ScriptedProvider {
  const script = resolveOptionsWith(turnsSchema, turns, 'turns');
  const { name, model } = resolveOptionsWith(optionsSchema, options, 'options');
  const requests: ProviderRequest[] = [];

  async function* stream(request: ProviderRequest): AsyncGenerator<ProviderEvent> {
    requests.push(request);
    const number = requests.length;
    const turn = script[number - 1];
    if (turn === undefined) throw outOfTurns(script.length, number, request.messages);
    const answer = typeof turn === 'function' ? scriptedAnswer.resolve(await turn(request), `turns[${number - 1}](request)`) : turn;
    if (answer.delayMs) await wait(answer.delayMs, request.signal);
    if (request.signal.aborted) throw aborted();
    const calls = (answer.toolCalls ?? []).map((call, index) => ({
      type: 'tool-call' as const,
      toolCallId: call.id ?? `call_${number}_${index + 1}`,
      toolName: call.name,
      argsText: call.argsText ?? JSON.stringify(call.args ?? {}),
    }));
    yield* deltas(answer, calls);
    if (answer.error) throw httpError(answer.error);
    const content: ProviderContentPart[] = [];
    if (answer.reasoning) content.push({ type: 'reasoning', text: answer.reasoning });
    if (answer.text) content.push({ type: 'text', text: answer.text });
    content.push(...calls);
    yield {
      type: 'finish',
      content,
      finishReason: answer.finishReason ?? (calls.length > 0 ? 'tool-calls' : 'stop'),
      usage: usageOf(answer, calls, request),
      model,
      responseId: `scripted-${number}`,
    };
  }

  return {
    name,
    model,
    stream,
    get requests(): readonly ProviderRequest[] {
      return requests;
    },
    get remaining(): number {
      return Math.max(0, script.length - requests.length);
    },
  };
}

/** Word by word, as a model streams: a UI test sees several deltas, not one. */
function words(text: string): string[] {
  return text.split(/(?<=\s)/).filter((piece) => piece !== '');
}

function* deltas(
  answer: CheckedAnswer,
  calls: ReadonlyArray<{ toolCallId: string; toolName: string; argsText: string }>,
): Generator<ProviderEvent> {
  for (const delta of words(answer.reasoning ?? '')) yield { type: 'reasoning.delta', delta };
  for (const delta of words(answer.text ?? '')) yield { type: 'text.delta', delta };
  for (const { toolCallId, toolName, argsText } of calls) {
    // The name comes with the first piece of the arguments, as Chat Completions sends it.
    yield { type: 'tool.call.delta', toolCallId, name: toolName, argsDelta: argsText.slice(0, 16) };
    for (let start = 16; start < argsText.length; start += 16)
      yield { type: 'tool.call.delta', toolCallId, argsDelta: argsText.slice(start, start + 16) };
  }
}

const tokensIn = (characters: number) => Math.ceil(characters / 4);

function usageOf(answer: CheckedAnswer, calls: ReadonlyArray<{ toolName: string; argsText: string }>, request: ProviderRequest): Usage {
  const given = answer.usage;
  const written = (answer.text ?? '').length + (answer.reasoning ?? '').length;
  const callCharacters = calls.reduce((sum, call) => sum + call.toolName.length + call.argsText.length, 0);
  const inputTokens = given?.inputTokens ?? estimateTokens(request.messages, { system: request.system, tools: request.tools });
  const outputTokens = given?.outputTokens ?? Math.max(1, tokensIn(written + callCharacters));
  const usage: Usage = { inputTokens, outputTokens, totalTokens: given?.totalTokens ?? inputTokens + outputTokens };
  const reasoningTokens = given?.reasoningTokens ?? (answer.reasoning ? tokensIn(answer.reasoning.length) : undefined);
  if (reasoningTokens !== undefined) usage.reasoningTokens = reasoningTokens;
  if (given?.cachedInputTokens !== undefined) usage.cachedInputTokens = given.cachedInputTokens;
  if (given?.cacheCreationInputTokens !== undefined) usage.cacheCreationInputTokens = given.cacheCreationInputTokens;
  if (given?.cacheCreation1hInputTokens !== undefined) usage.cacheCreation1hInputTokens = given.cacheCreation1hInputTokens;
  return usage;
}

/** The error an SDK throws for this status, classified by the machine's own rules, so retries behave as on a real wire. */
function httpError({ status, message, headers }: { status: number; message: string; headers?: Record<string, string> | undefined }) {
  return toProviderError(Object.assign(new Error(message), { status, headers: headers ?? {} }));
}

function aborted(): Error {
  return new DOMException('the request was aborted before its scripted answer', 'AbortError');
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(aborted());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function short(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/** Names the request that found no turn by what it asked, so a script that ran short is easy to extend. */
function outOfTurns(scripted: number, number: number, messages: readonly Message[]): ProviderError {
  const lastUser = messages.findLast((message) => message.role === 'user');
  const asked =
    lastUser === undefined
      ? 'it has no user message'
      : `its last user message: ${JSON.stringify(short(userContentText(lastUser.content)))}`;
  const last = messages.at(-1);
  const after = last?.role === 'tool' ? `, then the results of ${[...new Set(last.content.map((part) => part.toolName))].join(', ')}` : '';
  const turns = scripted === 1 ? '1 turn was' : `${scripted} turns were`;
  return new ProviderError(`scriptedProvider: no turn for request ${number} (${turns} scripted); ${asked}${after}`, {
    code: 'unknown',
    retryable: false,
  });
}
