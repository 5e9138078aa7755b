import { option, type OptionSchema } from '../util/option-schema.js';
import type { ConversationStatus, ListOptions } from './conversation-store.js';

const statuses: ReadonlySet<string> = new Set<ConversationStatus>(['idle', 'running', 'awaitingApproval', 'done', 'halted', 'error']);

/** The most entries one `list` or `readLog` call returns unless asked for fewer. */
export const defaultListLimit = 1000;

const statusSchema: OptionSchema<ReadonlySet<string> | undefined> = option.transform(
  option.optional(
    option.matching(`a conversation status or an array of them (${[...statuses].join(', ')})`, (value): value is ListOptions['status'] =>
      typeof value === 'string' ? statuses.has(value) : Array.isArray(value) && value.every((one) => statuses.has(one)),
    ),
  ),
  (status) => (status === undefined ? undefined : new Set(typeof status === 'string' ? [status] : status)),
);

/** A page size. Its errors name the method (`list: limit`): both calls take a `limit`, and the stores always told them apart. */
function limitSchema(method: 'list' | 'readLog'): OptionSchema<number> {
  const limit = option.withDefault(option.integer({ minimum: 1, expected: 'a positive integer' }), defaultListLimit);
  return { expected: limit.expected, resolve: (value) => limit.resolve(value, `${method}: limit`) };
}

const listLimitSchema = limitSchema('list');
const readLogLimitSchema = limitSchema('readLog');

/**
 * A store's `list` options: `status` as the set of statuses selected (`undefined`: all), `limit`
 * defaulted. `after` is the store's to compare. Unknown keys are ignored, as stores always did.
 */
export const listOptionsSchema = option.object(
  { status: statusSchema, after: option.unchecked<string | undefined>(), limit: listLimitSchema },
  { expected: 'an object { status?, after?, limit? }', unknownKeys: 'ignore' },
);

/** A store's `readLog` options, `afterSeq` (`??` as before: `null` too reads from the start) and `limit` defaulted. */
export const readLogOptionsSchema = option.object(
  {
    afterSeq: option.transform(option.unchecked<number | null | undefined>(), (afterSeq) => afterSeq ?? 0),
    limit: readLogLimitSchema,
  },
  { expected: 'an object { afterSeq?, limit? }', unknownKeys: 'ignore' },
);

/** The statuses a `list` call selects (`undefined`: all), for a store that resolves its options one at a time. */
export function statusFilter(status: ListOptions['status']): ReadonlySet<string> | undefined {
  return statusSchema.resolve(status, 'status');
}

/** A page size, {@link defaultListLimit} when absent, for a store that resolves its options one at a time. */
export function listLimit(limit: number | undefined, method: 'list' | 'readLog'): number {
  return (method === 'list' ? listLimitSchema : readLogLimitSchema).resolve(limit, '');
}
