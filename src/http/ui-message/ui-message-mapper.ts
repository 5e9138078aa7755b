import type { ConversationStatus } from '../../host/conversation-store.js';
import type { ConversationStreamEvent } from '../../host/conversation-stream.js';
import { toolErrorType } from '../../machines/rounds/tool-round.js';
import type { ConversationEmittedEvent, RunError, RunOutput, ToolResultEvent } from '../../machines/names/types.js';
import type { FinishReason } from '../../model/provider.js';
import { toolContentOutput, toolOutputOf } from './tool-output.js';
import type { UIMessageChunk, UIMessageFinishChunk } from './ui-message-chunk.js';

/**
 * Where a message stands when `messageMetadata` is asked for its metadata: at its start, and at
 * its end with the run's status (and output, once the run ended).
 *
 * @example
 * ```ts
 * const metadata = (moment: UIMessageMoment) => (moment.type === 'finish' ? { tokens: moment.output?.usage.totalTokens } : undefined);
 * ```
 */
export type UIMessageMoment = { type: 'start' } | { type: 'finish'; status: ConversationStatus; output?: Omit<RunOutput, 'messages'> };

/**
 * How a conversation's events become one assistant UI message.
 *
 * @example
 * ```ts
 * const options: UIMessageMapperOptions = {
 *   messageId: 'm3',
 *   errorText: (error) => `The model failed: ${error.message}`,
 *   messageMetadata: (moment) => (moment.type === 'finish' ? { usage: moment.output?.usage } : undefined),
 * };
 * ```
 */
export type UIMessageMapperOptions = {
  /** The assistant message's id (the `start` chunk's `messageId`); none lets the client name it. */
  messageId?: string;
  /**
   * The text of the `error` chunk of a run that ended in `error`. The default names the error's
   * code and status only: a provider's message can say more than a browser should see.
   */
  errorText?: (error: RunError) => string;
  /** Metadata for the `start` and `finish` chunks (`message.metadata` on the client); none by default. */
  messageMetadata?: (moment: UIMessageMoment) => unknown;
  /**
   * Calls whose approval the request this stream answers has just answered: the message already
   * shows them, and their outcome belongs in it also when it comes from an agent's child.
   */
  answeredApprovals?: readonly string[];
};

/**
 * Turns a conversation's stream events into the chunks of one assistant UI message, in order: one
 * mapper per message stream. Pure bookkeeping: it never reads a clock or the network.
 *
 * @example
 * ```ts
 * const mapper = createUIMessageMapper({ messageId: 'm1' });
 * const chunks = [...mapper.start(), ...mapper.map({ type: 'text.delta', delta: 'Hi' })];
 * ```
 */
export interface UIMessageMapper {
  /** The `start` chunk (`messageId` when the options did not know it yet). */
  start(messageId?: string): UIMessageChunk[];
  /** The chunks an event becomes (none for events a UI message has no place for). */
  map(event: ConversationStreamEvent): UIMessageChunk[];
  /**
   * Ends the message where it stands: open parts end, then an `error` chunk when `errorText` is
   * given, then `finish`. Nothing once the message is finished.
   */
  end(ending?: MessageEnding): UIMessageChunk[];
  /** Whether `finish` was written (the run ended, or `end` was called). */
  readonly finished: boolean;
  /** Whether the last state the stream saw waits for approval. */
  readonly waiting: boolean;
}

/**
 * How a message ends when its run has not: an `error` chunk with `errorText`, an `abort` chunk with
 * `abort` as its reason, the `finish` chunk's reason, and the status `messageMetadata` is told.
 *
 * @example
 * ```ts
 * const paused: MessageEnding = { finishReason: 'tool-calls', status: 'awaitingApproval' };
 * ```
 */
export type MessageEnding = {
  errorText?: string;
  abort?: string;
  finishReason?: UIMessageFinishChunk['finishReason'];
  status?: ConversationStatus;
};

/** A tool call as far as this message has shown it. */
type CallState = {
  name: string | undefined;
  /** `tool-input-start` written. */
  started: boolean;
  /** `tool-input-available` written. */
  available: boolean;
  /** Argument text that came before the call's name. */
  pendingArgs: string;
  /** The argument text streamed so far (what an abandoned call shows as its input). */
  argsText: string;
  /** The call ran (`tool.started`): an error result then is the tool's, not a denial. */
  executed: boolean;
  /** A call of an agent call's child: its result comes inside `agent.event`. */
  deep: boolean;
};

const finishReasons: Record<FinishReason, UIMessageFinishChunk['finishReason']> = {
  stop: 'stop',
  'tool-calls': 'tool-calls',
  length: 'length',
  'content-filter': 'content-filter',
  refusal: 'content-filter',
  pause: 'other',
  other: 'other',
};

const defaultErrorText = (error: RunError) =>
  `the run failed: ${error.code ?? error.name}${error.status === undefined ? '' : ` (status ${error.status})`}`;

/** Why a run halted, in words a user can act on; the details a halt carries that are meant for users. */
function haltText(output: Omit<RunOutput, 'messages'>): string {
  const reason = output.reason ?? 'halted';
  if (output.reason === 'tool_halt' && output.text !== '') return `the run halted (tool_halt): ${output.text}`;
  if (output.reason === 'guardrail' && output.guardrail) return `the run halted (guardrail ${output.guardrail.name})`;
  if (output.reason === 'budget' && output.budget) return `the run halted (budget: ${output.budget.limit})`;
  return `the run halted (${reason})`;
}

/**
 * Creates the mapper of one message stream. Text ids (`text-1`, `reasoning-2`, …) count from 1 in
 * each stream: a part ends before the next begins, so they never overlap.
 *
 * @example
 * ```ts
 * const mapper = createUIMessageMapper({ messageId: 'm1' });
 * for (const event of events) for (const chunk of mapper.map(event)) controller.enqueue(chunk);
 * ```
 */
export function createUIMessageMapper(options: UIMessageMapperOptions = {}): UIMessageMapper {
  const errorText = options.errorText ?? defaultErrorText;
  const calls = new Map<string, CallState>();
  let open: { type: 'text' | 'reasoning'; id: string } | undefined;
  let serial = 0;
  let stepOpen = false;
  let finished = false;
  let waiting = false;

  for (const toolCallId of options.answeredApprovals ?? []) {
    calls.set(toolCallId, { name: undefined, started: true, available: true, pendingArgs: '', argsText: '', executed: false, deep: true });
  }

  const metadata = (moment: UIMessageMoment) => {
    const value = options.messageMetadata?.(moment);
    return value === undefined ? {} : { messageMetadata: value };
  };

  const callOf = (toolCallId: string): CallState => {
    let call = calls.get(toolCallId);
    if (!call) {
      call = { name: undefined, started: false, available: false, pendingArgs: '', argsText: '', executed: false, deep: false };
      calls.set(toolCallId, call);
    }
    return call;
  };

  /** Ends the open text or reasoning part: what comes next is a part of its own, in order. */
  const closeOpen = (out: UIMessageChunk[]) => {
    if (!open) return;
    out.push({ type: open.type === 'text' ? 'text-end' : 'reasoning-end', id: open.id });
    open = undefined;
  };

  /** Calls whose arguments were streaming and never completed (a retried request, a run that failed) end as input errors. */
  const abandonPartialCalls = (out: UIMessageChunk[], why: string) => {
    for (const [toolCallId, call] of calls) {
      if (!call.started || call.available) continue;
      out.push({ type: 'tool-input-error', toolCallId, toolName: call.name ?? 'unknown', input: call.argsText, errorText: why });
      call.available = true;
    }
  };

  const appendDelta = (out: UIMessageChunk[], type: 'text' | 'reasoning', delta: string) => {
    if (delta === '') return;
    if (open?.type !== type) {
      closeOpen(out);
      open = { type, id: `${type}-${++serial}` };
      out.push({ type: type === 'text' ? 'text-start' : 'reasoning-start', id: open.id });
    }
    out.push(type === 'text' ? { type: 'text-delta', id: open.id, delta } : { type: 'reasoning-delta', id: open.id, delta });
  };

  const showCall = (out: UIMessageChunk[], toolCallId: string, name: string, args: unknown) => {
    const call = callOf(toolCallId);
    call.name = name;
    if (!call.started) {
      out.push({ type: 'tool-input-start', toolCallId, toolName: name });
      call.started = true;
    }
    out.push({ type: 'tool-input-available', toolCallId, toolName: name, input: args });
    call.available = true;
  };

  const showResult = (out: UIMessageChunk[], { toolCallId, result, isError, content }: Omit<ToolResultEvent, 'type' | 'name'>) => {
    const call = calls.get(toolCallId);
    if (isError && !call?.executed && toolErrorType(result) === 'denied') out.push({ type: 'tool-output-denied', toolCallId });
    else if (isError) out.push({ type: 'tool-output-error', toolCallId, errorText: result });
    else out.push({ type: 'tool-output-available', toolCallId, output: content ? toolContentOutput(content) : toolOutputOf(result) });
  };

  const finish = (out: UIMessageChunk[], ending: MessageEnding, output?: Omit<RunOutput, 'messages'>) => {
    if (finished) return;
    closeOpen(out);
    abandonPartialCalls(out, ending.errorText ?? 'the run ended before the call was complete');
    if (stepOpen) out.push({ type: 'finish-step' });
    stepOpen = false;
    if (ending.errorText !== undefined) out.push({ type: 'error', errorText: ending.errorText });
    if (ending.abort !== undefined) out.push({ type: 'abort', reason: ending.abort });
    const status = ending.status ?? output?.status ?? 'running';
    out.push({
      type: 'finish',
      ...(ending.finishReason ? { finishReason: ending.finishReason } : {}),
      ...metadata({ type: 'finish', status, ...(output ? { output } : {}) }),
    });
    finished = true;
  };

  const mapEmitted = (out: UIMessageChunk[], event: ConversationEmittedEvent) => {
    switch (event.type) {
      case 'request.started':
        closeOpen(out);
        abandonPartialCalls(out, 'discarded: the request was made again');
        if (stepOpen) out.push({ type: 'finish-step' });
        out.push({ type: 'start-step' });
        stepOpen = true;
        return;
      case 'text.delta':
        appendDelta(out, 'text', event.delta);
        return;
      case 'reasoning.delta':
        appendDelta(out, 'reasoning', event.delta);
        return;
      case 'tool.call.delta': {
        closeOpen(out);
        const call = callOf(event.toolCallId);
        if (call.available) return;
        call.name ??= event.name;
        call.argsText += event.argsDelta;
        if (!call.started && call.name === undefined) {
          call.pendingArgs += event.argsDelta;
          return;
        }
        if (!call.started && call.name !== undefined) {
          out.push({ type: 'tool-input-start', toolCallId: event.toolCallId, toolName: call.name });
          call.started = true;
        }
        const delta = call.pendingArgs + event.argsDelta;
        call.pendingArgs = '';
        if (delta !== '') out.push({ type: 'tool-input-delta', toolCallId: event.toolCallId, inputTextDelta: delta });
        return;
      }
      case 'tool.call':
        closeOpen(out);
        showCall(out, event.toolCallId, event.name, event.args);
        return;
      case 'tool.approval.requested': {
        closeOpen(out);
        const call = calls.get(event.toolCallId);
        // A child's call (or one this stream did not see made) gets its part first: the client files the approval under it.
        if (!call?.available) showCall(out, event.toolCallId, event.name, event.args);
        if ((event.path?.length ?? 0) > 0) callOf(event.toolCallId).deep = true;
        out.push({ type: 'tool-approval-request', approvalId: event.toolCallId, toolCallId: event.toolCallId });
        return;
      }
      case 'tool.started':
        callOf(event.toolCallId).executed = true;
        return;
      case 'tool.result':
        showResult(out, event);
        return;
      case 'tool.progress':
        // The AI SDK shows a preliminary output in the call's part until the final one replaces it.
        if (calls.get(event.toolCallId)?.available)
          out.push({ type: 'tool-output-available', toolCallId: event.toolCallId, output: event.data, preliminary: true });
        return;
      case 'agent.event': {
        // Only the calls of a child this message shows (those that asked for approval) get their outcome here.
        const inner = event.event;
        if ((inner.type === 'tool.started' || inner.type === 'tool.result') && calls.get(inner.toolCallId)?.deep) mapEmitted(out, inner);
        return;
      }
      case 'request.retry':
      case 'provider.fallback':
      case 'request.interrupted':
        closeOpen(out);
        return;
      default:
        return;
    }
  };

  return {
    get finished() {
      return finished;
    },
    get waiting() {
      return waiting;
    },
    start(messageId = options.messageId) {
      return [{ type: 'start', ...(messageId === undefined ? {} : { messageId }), ...metadata({ type: 'start' }) }];
    },
    map(event) {
      const out: UIMessageChunk[] = [];
      if (finished) return out;
      if (event.type !== 'state') {
        mapEmitted(out, event);
        return out;
      }
      waiting = event.status === 'awaitingApproval';
      const output = event.output;
      if (!output) return out;
      if (output.status === 'error') {
        finish(
          out,
          { errorText: errorText(output.error ?? { name: 'Error', message: 'unknown error', retryable: false }), finishReason: 'error' },
          output,
        );
      } else if (output.status === 'halted' && output.reason === 'cancelled') {
        finish(out, { abort: 'cancelled', finishReason: 'other' }, output);
      } else if (output.status === 'halted') {
        finish(out, { errorText: haltText(output), finishReason: 'other' }, output);
      } else {
        finish(out, { finishReason: output.finishReason ? finishReasons[output.finishReason] : 'stop' }, output);
      }
      return out;
    },
    end(ending = {}) {
      const out: UIMessageChunk[] = [];
      finish(out, ending);
      return out;
    },
  };
}
