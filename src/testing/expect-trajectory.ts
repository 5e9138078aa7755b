import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import { isRecord } from '../util/is-record.js';
import { option, resolveOptionsWith } from '../util/option-schema.js';
import { TrajectoryMismatchError } from './trajectory-mismatch-error.js';
import type { TrajectoryCall, TrajectoryMatcher, TrajectoryOptions, TrajectorySource, TrajectoryStep } from './trajectory-types.js';

/**
 * The tool calls of a run, in the order the model made them, each with its result when the
 * history holds one. Read from the assistant messages of the history, so the calls of every agent
 * a handoff passed the conversation to are there in turn; an agent tool's own inner calls are in
 * its child's history, not here.
 *
 * @example
 * ```ts
 * const output = await toPromise(actor);
 * for (const { tool, args, result } of toolCallsOf(output)) console.log(tool, args, '→', result);
 * ```
 */
export function toolCallsOf(output: TrajectorySource): TrajectoryCall[] {
  const messages = checkedMessages(output, 'toolCallsOf(output)');
  const calls: TrajectoryCall[] = [];
  const byId = new Map<string, TrajectoryCall>();
  for (const message of messages) {
    if (message.role === 'assistant') {
      for (const part of message.content) {
        if (part.type !== 'tool-call') continue;
        const call: TrajectoryCall = { tool: part.toolName, args: part.args, toolCallId: part.toolCallId };
        calls.push(call);
        byId.set(part.toolCallId, call);
      }
    } else if (message.role === 'tool') {
      for (const part of message.content) {
        const call = byId.get(part.toolCallId);
        if (call === undefined || 'result' in call) continue;
        call.result = part.result;
        if (part.isError) call.isError = true;
      }
    }
  }
  return calls;
}

/**
 * Checks that a run called the tools expected, in order; throws a {@link TrajectoryMismatchError}
 * whose message is a diff of the steps expected beside the calls made when it did not. `args` and
 * `result` of a step are matched as a subset (keys a step leaves out are not checked) or by a
 * predicate (see {@link TrajectoryMatcher}).
 *
 * @example
 * ```ts
 * const output = await toPromise(createActor(machine, { input: { prompt: 'Book a hotel in Paris' } }).start());
 * expectTrajectory(output, [
 *   { tool: 'search', args: { city: 'Paris' } },
 *   { tool: 'book', args: (args: { hotel: string }) => args.hotel.length > 0 },
 * ]);
 * expectTrajectory(output, [{ tool: 'book' }], { exact: false }); // booked, whatever came before
 * ```
 */
export function expectTrajectory(output: TrajectorySource, steps: readonly TrajectoryStep[], options: TrajectoryOptions = {}): void {
  const verdict = compareTrajectory(output, steps, options);
  if (verdict.difference !== undefined) {
    throw new TrajectoryMismatchError(verdict.message, { steps, calls: verdict.calls, difference: verdict.difference });
  }
}

/** What comparing a run with its steps found: `difference` and the diff `message` are absent when it matches. */
export type TrajectoryVerdict = { calls: TrajectoryCall[]; difference?: string; message: string };

const stepsSchema = option.array(
  option.object(
    {
      tool: option.string({ nonEmpty: true, expected: 'a tool name (a non-empty string)' }),
      args: option.unchecked<TrajectoryMatcher | undefined>(),
      result: option.unchecked<TrajectoryMatcher | undefined>(),
    },
    { expected: 'a step { tool, args?, result? }' },
  ),
  'an array of steps { tool, args?, result? }',
);
const optionsSchema = option.object({ exact: option.withDefault(option.boolean(), true) });

/** The comparison behind {@link expectTrajectory}, for callers that report rather than throw (the vitest matchers). */
export function compareTrajectory(
  output: TrajectorySource,
  steps: readonly TrajectoryStep[],
  options: TrajectoryOptions = {},
): TrajectoryVerdict {
  const checkedSteps = resolveOptionsWith(stepsSchema, steps, 'steps');
  const { exact } = resolveOptionsWith(optionsSchema, options, 'options');
  const calls = toolCallsOf(output);
  const rows = align(checkedSteps, calls, exact);
  const first = rows.find((row): row is Finding => row.kind !== 'match' && row.kind !== 'other');
  const mode = exact ? 'exactly these calls, in this order' : 'these calls in this order, others allowed between them';
  const summary = `expected ${count(checkedSteps.length, 'tool call')} (${mode}); the run made ${count(calls.length, 'tool call')}`;
  if (first === undefined) return { calls, message: `the run's tool calls match: ${summary}` };
  const difference = findingOf(first);
  return { calls, difference, message: `expectTrajectory: ${difference}\n${summary}:\n${render(rows)}` };
}

/**
 * Where `actual` first differs from `expected` (see {@link TrajectoryMatcher}), named by its path
 * under `path` (`args.city: expected "Paris", got "Lyon"`); `undefined` when it matches.
 */
export function differenceOf(expected: unknown, actual: unknown, path: string): string | undefined {
  if (typeof expected === 'function') {
    let holds: boolean;
    try {
      holds = Boolean((expected as (value: unknown) => unknown)(actual));
    } catch (error) {
      return `${path}: the predicate threw ${error instanceof Error ? error.message : String(error)} for ${show(actual)}`;
    }
    return holds ? undefined : `${path}: ${show(actual)} does not satisfy the predicate`;
  }
  if (isAsymmetricMatcher(expected)) {
    return expected.asymmetricMatch(actual) ? undefined : `${path}: expected ${describe(expected)}, got ${show(actual)}`;
  }
  if (expected instanceof RegExp) {
    if (typeof actual !== 'string') return `${path}: expected a string matching ${expected}, got ${show(actual)}`;
    // A global or sticky pattern remembers where it stopped; every match starts from the beginning.
    expected.lastIndex = 0;
    return expected.test(actual) ? undefined : `${path}: expected a string matching ${expected}, got ${show(actual)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${show(actual)}`;
    if (actual.length !== expected.length) return `${path}: expected ${count(expected.length, 'item')}, got ${actual.length}`;
    for (const [index, item] of expected.entries()) {
      const found = differenceOf(item, actual[index], `${path}[${index}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (isRecord(expected)) {
    if (!isRecord(actual)) return `${path}: expected an object, got ${show(actual)}`;
    for (const [key, value] of Object.entries(expected)) {
      const where = /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
      if (!(key in actual) && value !== undefined) return `${where}: expected ${describe(value)}, got nothing (no such key)`;
      const found = differenceOf(value, actual[key], where);
      if (found) return found;
    }
    return undefined;
  }
  return Object.is(expected, actual) ? undefined : `${path}: expected ${describe(expected)}, got ${show(actual)}`;
}

/** Where a call differs from a step: its tool, then its arguments, then its result. */
export function stepDifference(step: TrajectoryStep, call: TrajectoryCall): string | undefined {
  if (step.tool !== call.tool) return `tool: expected ${JSON.stringify(step.tool)}, got ${JSON.stringify(call.tool)}`;
  if (step.args !== undefined) {
    const found = differenceOf(step.args, call.args, 'args');
    if (found) return found;
  }
  if (step.result !== undefined) {
    if (!('result' in call)) return 'result: expected one, got none (the call has no result in the history)';
    return differenceOf(step.result, parsedFor(step.result, call.result), 'result');
  }
  return undefined;
}

/** A result is text; a step that expects an object or an array of it means the JSON that text holds. */
function parsedFor(expected: unknown, result: unknown): unknown {
  if (typeof result !== 'string' || !(Array.isArray(expected) || (isRecord(expected) && !isAsymmetricMatcher(expected)))) return result;
  try {
    return JSON.parse(result) as unknown;
  } catch {
    return result;
  }
}

type Row =
  | { kind: 'match'; index: number; step: TrajectoryStep; call: TrajectoryCall }
  | { kind: 'differs'; index: number; step: TrajectoryStep; call: TrajectoryCall; difference: string }
  | { kind: 'missing'; index: number; step: TrajectoryStep }
  | { kind: 'extra'; call: TrajectoryCall; callIndex: number }
  | { kind: 'other'; call: TrajectoryCall; callIndex: number };

/**
 * Lines the steps up with the calls at the least cost (an edit distance): a call that matches its
 * step costs 0, one of the same tool that differs 1, one of another tool 2 — no cheaper than a
 * missing step and an extra call, so a wrong tool shows on one line — a missing step 1, and an
 * extra call 1, or 0 when other calls are allowed. So a call slipped in shows as one `+` line, not
 * as every step after it differing.
 */
function align(steps: readonly TrajectoryStep[], calls: readonly TrajectoryCall[], exact: boolean): Row[] {
  const extraCost = exact ? 1 : 0;
  const differences = steps.map((step) => calls.map((call) => stepDifference(step, call)));
  const pairCost = (i: number, j: number) => {
    if (differences[i]?.[j] === undefined) return 0;
    return (steps[i] as TrajectoryStep).tool === (calls[j] as TrajectoryCall).tool ? 1 : 2;
  };
  // cost[i][j]: the cheapest alignment of steps i.. with calls j..
  const cost = Array.from({ length: steps.length + 1 }, () => new Array<number>(calls.length + 1).fill(0));
  const at = (i: number, j: number) => (cost[i] as number[])[j] as number;
  for (let i = steps.length; i >= 0; i--) {
    for (let j = calls.length; j >= 0; j--) {
      if (i === steps.length && j === calls.length) continue;
      let best = Number.POSITIVE_INFINITY;
      if (i < steps.length && j < calls.length) best = pairCost(i, j) + at(i + 1, j + 1);
      if (i < steps.length) best = Math.min(best, 1 + at(i + 1, j));
      if (j < calls.length) best = Math.min(best, extraCost + at(i, j + 1));
      (cost[i] as number[])[j] = best;
    }
  }
  const rows: Row[] = [];
  let i = 0;
  let j = 0;
  while (i < steps.length || j < calls.length) {
    const step = steps[i];
    const call = calls[j];
    // Ties go to pairing a step with a call: one line that says how they differ reads best.
    if (step !== undefined && call !== undefined && at(i, j) === pairCost(i, j) + at(i + 1, j + 1)) {
      const difference = differences[i]?.[j];
      rows.push(difference === undefined ? { kind: 'match', index: i, step, call } : { kind: 'differs', index: i, step, call, difference });
      i++;
      j++;
    } else if (call !== undefined && at(i, j) === extraCost + at(i, j + 1)) {
      // Before a missing step: a step is looked for as late as it can be found, as reading the calls in order would.
      rows.push(exact ? { kind: 'extra', call, callIndex: j } : { kind: 'other', call, callIndex: j });
      j++;
    } else if (step !== undefined) {
      rows.push({ kind: 'missing', index: i, step });
      i++;
    } else break;
  }
  return rows;
}

/** A row that makes the run fail. */
type Finding = Exclude<Row, { kind: 'match' | 'other' }>;

function findingOf(row: Finding): string {
  switch (row.kind) {
    case 'differs':
      return `step ${row.index + 1} (${row.step.tool}): ${row.difference}`;
    case 'missing':
      return `step ${row.index + 1} (${row.step.tool}) has no call`;
    case 'extra':
      return `call ${row.callIndex + 1} (${row.call.tool}) was not expected`;
  }
}

const leftWidth = 48;

/** Expected steps on the left, the calls on the right, one marked line each; a differing pair is followed by how it differs. */
function render(rows: readonly Row[]): string {
  const lines = rows.map((row): string[] => {
    switch (row.kind) {
      case 'match':
        return [`✓ ${stepText(row.step)}`, callText(row.call, row.step)];
      case 'differs':
        return [`✗ ${stepText(row.step)}`, callText(row.call, row.step), row.difference];
      case 'missing':
        return [`− ${stepText(row.step)}`, '(missing)'];
      case 'extra':
        return ['+ (extra)', callText(row.call)];
      default:
        return ['· (other call)', callText(row.call)];
    }
  });
  const width = Math.min(leftWidth, Math.max('  expected'.length, ...lines.map(([left]) => (left as string).length)));
  const body = lines.map(([left = '', right = '', detail]) => {
    const line = `  ${left.padEnd(width)} │ ${right}`;
    return detail === undefined ? line : `${line}\n      ${detail}`;
  });
  return [`  ${'  expected'.padEnd(width)} │ actual`, ...body].join('\n');
}

function stepText(step: TrajectoryStep): string {
  const args = step.args === undefined ? '' : ` ${describe(step.args)}`;
  const result = step.result === undefined ? '' : ` → ${describe(step.result)}`;
  return clip(`${step.tool}${args}${result}`, leftWidth - 2);
}

function callText(call: TrajectoryCall, step?: TrajectoryStep): string {
  const result = step?.result !== undefined && 'result' in call ? ` → ${show(call.result)}` : '';
  return clip(`${call.tool} ${show(call.args)}${result}`, 90);
}

function clip(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}

/** An actual value, as JSON. */
function show(value: unknown): string {
  if (value === undefined) return 'undefined';
  try {
    return clip(JSON.stringify(value) ?? String(value), 80);
  } catch {
    return clip(String(value), 80);
  }
}

/** An expected value, written as JSON is, with its predicates, patterns and asymmetric matchers named. */
export function describe(expected: unknown): string {
  const text = (value: unknown): string => {
    if (typeof value === 'function') return '‹predicate›';
    if (value instanceof RegExp) return String(value);
    if (isAsymmetricMatcher(value)) return (value.toAsymmetricMatcher ?? value.toString)?.call(value) ?? 'matcher';
    if (Array.isArray(value)) return `[${value.map(text).join(',')}]`;
    if (isRecord(value))
      return `{${Object.entries(value)
        .map(([key, inner]) => `${JSON.stringify(key)}:${text(inner)}`)
        .join(',')}}`;
    return value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
  };
  return clip(text(expected), 80);
}

type AsymmetricMatcher = { asymmetricMatch(actual: unknown): boolean; toAsymmetricMatcher?: () => string; toString?: () => string };

/** A vitest or Jest asymmetric matcher (`expect.any(String)`, `expect.stringContaining('a')`). */
function isAsymmetricMatcher(value: unknown): value is AsymmetricMatcher {
  return isRecord(value) && typeof value.asymmetricMatch === 'function';
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function checkedMessages(output: TrajectorySource, where: string): TrajectorySource['messages'] {
  if (!isRecord(output) || !Array.isArray(output.messages)) {
    throw new InvalidOptionsError(where, 'a RunOutput, or an object with its messages', output);
  }
  return output.messages;
}
