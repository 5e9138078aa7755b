import { option, resolveOptionsWith } from '../util/option-schema.js';

/** The `keepSteps` store option: `Infinity` (keep every step) when absent. */
export const keepStepsSchema = option.withDefault(
  option.integer({ minimum: 1, expected: 'a positive integer (how many of the latest steps to keep), or absent to keep all' }),
  Number.POSITIVE_INFINITY,
);

const memoryStoreOptionsSchema = option.object(
  {
    keepSteps: keepStepsSchema,
  },
  { expected: 'an object { keepSteps? }', unknownKeys: 'ignore' },
);

/** memoryStore's options, checked: `keepSteps` is `Infinity` when absent (every step is kept). */
export function memoryStoreOptions(options: { keepSteps?: number } | undefined): { keepSteps: number } {
  return resolveOptionsWith(memoryStoreOptionsSchema, options ?? {});
}

/**
 * The steps a store keeps once revision `latest` is written: the last `keep` revisions. Steps are
 * kept in revision order, so the ones to drop are a prefix.
 *
 * @example
 * ```ts
 * pruneStepsBelow([{ revision: 1 }, { revision: 2 }, { revision: 3 }], 3, 2); // [{ revision: 2 }, { revision: 3 }]
 * ```
 */
export function pruneStepsBelow<Step extends { revision: number }>(steps: Step[], latest: number, keep: number): Step[] {
  const oldest = latest - keep + 1;
  const first = steps.findIndex((step) => step.revision >= oldest);
  return first <= 0 ? steps : steps.slice(first);
}
