import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { ConversationStatus, ListOptions } from './conversation-store.js';

const statuses: ReadonlySet<string> = new Set<ConversationStatus>(['idle', 'running', 'awaitingApproval', 'done', 'halted', 'error']);

/** The most entries one `list` or `readLog` call returns unless asked for fewer. */
export const defaultListLimit = 1000;

/** The statuses a `list` call selects (`undefined`: all), checked. */
export function statusFilter(status: ListOptions['status']): ReadonlySet<string> | undefined {
  if (status === undefined) return undefined;
  const wanted = typeof status === 'string' ? [status] : status;
  if (!Array.isArray(wanted) || wanted.some((one) => !statuses.has(one))) {
    throw new InvalidOptionsError('status', `a conversation status or an array of them (${[...statuses].join(', ')})`, status);
  }
  return new Set(wanted);
}

/** A page size, checked: a positive integer, {@link defaultListLimit} when absent. */
export function listLimit(limit: number | undefined, method: string): number {
  if (limit === undefined) return defaultListLimit;
  if (!Number.isInteger(limit) || limit < 1) throw new InvalidOptionsError(`${method}: limit`, 'a positive integer', limit);
  return limit;
}
