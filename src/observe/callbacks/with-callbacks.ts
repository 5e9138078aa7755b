import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { isRecord } from '../../util/is-record.js';
import { childPath, type OptionSchema, option } from '../../util/option-schema.js';
import type { Message } from '../../model/messages.js';
import type { Usage } from '../../model/usage.js';
import type {
  ConversationActor,
  ConversationEmittedEvent,
  ConversationSnapshot,
  RequestRetryEvent,
  RequestStartedEvent,
  RunError,
  RunOutput,
  ToolApprovalRequestedEvent,
  ToolCallEvent,
  UsageEvent,
} from '../../machines/names/types.js';
import { type ActorEnd, observeActor } from '../observe-actor.js';

/**
 * What every end-of-run callback gets.
 *
 * @example
 * ```ts
 * const report = ({ output, usage }: RunEnd) => console.log(output.status, usage.totalTokens);
 * ```
 */
export type RunEnd = { output: RunOutput; messages: Message[]; usage: Usage };

/**
 * Callbacks on a run. Each gets one object; a callback may be async. A callback that throws or
 * rejects never breaks the run: it is reported to `onCallbackError` (default: `console.error`).
 *
 * @example
 * ```ts
 * const callbacks: ConversationCallbacks = {
 *   onToolUse: ({ name, isError, durationMs }) => metrics.timing(`tool.${name}`, durationMs, { isError }),
 *   onComplete: ({ output }) => log.info(output.status, output.usage),
 *   onError: ({ error }) => alert(error.message),
 * };
 * ```
 */
export type ConversationCallbacks = {
  /** A provider request starts (every attempt). */
  onRequest?: (request: Omit<RequestStartedEvent, 'type'>) => unknown;
  /** A piece of answer text streams in. */
  onText?: (text: { delta: string }) => unknown;
  /** A piece of reasoning streams in. */
  onReasoning?: (reasoning: { delta: string }) => unknown;
  /** The model asked for a tool call (before it is validated, approved or run). */
  onToolCall?: (call: Omit<ToolCallEvent, 'type'>) => unknown;
  /** A tool call has its result (also errors, timeouts, denials); `durationMs` when it ran. */
  onToolUse?: (use: { toolCallId: string; name: string; args: unknown; result: string; isError: boolean; durationMs?: number }) => unknown;
  /** A tool call waits for `tool.approve` / `tool.deny`. */
  onApprovalRequested?: (approval: Omit<ToolApprovalRequestedEvent, 'type'>) => unknown;
  /** A failed request will be retried. */
  onRetry?: (retry: Omit<RequestRetryEvent, 'type'>) => unknown;
  /** A response's tokens, and the run's so far. */
  onUsage?: (usage: Omit<UsageEvent, 'type'>) => unknown;
  /** The run ended, whatever its status (`done`, `halted`, `error`). */
  onComplete?: (end: RunEnd) => unknown;
  /** The run ended `done`. */
  onDone?: (end: RunEnd & { text: string }) => unknown;
  /** The run ended `halted` (cap, doom loop, `HaltError`, cancel). */
  onHalt?: (end: RunEnd & { reason: string }) => unknown;
  /** The run ended in `error`. */
  onError?: (end: RunEnd & { error: RunError }) => unknown;
};

/**
 * Options of {@link withCallbacks}.
 *
 * @example
 * ```ts
 * withCallbacks(actor, callbacks, { onCallbackError: (error, { callback }) => logger.warn({ error, callback }) });
 * ```
 */
export type WithCallbacksOptions = {
  /** Where a callback that throws or rejects is reported. Default: `console.error`. */
  onCallbackError?: (error: unknown, where: { callback: keyof ConversationCallbacks }) => void;
};

/** The callbacks told of emitted events (the others are told of the run's end). */
const eventCallbacks = [
  'onRequest',
  'onText',
  'onReasoning',
  'onToolCall',
  'onToolUse',
  'onApprovalRequested',
  'onRetry',
  'onUsage',
] as const satisfies ReadonlyArray<keyof ConversationCallbacks>;

const callbackNames = [...eventCallbacks, 'onComplete', 'onDone', 'onHalt', 'onError'] as const satisfies ReadonlyArray<
  keyof ConversationCallbacks
>;

/** Edit distance, to suggest the callback a misspelt key meant. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}

const callbackSchema = option.optional(option.callable<(payload: never) => unknown>('a function'));

const knownCallbacks = option.object(
  Object.fromEntries(callbackNames.map((name) => [name, callbackSchema])) as Record<(typeof callbackNames)[number], typeof callbackSchema>,
  { expected: `an object of callbacks (${callbackNames.join(', ')})`, unknownKeys: 'ignore' },
);

/**
 * Callbacks, checked when they are attached. A wrong key is refused here rather than by
 * `option.object`, whose message speaks of options: this one names the callback it may have meant.
 */
const callbacksSchema: OptionSchema<ConversationCallbacks> = {
  expected: knownCallbacks.expected,
  resolve: (value, path) => {
    if (isRecord(value)) {
      for (const key of Object.keys(value)) {
        if ((callbackNames as readonly string[]).includes(key)) continue;
        const nearest = [...callbackNames].sort((a, b) => distance(key, a) - distance(key, b))[0];
        const hint = nearest !== undefined && distance(key, nearest) <= 3 ? `did you mean ${nearest}? ` : '';
        throw new InvalidOptionsError(
          childPath(path, key),
          `a known callback (${hint}one of ${callbackNames.join(', ')})`,
          'an unknown key',
        );
      }
    }
    return knownCallbacks.resolve(value, path) as ConversationCallbacks;
  },
};

// Checked now, so a wrong onCallbackError fails here rather than when a callback first throws.
const withCallbacksOptionsSchema = option.object(
  {
    onCallbackError: option.withDefault(
      option.callable<NonNullable<WithCallbacksOptions['onCallbackError']>>('a function (error, { callback }) => void'),
      (error, where) => console.error(`actorloop: callback ${where.callback} failed:`, error),
    ),
  },
  { expected: 'an object', unknownKeys: 'ignore' },
);

/**
 * Attaches callbacks to a conversation actor (validated now: an unknown key or a non-function
 * throws `InvalidOptionsError` naming it). Returns a function that detaches them; detaching never
 * stops the run.
 *
 * @example
 * ```ts
 * const actor = createActor(machine, { input: { messages: [] } });
 * const detach = withCallbacks(actor, {
 *   onToolUse: ({ name, result }) => console.log(name, '→', result),
 *   onComplete: ({ output }) => console.log(output.status, output.text),
 * });
 * actor.start();
 * actor.send({ type: 'user.message', content: 'What is 2+3?' });
 * ```
 */
export function withCallbacks(
  actor: Pick<ConversationActor, 'on' | 'subscribe' | 'getSnapshot'>,
  callbacks: ConversationCallbacks,
  options: WithCallbacksOptions = {},
): () => void {
  const valid = callbacksSchema.resolve(callbacks, 'callbacks');
  const { onCallbackError: report } = withCallbacksOptionsSchema.resolve(options, '');
  const call = <TName extends keyof ConversationCallbacks>(
    name: TName,
    payload: Parameters<NonNullable<ConversationCallbacks[TName]>>[0],
  ) => {
    const callback = valid[name] as ((value: typeof payload) => unknown) | undefined;
    if (!callback) return;
    try {
      const result = callback(payload);
      if (result instanceof Promise) result.catch((error: unknown) => report(error, { callback: name }));
    } catch (error) {
      report(error, { callback: name });
    }
  };
  const strip = <TEvent extends ConversationEmittedEvent>({ type: _type, ...rest }: TEvent) => rest;

  // A callback's payload is built only when it is there: these run for every streamed delta.
  // onToolUse pairs a result with its call's arguments and start time.
  const args = new Map<string, unknown>();
  const started = new Map<string, number>();
  const onEvent = (event: ConversationEmittedEvent) => {
    switch (event.type) {
      case 'request.started':
        if (valid.onRequest) call('onRequest', strip(event));
        return;
      case 'text.delta':
        if (valid.onText) call('onText', { delta: event.delta });
        return;
      case 'reasoning.delta':
        if (valid.onReasoning) call('onReasoning', { delta: event.delta });
        return;
      case 'tool.approval.requested':
        if (valid.onApprovalRequested) call('onApprovalRequested', strip(event));
        return;
      case 'request.retry':
        if (valid.onRetry) call('onRetry', strip(event));
        return;
      case 'usage':
        if (valid.onUsage) call('onUsage', strip(event));
        return;
      case 'tool.call':
        if (valid.onToolCall) call('onToolCall', strip(event));
        if (valid.onToolUse) args.set(event.toolCallId, event.args);
        return;
      case 'tool.started':
        if (valid.onToolUse) started.set(event.toolCallId, performance.now());
        return;
      case 'tool.result': {
        if (!valid.onToolUse) return;
        const start = started.get(event.toolCallId);
        call('onToolUse', {
          toolCallId: event.toolCallId,
          name: event.name,
          args: args.get(event.toolCallId),
          result: event.result,
          isError: event.isError,
          ...(start === undefined ? {} : { durationMs: performance.now() - start }),
        });
        args.delete(event.toolCallId);
        started.delete(event.toolCallId);
        return;
      }
    }
  };
  const onEnd = ({ status, snapshot }: ActorEnd<ConversationSnapshot>) => {
    // A run that failed as an actor or was stopped before its end has no RunOutput to report.
    const output = snapshot.output;
    if (status !== 'done' || !output) return;
    const base: RunEnd = { output, messages: output.messages, usage: output.usage };
    call('onComplete', base);
    if (output.status === 'done') call('onDone', { ...base, text: output.text });
    if (output.status === 'halted') call('onHalt', { ...base, reason: output.reason ?? 'halted' });
    if (output.status === 'error' && output.error) call('onError', { ...base, error: output.error });
  };
  const events = eventCallbacks.some((name) => valid[name] !== undefined);
  return observeActor(actor, { ...(events ? { onEvent } : {}), onEnd });
}
