import { readFile } from 'node:fs/promises';
import type { Message } from '../../model/messages.js';
import type { UserContent } from '../../model/user-content.js';
import { isRecord } from '../../util/is-record.js';
import { DatasetError } from '../dataset-error.js';

/**
 * One case of an eval: what the machine gets (`input`: a prompt, user content, or a whole history —
 * or, for a workflow, its own input), and what a scorer compares the answer with (`expected`).
 *
 * @example
 * ```ts
 * const item: EvalItem = { id: 'paris', input: 'What is the capital of France?', expected: 'Paris' };
 * ```
 */
export type EvalItem<TExpected = unknown> = {
  id: string;
  input: UserContent | Message[] | unknown;
  expected?: TExpected;
  /** Per-run data for the tools (a conversation's `sessionData`). */
  sessionData?: unknown;
};

const shown = (value: unknown) => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 60)}…` : text;
};

/** One item checked: an object with an `input`, an `id` (a string or number; default `item-<n>`). */
function itemOf(value: unknown, n: number, where: { line?: number; index?: number; source?: string }): EvalItem {
  if (!isRecord(value)) throw new DatasetError(`expected an object { id, input, expected? }, got ${shown(value)}`, where);
  if (!('input' in value) || value.input === undefined)
    throw new DatasetError('expected an "input" (the prompt or the messages), got none', where);
  const id = value.id === undefined ? `item-${n}` : value.id;
  if ((typeof id !== 'string' || id === '') && typeof id !== 'number')
    throw new DatasetError(`"id": expected a non-empty string or a number, got ${shown(id)}`, where);
  return {
    id: String(id),
    input: value.input,
    ...('expected' in value ? { expected: value.expected } : {}),
    ...('sessionData' in value ? { sessionData: value.sessionData } : {}),
  };
}

function uniqueIds(items: EvalItem[], where: (index: number) => { line?: number; index?: number; source?: string }): EvalItem[] {
  const seen = new Map<string, number>();
  items.forEach((item, index) => {
    const first = seen.get(item.id);
    if (first !== undefined) throw new DatasetError(`"id": ${JSON.stringify(item.id)} is taken by an earlier item`, where(index));
    seen.set(item.id, index);
  });
  return items;
}

/**
 * A dataset given as an array, checked: every item an object with an `input`, ids unique.
 *
 * @example
 * ```ts
 * const items = checkDataset([{ input: 'What is 2+3?', expected: '5' }]); // id "item-1"
 * ```
 */
export function checkDataset(items: readonly unknown[]): EvalItem[] {
  if (!Array.isArray(items)) throw new DatasetError(`expected an array of items or a JSONL file path, got ${shown(items)}`, {});
  const checked = items.map((item, index) => itemOf(item, index + 1, { index }));
  return uniqueIds(checked, (index) => ({ index }));
}

/**
 * Reads a JSONL dataset: one item a line (`{ "id": …, "input": …, "expected": … }`); blank lines
 * and lines starting with `//` are skipped. A line that is not JSON, or not an item, is a
 * `DatasetError` naming its number.
 *
 * @example
 * ```ts
 * const items = await loadDataset('evals/capitals.jsonl');
 * ```
 */
export async function loadDataset(path: string): Promise<EvalItem[]> {
  const text = await readFile(path, 'utf8');
  return parseDataset(text, path);
}

/**
 * A JSONL dataset's text parsed (see {@link loadDataset}); `source` names it in errors.
 *
 * @example
 * ```ts
 * const items = parseDataset('{"input":"hi","expected":"hello"}\n', 'inline');
 * ```
 */
export function parseDataset(text: string, source = 'dataset'): EvalItem[] {
  const items: EvalItem[] = [];
  const lines: number[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('//')) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new DatasetError(`not JSON (${(error as Error).message})`, { line: index + 1, source }, { cause: error });
    }
    items.push(itemOf(value, items.length + 1, { line: index + 1, source }));
    lines.push(index + 1);
  });
  return uniqueIds(items, (index) => ({ line: lines[index] as number, source }));
}
