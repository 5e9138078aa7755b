import { userContentText } from '../../model/messages.js';
import type { ConversationEmittedEvent, ConversationStateValue, ConversationUserEvent } from '../../machines/types.js';

/**
 * What a line of a run's log is about.
 *
 * @example
 * ```ts
 * const errors = run.log.filter((entry) => (['retry', 'rejected'] as RunLogKind[]).includes(entry.kind));
 * ```
 */
export type RunLogKind =
  | 'state'
  | 'user'
  | 'request'
  | 'retry'
  | 'tool-call'
  | 'tool-result'
  | 'approval-requested'
  | 'approved'
  | 'denied'
  | 'cancel'
  | 'usage'
  | 'doom-loop'
  | 'rejected'
  | 'error';

/**
 * One line of a run's log in the live viewer: when (ms since the epoch), what, and a short text.
 *
 * @example
 * ```ts
 * const entry: RunLogEntry = { seq: 3, at: Date.now(), kind: 'tool-call', text: 'add({"a":2,"b":3})' };
 * ```
 */
export type RunLogEntry = { seq: number; at: number; kind: RunLogKind; text: string; isError?: boolean };

const limit = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A value as short JSON, for one line of a log. */
export function shortJson(value: unknown, max = 200): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return limit(text.replace(/\s+/g, ' '), max);
}

/** `{ requesting: 'waiting' }` → `requesting.waiting`. */
export function stateLabel(value: ConversationStateValue | unknown): string {
  return activePaths(value).at(-1) ?? String(value);
}

/** Every active state's path, outermost first: `{ requesting: 'waiting' }` → `['requesting', 'requesting.waiting']`. */
export function activePaths(value: unknown, prefix = ''): string[] {
  if (typeof value === 'string') return [`${prefix}${value}`];
  if (typeof value !== 'object' || value === null) return [];
  const paths: string[] = [];
  for (const [key, inner] of Object.entries(value)) {
    const path = `${prefix}${key}`;
    paths.push(path, ...activePaths(inner, `${path}.`));
  }
  return paths;
}

/** A log line for an emitted event (`undefined` for the streamed deltas, which the text panel shows). */
export function logOfEmitted(event: ConversationEmittedEvent, toolNames: Map<string, string>): Omit<RunLogEntry, 'seq' | 'at'> | undefined {
  switch (event.type) {
    case 'request.started':
      return { kind: 'request', text: `request: round ${event.iteration}, attempt ${event.attempt}` };
    case 'request.retry':
      return {
        kind: 'retry',
        isError: true,
        text: `retry: attempt ${event.attempt} in ${event.delayMs} ms after ${event.error.message}${event.discardPartial ? ' (partial output discarded)' : ''}`,
      };
    case 'tool.call':
      toolNames.set(event.toolCallId, event.name);
      return { kind: 'tool-call', text: `${event.name}(${shortJson(event.args)})` };
    case 'tool.result':
      return { kind: 'tool-result', text: `${event.name} → ${shortJson(event.result, 300)}`, ...(event.isError ? { isError: true } : {}) };
    case 'tool.approval.requested':
      toolNames.set(event.toolCallId, event.name);
      return { kind: 'approval-requested', text: `${event.name}(${shortJson(event.args)}) waits for approval` };
    case 'usage':
      return { kind: 'usage', text: `usage: ${event.step.totalTokens} tokens, ${event.total.totalTokens} in total` };
    case 'doom_loop.detected':
      return {
        kind: 'doom-loop',
        isError: event.action === 'halt',
        text: `doom loop (${event.action}): ${event.pattern.map((call) => call.name).join(', ')} repeated ${event.repeats} times`,
      };
    case 'event.rejected':
      return { kind: 'rejected', isError: true, text: `rejected ${event.eventType}: ${event.message}` };
    default:
      return undefined;
  }
}

/** A log line for an event the run received from its user. */
export function logOfReceived(event: ConversationUserEvent, toolNames: Map<string, string>): Omit<RunLogEntry, 'seq' | 'at'> {
  switch (event.type) {
    case 'user.message':
    case 'user.interrupt':
      return {
        kind: 'user',
        text: `${event.type === 'user.interrupt' ? 'user (interrupt)' : 'user'}: ${shortJson(userContentText(event.content))}`,
      };
    case 'tool.approve':
      return { kind: 'approved', text: `approved ${toolNames.get(event.toolCallId) ?? event.toolCallId}` };
    case 'tool.deny':
      return {
        kind: 'denied',
        text: `denied ${toolNames.get(event.toolCallId) ?? event.toolCallId}${event.reason ? `: ${event.reason}` : ''}`,
      };
    case 'cancel':
      return { kind: 'cancel', text: `cancel${event.reason ? `: ${event.reason}` : ''}` };
  }
}

/** The user events a run's log shows. */
export const userEventTypes: ReadonlySet<string> = new Set(['user.message', 'user.interrupt', 'tool.approve', 'tool.deny', 'cancel']);
