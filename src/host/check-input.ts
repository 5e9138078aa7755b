import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { ConversationInput, ConversationUserEvent } from '../machines/hostable.js';
import { isRecord } from '../util/is-record.js';
import { findJsonProblem } from '../util/json-problem.js';
import { statusOf } from './conversation-view.js';
import type { DecodedSnapshot } from './decode-stored.js';
import { EventRejectedError } from './errors/event-rejected-error.js';

type RunState = Parameters<typeof statusOf>[0];

const userEventTypes = new Set(['user.message', 'user.interrupt', 'tool.approve', 'tool.deny', 'cancel']);
const maxIdLength = 1024;

/** Throws `InvalidOptionsError` unless `id` is a conversation id: a non-empty string of at most 1024 characters. */
export function checkConversationId(id: unknown): asserts id is string {
  if (typeof id !== 'string' || id === '' || id.length > maxIdLength) {
    throw new InvalidOptionsError('id', `a conversation id: a non-empty string of at most ${maxIdLength} characters`, id);
  }
}

/** Throws `InvalidOptionsError` unless `event` is an event a caller may send a conversation. */
export function checkUserEvent(event: unknown): asserts event is ConversationUserEvent {
  const expected = 'a user event { type: "user.message" | "user.interrupt" | "tool.approve" | "tool.deny" | "cancel", ... }';
  if (!isRecord(event) || typeof event.type !== 'string' || !userEventTypes.has(event.type)) {
    throw new InvalidOptionsError('event', expected, isRecord(event) ? event.type : event);
  }
  if ((event.type === 'tool.approve' || event.type === 'tool.deny') && typeof event.toolCallId !== 'string') {
    throw new InvalidOptionsError('event.toolCallId', 'the id of the tool call to approve or deny (a string)', event.toolCallId);
  }
  if ((event.type === 'tool.deny' || event.type === 'cancel') && event.reason !== undefined && typeof event.reason !== 'string') {
    throw new InvalidOptionsError('event.reason', 'a string', event.reason);
  }
}

/** Throws `InvalidOptionsError` unless `sessionData` is plain JSON (or absent). */
export function checkSessionData(sessionData: unknown): void {
  const problem = findJsonProblem(sessionData, 'sessionData');
  if (problem) throw new InvalidOptionsError('sessionData', problem.replace(/^sessionData must be /, ''), sessionData);
}

/**
 * The input of a conversation's next run: its id (the prompt cache key when `promptCache` names
 * none), its history, the `sessionData` the starting message sets (`null` clears it) or else the
 * last run's, and (with handoffs) the agent the last run ended with.
 */
export function nextRunInput(
  conversationId: string,
  last: Pick<DecodedSnapshot, 'context'> | undefined,
  sessionData: unknown,
): ConversationInput {
  const kept = sessionData !== undefined ? sessionData : last?.context.sessionData;
  const agent = last?.context.agents?.active;
  return {
    conversationId,
    messages: last?.context.messages ?? [],
    ...(kept === undefined || kept === null ? {} : { sessionData: kept }),
    ...(agent === undefined ? {} : { agent }),
  };
}

/**
 * Throws `EventRejectedError` unless `event` may follow a run that has ended: only a `user.message`
 * starts the next run; an approval or a cancel has nothing left to act on.
 */
export function checkEventAfterEndedRun(conversationId: string, event: ConversationUserEvent, last: RunState): void {
  // With nothing left to interrupt, an interrupt starts the next run as a message does.
  if (event.type === 'user.message' || event.type === 'user.interrupt') return;
  throw new EventRejectedError({
    conversationId,
    eventType: event.type,
    code: 'rejected',
    message: `${event.type} is not accepted: the last run ended (${statusOf(last)}); a user.message starts the next one`,
  });
}

/** Throws `InvalidOptionsError` unless `event` is an event a caller may send a workflow: `{ type, ... }`, plain JSON (the log keeps it). */
export function checkWorkflowEvent(event: unknown): asserts event is { type: string } {
  if (!isRecord(event) || typeof event.type !== 'string' || event.type === '') {
    throw new InvalidOptionsError(
      'event',
      'an event { type: string, ... } the workflow takes (or a user event: tool.approve, tool.deny, cancel)',
      event,
    );
  }
  if (userEventTypes.has(event.type)) return checkUserEvent(event);
  if (event.type.startsWith('xstate.')) {
    throw new InvalidOptionsError('event.type', 'an event of the workflow, not one XState sends itself (xstate.*)', event.type);
  }
  const problem = findJsonProblem(event, 'event');
  if (problem) throw new InvalidOptionsError('event', problem.replace(/^event must be /, ''), event);
}

/**
 * The input of a run `host.start` begins: the machine's own `input` (plain JSON: a stored run
 * restores from it), with `sessionData` as `input.sessionData`; a conversation's gets its id as
 * `conversationId` (the prompt cache key when `promptCache` names none), as `send` gives it.
 */
export function startInput(id: string, options: unknown, workflow: boolean): unknown {
  if (!isRecord(options)) throw new InvalidOptionsError('options', 'an object { input?, sessionData? }', options);
  const { input, sessionData } = options;
  const problem = findJsonProblem(input, 'options.input');
  if (problem) throw new InvalidOptionsError('options.input', problem.replace(/^options\.input must be /, ''), input);
  if (sessionData !== undefined) checkSessionData(sessionData);
  if (input !== undefined && !isRecord(input) && (sessionData !== undefined || !workflow)) {
    throw new InvalidOptionsError(
      'options.input',
      workflow ? 'an object, to take sessionData' : 'a ConversationInput object, e.g. conversationInput(prompt)',
      input,
    );
  }
  const base = (input ?? {}) as Record<string, unknown>;
  if (input === undefined && sessionData === undefined && workflow) return undefined;
  if (!isRecord(input) && input !== undefined) return input;
  return {
    ...(workflow ? {} : { conversationId: id }),
    ...base,
    ...(sessionData === undefined || sessionData === null ? {} : { sessionData }),
  };
}
