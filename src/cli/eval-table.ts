import type { EvalItemResult, EvalReport } from '../testing/eval/evaluate.js';

/**
 * A value as one line of terminal text: colour and cursor sequences go, other control characters
 * (a newline in an answer) become spaces, so a row stays a row and nothing a dataset holds drives the terminal.
 */
export const terminalText = (text: string): string => text.replace(/\p{Cc}\[[\d;?]*[A-Za-z]/gu, '').replace(/\p{Cc}+/gu, ' ');

/** `text` in `width` columns at most: cut with `…` when longer. */
export function truncate(text: string, width: number): string {
  const characters = Array.from(text);
  if (characters.length <= width) return text;
  if (width <= 0) return '';
  return `${characters.slice(0, width - 1).join('')}…`;
}

const lengthOf = (text: string) => Array.from(text).length;

/** A cost in USD with the digits a small one needs: `$0.000123`, `$0.0421`, `$1.25`. */
export function formatUsd(cost: number | undefined): string {
  if (cost === undefined) return '-';
  if (cost === 0) return '$0';
  return `$${cost.toFixed(cost >= 1 ? 2 : cost >= 0.01 ? 4 : 6)}`;
}

/** A score or mean, two decimals; `-` when the scorer gave none (an item with an error). */
export const formatScore = (score: number | undefined): string => (score === undefined ? '-' : score.toFixed(2));

type Column = {
  header: string;
  cells: string[];
  footer: string;
  align: 'left' | 'right';
  /** Narrowest it may be made to fit the terminal (its text cut with `…`). */
  min: number;
  /** Widest it is drawn even when the terminal has room (an id, a scorer's name). */
  max: number;
};

/** An item's error in a row: its own, else why its conversation ended `error` (scored all the same). */
export const itemErrorText = (item: EvalItemResult): string =>
  item.error ?? (item.runError !== undefined ? `run ended error: ${item.runError}` : '');

/**
 * An eval report as a terminal table: a row per item — id, each scorer's score, mean, status, tokens,
 * cost, duration and (when any item has one) the error — then a footer with each scorer's mean, the
 * overall mean, the tokens, cost and time of the whole eval. The table fits `columns` (ids and
 * errors, then scorer names, cut with `…`); every cell is one line.
 *
 * @example
 * ```ts
 * process.stdout.write(evalTable(report, process.stdout.columns ?? 100));
 * ```
 */
export function evalTable(report: EvalReport, columns = 100): string {
  const { items } = report;
  const scorerNames = Object.keys(report.scorers);
  const errors = items.filter((item) => item.error !== undefined).length;
  const column = (header: string, cells: string[], footer: string, align: Column['align'], min: number, max = Infinity): Column => ({
    header,
    cells: cells.map(terminalText),
    footer,
    align,
    min,
    max,
  });
  const table: Column[] = [
    column(
      'id',
      items.map((item) => item.id),
      'mean',
      'left',
      4,
      32,
    ),
    ...scorerNames.map((name) =>
      column(
        name,
        items.map((item) => formatScore(item.scores[name])),
        formatScore(report.scorers[name]?.mean),
        'right',
        4,
        16,
      ),
    ),
    column(
      'mean',
      items.map((item) => formatScore(item.mean)),
      formatScore(report.mean),
      'right',
      4,
    ),
    column(
      'status',
      items.map((item) => item.status ?? '-'),
      '',
      'left',
      6,
    ),
    column(
      'tokens',
      items.map((item) => (item.usage ? String(item.usage.totalTokens) : '-')),
      String(report.usage.totalTokens),
      'right',
      6,
    ),
    column(
      'cost',
      items.map((item) => formatUsd(item.costUsd)),
      formatUsd(report.costUsd),
      'right',
      4,
    ),
    column(
      'ms',
      items.map((item) => String(Math.round(item.durationMs))),
      String(Math.round(report.durationMs)),
      'right',
      2,
    ),
  ];
  if (items.some((item) => itemErrorText(item) !== ''))
    table.push(
      column(
        'error',
        items.map(itemErrorText),
        [errors > 0 ? `${errors} error${errors === 1 ? '' : 's'}` : '', report.stopped ? `stopped: ${report.stopped}` : '']
          .filter(Boolean)
          .join(', '),
        'left',
        5,
      ),
    );
  const widths = table.map((one) => Math.min(one.max, Math.max(one.min, ...[one.header, one.footer, ...one.cells].map(lengthOf))));
  const gap = 2;
  const over = () => widths.reduce((sum, width) => sum + width, 0) + gap * (widths.length - 1) - Math.max(columns, 20);
  // What gives way: the widest of the error, the id and the scorers' names, a column at a time, so
  // they end up about as wide as each other (none below its minimum).
  const flexible = table.flatMap((one, index) => (one.header === 'error' || index <= scorerNames.length ? [index] : []));
  for (let excess = over(); excess > 0; excess--) {
    const widest = flexible.reduce<number | undefined>((best, index) => {
      const room = (widths[index] ?? 0) - (table[index]?.min ?? 0);
      return room > 0 && (best === undefined || (widths[index] ?? 0) > (widths[best] ?? 0)) ? index : best;
    }, undefined);
    if (widest === undefined) break;
    widths[widest] = (widths[widest] ?? 0) - 1;
  }
  const cell = (text: string, index: number) => {
    const width = widths[index] ?? 0;
    const fitted = truncate(text, width);
    const pad = ' '.repeat(Math.max(0, width - lengthOf(fitted)));
    return table[index]?.align === 'right' ? pad + fitted : fitted + pad;
  };
  const row = (texts: string[]) => texts.map(cell).join(' '.repeat(gap)).replace(/\s+$/, '');
  const rule = widths.map((width) => '-'.repeat(width)).join(' '.repeat(gap));
  return [
    row(table.map((one) => one.header)),
    rule,
    ...items.map((_, index) => row(table.map((one) => one.cells[index] ?? ''))),
    rule,
    row(table.map((one) => one.footer)),
    '',
  ].join('\n');
}
