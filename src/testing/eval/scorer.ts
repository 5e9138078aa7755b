import type { RunOutput } from '../../machines/names/types.js';
import type { Usage } from '../../model/usage.js';
import type { EvalItem } from './eval-dataset.js';

/**
 * What a scorer looks at: the item, what the machine gave (a conversation's `RunOutput`, a
 * workflow's own output), and how long the run took.
 *
 * @example
 * ```ts
 * const short: Scorer = { name: 'short', score: ({ output }: ScoreContext) => (textOf(output).length < 200 ? 1 : 0) };
 * ```
 */
export type ScoreContext<TExpected = unknown> = {
  item: EvalItem<TExpected>;
  /** The `RunOutput` of a conversation machine; a workflow's output as its final state gave it. */
  output: RunOutput | unknown;
  expected: TExpected | undefined;
  durationMs: number;
  /** Aborted when the eval is (a judge's request stops with it). */
  signal: AbortSignal;
};

/**
 * A score from 0 (fail) to 1 (pass), with the reason when the scorer has one, and what scoring
 * spent when it asked a model (`usage`, `costUsd`: a judge's; the eval's totals and budget count
 * them). A scorer that throws, or scores outside 0..1, gives its item an error instead — never a pass.
 *
 * @example
 * ```ts
 * const score: Score = { score: 0.5, reason: 'one of the two cities named' };
 * ```
 */
export type Score = number | { score: number; reason?: string; usage?: Usage; costUsd?: number };

/**
 * A way of scoring an answer: the built-in `scorers.*`, `llmJudge(...)`, or your own.
 *
 * @example
 * ```ts
 * const polite: Scorer = { name: 'polite', score: ({ output }) => (/please|thank/i.test(textOf(output)) ? 1 : 0) };
 * ```
 */
export type Scorer<TExpected = unknown> = {
  /** The column of the report (unique among an eval's scorers). */
  name: string;
  score(context: ScoreContext<TExpected>): Score | Promise<Score>;
};

/**
 * The answer as text: a conversation's final `text`; a string output as it is; any other output as JSON.
 *
 * @example
 * ```ts
 * textOf({ status: 'done', text: 'Paris', messages: [] }); // 'Paris'
 * ```
 */
export function textOf(output: unknown): string {
  if (typeof output === 'string') return output;
  if (typeof output === 'object' && output !== null && typeof (output as { text?: unknown }).text === 'string')
    return (output as { text: string }).text;
  return JSON.stringify(output) ?? '';
}
