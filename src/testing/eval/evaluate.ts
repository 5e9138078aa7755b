import { type AnyStateMachine, createActor, toPromise } from 'xstate';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { isConversationMachine } from '../../machines/names/conversation-mark.js';
import type { RunOutput } from '../../machines/names/types.js';
import { conversationInput } from '../../machines/workflow/conversation-input.js';
import { addUsage, emptyUsage, type Usage } from '../../model/usage.js';
import { isRecord } from '../../util/is-record.js';
import { checkDataset, type EvalItem, loadDataset } from './eval-dataset.js';
import { type Score, type Scorer, textOf } from './scorer.js';

/**
 * What {@link evaluate} takes.
 *
 * @example
 * ```ts
 * const options: EvaluateOptions = { machine, dataset: 'evals/capitals.jsonl', scorers: [scorers.exact()], concurrency: 8 };
 * ```
 */
export type EvaluateOptions = {
  /** A conversation machine (each item's `input` is its prompt or history), or a workflow (its input). */
  machine: AnyStateMachine;
  /** The items, or the path of a JSONL file of them. */
  dataset: readonly unknown[] | string;
  scorers: readonly Scorer[];
  /** Items run at once. Default 4. */
  concurrency?: number;
  /** For the whole eval: once spent, no further item starts (those left get an error). */
  budget?: { maxCostUsd?: number; maxTokens?: number };
  /** A run that takes longer is cancelled and its item gets an error. Default: none. */
  itemTimeoutMs?: number;
  /** Stops the eval: running items are cancelled, none starts. */
  signal?: AbortSignal;
  /** Called as each item is scored (a progress bar, a log line). */
  onItem?: (result: EvalItemResult, progress: { done: number; total: number }) => void;
};

/**
 * One item's result: its scores by scorer, or the error that kept it from a full set (its machine
 * failed, a scorer failed or scored outside 0..1, a judge gave no verdict, the budget ran out).
 *
 * @example
 * ```ts
 * for (const item of report.items) if (item.error) console.error(item.id, item.error);
 * ```
 */
export type EvalItemResult = {
  id: string;
  scores: Record<string, number>;
  /** Why a scorer scored as it did, where it said. */
  reasons: Record<string, string>;
  error?: string;
  /** The mean of its scores; 0 for an item with an error (never a pass). */
  mean: number;
  /** A conversation's end (`done`, `halted`, `error`), its answer, tokens and cost. */
  status?: RunOutput['status'];
  /** Why a conversation's run ended `error` (scored all the same: a `scorers.status()` says it failed). */
  runError?: string;
  text?: string;
  usage?: Usage;
  costUsd?: number;
  durationMs: number;
};

/**
 * What an eval found: every item, the mean over items (an item with an error counts 0), each
 * scorer's mean over the items it scored, and what the eval spent.
 *
 * @example
 * ```ts
 * const report: EvalReport = await evaluate({ machine, dataset, scorers });
 * if (report.mean < 0.9) process.exitCode = 1;
 * ```
 */
export type EvalReport = {
  items: EvalItemResult[];
  mean: number;
  scorers: Record<string, { mean: number; scored: number }>;
  /** Tokens the runs and the scorers spent together. */
  usage: Usage;
  /** The scorers' share of `usage` (a judge's tokens). */
  scoringUsage: Usage;
  /** Present when the machine prices its runs (`prices`), or a judge its verdicts; both counted. */
  costUsd?: number;
  durationMs: number;
  /** Why items were left unrun. */
  stopped?: 'budget' | 'aborted';
};

const errorText = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));

function checkOptions(options: EvaluateOptions): void {
  if (!isRecord(options)) throw new InvalidOptionsError('evaluate(options)', 'an object { machine, dataset, scorers, … }', options);
  const { machine, scorers, concurrency = 4, budget, itemTimeoutMs } = options;
  if (!isRecord(machine) || !('root' in machine))
    throw new InvalidOptionsError('evaluate(options).machine', 'a state machine (createConversationMachine(...), or a workflow)', machine);
  if (!Array.isArray(scorers) || scorers.length === 0)
    throw new InvalidOptionsError('evaluate(options).scorers', 'a non-empty array of scorers', scorers);
  const names = new Set<string>();
  scorers.forEach((scorer, index) => {
    if (!isRecord(scorer) || typeof scorer.name !== 'string' || scorer.name === '' || typeof scorer.score !== 'function')
      throw new InvalidOptionsError(
        `evaluate(options).scorers[${index}]`,
        'a scorer { name, score(context) } (scorers.*, llmJudge(...))',
        scorer,
      );
    if (names.has(scorer.name))
      throw new InvalidOptionsError(
        `evaluate(options).scorers[${index}].name`,
        `a name no other scorer has ("${scorer.name}" is taken; pass { name })`,
        scorer.name,
      );
    names.add(scorer.name);
  });
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new InvalidOptionsError('evaluate(options).concurrency', 'an integer ≥ 1', concurrency);
  if (itemTimeoutMs !== undefined && !(Number.isFinite(itemTimeoutMs) && itemTimeoutMs > 0))
    throw new InvalidOptionsError('evaluate(options).itemTimeoutMs', 'a number of milliseconds > 0', itemTimeoutMs);
  if (budget !== undefined) {
    if (!isRecord(budget)) throw new InvalidOptionsError('evaluate(options).budget', 'an object { maxCostUsd?, maxTokens? }', budget);
    for (const key of ['maxCostUsd', 'maxTokens'] as const) {
      const value = budget[key];
      if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0))
        throw new InvalidOptionsError(`evaluate(options).budget.${key}`, 'a number ≥ 0', value);
    }
  }
}

/** A score checked: a number in 0..1 (with its reason, and what scoring spent). */
function checkedScore(scorer: string, score: Score): { score: number; reason?: string; usage?: Usage; costUsd?: number } {
  const value = typeof score === 'number' ? score : isRecord(score) ? score.score : Number.NaN;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1)
    throw new InvalidOptionsError(`scorer "${scorer}"`, 'a score from 0 to 1 (a number, or { score, reason? })', score);
  if (typeof score === 'number') return { score: value };
  const { reason, usage, costUsd } = score;
  return {
    score: value,
    ...(typeof reason === 'string' ? { reason } : {}),
    ...(isRecord(usage) && typeof usage.totalTokens === 'number' ? { usage } : {}),
    ...(typeof costUsd === 'number' && Number.isFinite(costUsd) ? { costUsd } : {}),
  };
}

/**
 * Runs a machine over a dataset and scores every answer: each item a fresh actor (a conversation
 * from `conversationInput(item.input, { sessionData })`, a workflow from its own input), `concurrency`
 * at a time, then every scorer on what it gave. A machine that fails, a scorer that throws or scores
 * outside 0..1, a judge without a verdict: an error for that item, which counts 0. A `budget` stops
 * the eval from starting items once the tokens or cost spent reach it.
 *
 * @example
 * ```ts
 * import { evaluate, scorers } from 'actorloop/testing';
 *
 * const report = await evaluate({
 *   machine,
 *   dataset: [{ id: 'add', input: 'What is 2+3?', expected: '5' }],
 *   scorers: [scorers.includes(), scorers.toolUsed('add'), scorers.maxTokens(2_000)],
 * });
 * console.log(report.mean, report.items[0]?.scores);
 * ```
 */
export async function evaluate(options: EvaluateOptions): Promise<EvalReport> {
  checkOptions(options);
  const { machine, scorers, concurrency = 4, budget, itemTimeoutMs, signal, onItem } = options;
  const items: EvalItem[] = typeof options.dataset === 'string' ? await loadDataset(options.dataset) : checkDataset(options.dataset);
  const conversation = isConversationMachine(machine);
  const started = performance.now();
  const results: EvalItemResult[] = new Array(items.length);
  const abort = new AbortController();
  const stop = () => abort.abort();
  signal?.addEventListener('abort', stop, { once: true });
  if (signal?.aborted) abort.abort();
  // What the runs and the scorers (a judge) spent: the budget counts both.
  let usage = emptyUsage();
  let scoringUsage = emptyUsage();
  let cost: number | undefined;
  let stopped: EvalReport['stopped'];
  let next = 0;
  let done = 0;

  const spent = () =>
    (budget?.maxTokens !== undefined && usage.totalTokens >= budget.maxTokens) ||
    (budget?.maxCostUsd !== undefined && (cost ?? 0) >= budget.maxCostUsd);

  async function run(item: EvalItem): Promise<EvalItemResult> {
    const begin = performance.now();
    const base = { id: item.id, scores: {}, reasons: {} };
    const input = conversation
      ? conversationInput(item.input as never, item.sessionData === undefined ? {} : { sessionData: item.sessionData })
      : item.input;
    let output: unknown;
    let timedOut = false;
    const actor = createActor(machine, { input });
    // A conversation ends on `cancel` with its output; any other machine is stopped.
    const halt = () => (conversation ? actor.send({ type: 'cancel', reason: 'the eval stopped it' }) : actor.stop());
    const timeout = () => {
      timedOut = true;
      halt();
    };
    const timer = itemTimeoutMs === undefined ? undefined : setTimeout(timeout, itemTimeoutMs);
    abort.signal.addEventListener('abort', halt, { once: true });
    try {
      actor.start();
      output = await toPromise(actor);
    } catch (error) {
      return { ...base, error: `the machine failed: ${errorText(error)}`, mean: 0, durationMs: performance.now() - begin };
    } finally {
      clearTimeout(timer);
      abort.signal.removeEventListener('abort', halt);
    }
    const durationMs = performance.now() - begin;
    const run = conversation && isRecord(output) ? (output as unknown as RunOutput) : undefined;
    if (run) {
      usage = addUsage(usage, run.usage);
      if (run.cost) cost = (cost ?? 0) + run.cost.total;
    }
    const facts = run
      ? {
          status: run.status,
          text: run.text,
          usage: run.usage,
          ...(run.error ? { runError: run.error.message } : {}),
          ...(run.cost ? { costUsd: run.cost.total } : {}),
        }
      : { text: textOf(output) };
    if (timedOut) return { ...base, ...facts, error: `timed out after ${itemTimeoutMs} ms`, mean: 0, durationMs };
    // A run the abort cut short says nothing about the machine: not scored.
    if (abort.signal.aborted) return { ...base, ...facts, error: 'stopped: the eval was aborted during this run', mean: 0, durationMs };
    const scores: Record<string, number> = {};
    const reasons: Record<string, string> = {};
    const errors: string[] = [];
    for (const scorer of scorers) {
      try {
        const checked = checkedScore(
          scorer.name,
          await scorer.score({ item, output, expected: item.expected, durationMs, signal: abort.signal }),
        );
        scores[scorer.name] = checked.score;
        if (checked.reason !== undefined) reasons[scorer.name] = checked.reason;
        if (checked.usage) {
          scoringUsage = addUsage(scoringUsage, checked.usage);
          usage = addUsage(usage, checked.usage);
        }
        if (checked.costUsd !== undefined) cost = (cost ?? 0) + checked.costUsd;
      } catch (error) {
        errors.push(`${scorer.name}: ${errorText(error)}`);
      }
    }
    const values = Object.values(scores);
    const mean = errors.length > 0 ? 0 : values.reduce((sum, value) => sum + value, 0) / values.length;
    return { id: item.id, scores, reasons, ...facts, ...(errors.length > 0 ? { error: errors.join('; ') } : {}), mean, durationMs };
  }

  async function worker(): Promise<void> {
    for (;;) {
      const index = next++;
      const item = items[index];
      if (item === undefined) return;
      let result: EvalItemResult;
      if (abort.signal.aborted || spent()) {
        stopped ??= abort.signal.aborted ? 'aborted' : 'budget';
        const why = stopped === 'budget' ? 'not run: the eval budget was spent' : 'not run: the eval was aborted';
        result = { id: item.id, scores: {}, reasons: {}, error: why, mean: 0, durationMs: 0 };
      } else {
        result = await run(item);
      }
      results[index] = result;
      done++;
      try {
        onItem?.(result, { done, total: items.length });
      } catch {
        // A progress callback that throws must not lose the eval.
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(items.length, 1)) }, worker));
  } finally {
    signal?.removeEventListener('abort', stop);
  }
  if (abort.signal.aborted) stopped = 'aborted';
  const byScorer: EvalReport['scorers'] = {};
  for (const scorer of scorers) {
    const values = results.flatMap((result) => (scorer.name in result.scores ? [result.scores[scorer.name] as number] : []));
    byScorer[scorer.name] = {
      mean: values.length ? values.reduce((sum, value) => sum + value, 0) / values.length : 0,
      scored: values.length,
    };
  }
  return {
    items: results,
    mean: results.length ? results.reduce((sum, result) => sum + result.mean, 0) / results.length : 0,
    scorers: byScorer,
    usage,
    scoringUsage,
    ...(cost === undefined ? {} : { costUsd: cost }),
    durationMs: performance.now() - started,
    ...(stopped ? { stopped } : {}),
  };
}
