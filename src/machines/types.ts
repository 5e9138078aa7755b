import type { ProviderCallEvent } from '../actors/provider-call.js';
import type { ToolExecutionOutput } from '../actors/tool-execution.js';
import type { AssistantContentPart, Message, ToolResultPart } from '../providers/messages.js';
import type { FinishReason } from '../providers/provider.js';
import type { Usage } from '../providers/usage.js';

/**
 * Why a run ended in `halted` (or a host-defined reason).
 *
 * @example
 * ```ts
 * const output = await toPromise(actor);
 * if (output.status === 'halted' && output.reason === 'max_iterations') console.warn('raise maxToolIterations?');
 * ```
 */
export type HaltReason = 'max_iterations' | 'tool_halt' | 'doom_loop' | 'tool_error_limit' | 'cancelled';

/**
 * The error a run ended with, as plain JSON so it survives a persisted snapshot.
 *
 * @example
 * ```ts
 * const { status, error } = await toPromise(actor);
 * if (status === 'error' && error?.code === 'authentication') console.error('check the API key:', error.message);
 * ```
 */
export type RunError = {
  name: string;
  message: string;
  status?: number;
  retryable: boolean;
  /** A coarse classification, e.g. `rate_limit`, `authentication`, `invalid_input`. */
  code?: string;
};

/**
 * What every run resolves with (`toPromise(actor)` never rejects).
 *
 * @example
 * ```ts
 * const output: RunOutput = await toPromise(actor);
 * if (output.status === 'done') console.log(output.text);
 * const next = createActor(machine, { input: { messages: output.messages } });
 * ```
 */
export type RunOutput = {
  status: 'done' | 'halted' | 'error';
  reason?: HaltReason | (string & {});
  /** The final assistant text ('' if none). */
  text: string;
  /** The whole history, valid to send to the provider again. */
  messages: Message[];
  /** Tool rounds executed. */
  iterations: number;
  usage: Usage;
  /** The last response's finish reason, when there was one. */
  finishReason?: FinishReason;
  error?: RunError;
};

/**
 * What a run starts from. A run ends after one answer, so the next turn starts a new actor from
 * the previous output's history.
 *
 * @example
 * ```ts
 * const next = createActor(machine, { input: { messages: previous.messages, sessionData: { userId: 'u1' } } }).start();
 * ```
 */
export type ConversationInput = {
  /** The history so far (e.g. the previous run's `output.messages`). */
  messages?: Message[];
  /** Plain JSON handed to the provider untouched (a handler's `sessionData`). */
  sessionData?: unknown;
};

/**
 * Events a user sends to a conversation actor. One the run cannot take now is answered with an
 * `event.rejected` emit instead of being dropped silently.
 *
 * @example
 * ```ts
 * actor.send({ type: 'user.message', content: 'What is 2+3?' });
 * actor.on('tool.approval.requested', ({ toolCallId }) => actor.send({ type: 'tool.approve', toolCallId }));
 * actor.send({ type: 'cancel', reason: 'user left' });
 * ```
 */
export type ConversationUserEvent =
  | { type: 'user.message'; content: string | Array<{ type: 'text'; text: string }> }
  | { type: 'cancel'; reason?: string }
  | { type: 'tool.approve'; toolCallId: string }
  | { type: 'tool.deny'; toolCallId: string; reason?: string };

/** A tool execution that finished, with its result (sent by XState, never by users). */
export type ToolCallDoneEvent = { type: `xstate.done.actor.toolCall-${string}`; output: ToolExecutionOutput };
/** A tool execution that threw (sent by XState, never by users); a `HaltError` ends the run. */
export type ToolCallErrorEvent = { type: `xstate.error.actor.toolCall-${string}`; error: unknown };
/** A provider call that failed (sent by XState, never by users). */
export type ProviderCallErrorEvent = { type: 'xstate.error.actor.providerCall'; error: unknown };

/**
 * Every event the machine handles: the user's and those its own actors send. Hosts only ever send
 * the {@link ConversationUserEvent} members.
 *
 * @example
 * ```ts
 * const stop: ConversationEvent = { type: 'cancel', reason: 'user closed the tab' };
 * actor.send(stop);
 * ```
 */
export type ConversationEvent = ConversationUserEvent | ProviderCallEvent | ProviderCallErrorEvent | ToolCallDoneEvent | ToolCallErrorEvent;

/**
 * A tool call and its result, as the `tool.result` event reports it.
 *
 * @example
 * ```ts
 * actor.on('tool.result', (event: ToolResultEvent) => console.log(event.name, event.isError ? 'failed:' : '->', event.result));
 * ```
 */
export type ToolResultEvent = {
  type: 'tool.result';
  toolCallId: string;
  name: string;
  /** The serialised result (or the error text when `isError`). */
  result: string;
  isError: boolean;
};

/**
 * The events a conversation actor emits; subscribe with `actor.on(type, listener)`.
 *
 * @example
 * ```ts
 * actor.on('text.delta', (event) => process.stdout.write(event.delta));
 * actor.on('tool.result', (event) => console.log(event.name, event.isError ? 'failed' : 'ok'));
 * ```
 */
export type ConversationEmittedEvent =
  | { type: 'request.started'; iteration: number; attempt: number }
  | { type: 'text.delta'; delta: string }
  | { type: 'reasoning.delta'; delta: string }
  | { type: 'tool.call.delta'; toolCallId: string; name?: string; argsDelta: string }
  | { type: 'tool.call'; toolCallId: string; name: string; args: unknown }
  | ToolResultEvent
  | { type: 'tool.approval.requested'; toolCallId: string; name: string; args: unknown }
  | { type: 'request.retry'; attempt: number; delayMs: number; error: RunError; discardPartial: boolean }
  | { type: 'usage'; step: Usage; total: Usage }
  | { type: 'doom_loop.detected'; pattern: Array<{ name: string; args: unknown }>; repeats: number; action: 'notice' | 'halt' }
  | { type: 'event.rejected'; eventType: string; message: string };

/** Where one tool call of a round stands. */
export type RoundCallState = 'awaiting-approval' | 'queued' | 'running' | 'settled';

/** One tool call of the current round. */
export type RoundCall = {
  toolCallId: string;
  toolName: string;
  /** Validated arguments (the raw ones when the call is already settled as invalid). */
  args: unknown;
  state: RoundCallState;
  /** When a running call times out (epoch ms): the `toolDeadline` delayed transition fires at the earliest. */
  deadline?: number;
  /** Set once the call has its one result. */
  result?: ToolResultPart;
};

/** What the machine decided about a response's tool calls before running any of them. */
export type DoomLoopVerdict =
  | { action: 'none' }
  | { action: 'notice' | 'halt'; notice: string; pattern: Array<{ name: string; args: unknown }>; repeats: number };

/** The response of the current request, kept until the machine acts on it. */
export type PendingResponse = {
  content: AssistantContentPart[];
  finishReason: FinishReason;
  calls: RoundCall[];
  doomLoop: DoomLoopVerdict;
};

/**
 * The machine's context: plain JSON at every point of a run, so a persisted snapshot restores
 * exactly.
 *
 * @example
 * ```ts
 * const { messages, iterations, usage }: ConversationContext = actor.getSnapshot().context;
 * ```
 */
export type ConversationContext = {
  messages: Message[];
  sessionData?: unknown;
  /** Set when the input was malformed: the run goes straight to `error`. */
  inputProblem?: string;
  /** Index of the first message this run added, to find this run's final text. */
  runStart: number;
  iterations: number;
  /** Attempt of the current request, from 1. */
  attempt: number;
  /** Whether the current attempt streamed anything (a retry then discards it). */
  partial: boolean;
  /** Whether the provider sent anything in the current request-timeout window. */
  progressed: boolean;
  usage: Usage;
  response: PendingResponse | null;
  /** The calls of the round being approved or executed. */
  round: RoundCall[] | null;
  /** Whether the model already got the doom-loop notice for the loop in progress. */
  doomLoopNoticed: boolean;
  /** A notice to append after this round's results. */
  pendingNotice: string | null;
  retryDelayMs: number;
  lastError: RunError | null;
  /** Retry-After of the last error, kept to compute the next delay. */
  lastRetryAfterMs: number | null;
  status: RunOutput['status'] | null;
  reason: string | null;
  finalText: string | null;
  finishReason: FinishReason | null;
};
