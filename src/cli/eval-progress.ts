import type { EvalItemResult } from '../testing/eval/evaluate.js';
import type { ProgressOutput } from './progress.js';

/**
 * The bar's text: `[#####.....] 12/40 · mean 0.83 · 4 errors` (the mean over the items done; an
 * item with an error counts 0, as in the report).
 *
 * @example
 * ```ts
 * evalProgressLine({ done: 12, total: 40, sum: 9.96, errors: 4 }); // '[######..............] 12/40 · mean 0.83 · 4 errors'
 * ```
 */
export function evalProgressLine({ done, total, sum, errors }: { done: number; total: number; sum: number; errors: number }, width = 20) {
  const filled = total === 0 ? width : Math.min(width, Math.floor((done / total) * width));
  const parts = [`[${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`];
  if (done > 0) parts.push(`mean ${(sum / done).toFixed(2)}`);
  if (errors > 0) parts.push(`${errors} error${errors === 1 ? '' : 's'}`);
  return parts.join(' · ');
}

/**
 * An eval's progress bar on stderr. On a terminal it is one line redrawn in place as each item is
 * scored; on a pipe it is a plain line (`[actorloop] [####......] 4/10 · mean 0.75`) each time
 * another tenth of the items is done, with no control characters. `finish` ends the line.
 *
 * @example
 * ```ts
 * const progress = evalProgress(process.stderr, items.length);
 * const report = await evaluate({ machine, dataset: items, scorers, onItem: progress.item });
 * progress.finish();
 * ```
 */
export function evalProgress(output: ProgressOutput, total: number) {
  const tty = output.isTTY === true;
  const state = { done: 0, total, sum: 0, errors: 0 };
  let tenths = 0;
  let drawn = false;
  const draw = () => {
    if (tty) {
      output.write(`\r\x1b[K${evalProgressLine(state)}`);
      drawn = true;
      return;
    }
    const now = total === 0 ? 10 : Math.floor((state.done * 10) / total);
    if (now <= tenths) return;
    tenths = now;
    output.write(`[actorloop] ${evalProgressLine(state)}\n`);
  };
  if (tty) draw();
  return {
    /** An item scored (`evaluate`'s `onItem`). */
    item: (result: EvalItemResult) => {
      state.done += 1;
      state.sum += result.mean;
      if (result.error !== undefined) state.errors += 1;
      draw();
    },
    /** Ends the bar: on a terminal the line stays, the next output starts below it. */
    finish: () => {
      if (tty && drawn) output.write('\n');
      drawn = false;
    },
  };
}
