import type { RunOutput } from '../../machines/names/types.js';
import { compileSchema, type JSONSchema } from '../../tools/validate.js';
import type { StandardSchemaV1 } from '../../tools/standard-schema.js';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { isRecord } from '../../util/is-record.js';
import { toolCallsOf } from '../expect-trajectory.js';
import { type Score, type ScoreContext, type Scorer, textOf } from './scorer.js';

/** How text scorers compare: trimmed (default true), case-sensitive (default true). */
export type TextMatchOptions = { trim?: boolean; caseSensitive?: boolean; name?: string };

const normalise = (text: string, { trim = true, caseSensitive = true }: TextMatchOptions) => {
  const trimmed = trim ? text.trim() : text;
  return caseSensitive ? trimmed : trimmed.toLowerCase();
};

/** The item's expected strings: a string, or an array of strings (any of which, or each of which). */
function expectedStrings(scorer: string, { expected, item }: ScoreContext): string[] {
  const list = Array.isArray(expected) ? expected : [expected];
  if (expected === undefined || list.length === 0 || !list.every((one) => typeof one === 'string'))
    throw new InvalidOptionsError(`${scorer}: item ${JSON.stringify(item.id)}.expected`, 'a string or an array of strings', expected);
  return list as string[];
}

function runOutputOf(scorer: string, output: unknown): RunOutput {
  if (!isRecord(output) || !Array.isArray(output.messages) || typeof output.status !== 'string')
    throw new InvalidOptionsError(`${scorer}: output`, "a conversation's RunOutput (a workflow's output has no messages or usage)", output);
  return output as unknown as RunOutput;
}

const positive = (value: unknown, field: string): number => {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new InvalidOptionsError(field, 'a number ≥ 0', value);
  return value;
};

/**
 * The built-in scorers, each 0..1. Text scorers read a conversation's final `text` (a workflow's
 * string output, or its output as JSON); `expected` comes from the item.
 *
 * @example
 * ```ts
 * const report = await evaluate({
 *   machine,
 *   dataset,
 *   scorers: [scorers.includes({ caseSensitive: false }), scorers.toolUsed('weather'), scorers.maxTokens(2_000)],
 * });
 * ```
 */
export const scorers = {
  /** 1 when the answer equals `expected` (or one of an array of them). */
  exact(options: TextMatchOptions = {}): Scorer {
    const name = options.name ?? 'exact';
    return {
      name,
      score: (context) => {
        const answer = normalise(textOf(context.output), options);
        return expectedStrings(name, context).some((one) => normalise(one, options) === answer) ? 1 : 0;
      },
    };
  },

  /** The share of `expected` strings the answer contains (one string: 1 or 0). */
  includes(options: TextMatchOptions = {}): Scorer {
    const name = options.name ?? 'includes';
    return {
      name,
      score: (context) => {
        const answer = normalise(textOf(context.output), { ...options, trim: false });
        const wanted = expectedStrings(name, context);
        const found = wanted.filter((one) => answer.includes(normalise(one, options)));
        const missing = wanted.filter((one) => !found.includes(one));
        return {
          score: found.length / wanted.length,
          ...(missing.length ? { reason: `missing ${missing.map((one) => JSON.stringify(one)).join(', ')}` } : {}),
        };
      },
    };
  },

  /** 1 when the answer matches `pattern`. */
  regex(pattern: RegExp, options: { name?: string } = {}): Scorer {
    if (!(pattern instanceof RegExp)) throw new InvalidOptionsError('scorers.regex(pattern)', 'a RegExp', pattern);
    return {
      name: options.name ?? 'regex',
      score: ({ output }) => (new RegExp(pattern.source, pattern.flags.replace('g', '')).test(textOf(output)) ? 1 : 0),
    };
  },

  /**
   * 1 when the answer is JSON matching `schema` (a JSON Schema, or zod or another Standard Schema):
   * a structured answer's `object`, else the text parsed. The reason names what did not match.
   */
  jsonSchema(schema: JSONSchema | StandardSchemaV1, options: { name?: string } = {}): Scorer {
    const compiled = compileSchema<unknown>(schema, 'scorers.jsonSchema(schema)', 'answer');
    return {
      name: options.name ?? 'jsonSchema',
      score: ({ output }): Score => {
        let value: unknown = isRecord(output) && 'object' in output && output.object !== undefined ? output.object : undefined;
        if (value === undefined) {
          try {
            value = JSON.parse(textOf(output));
          } catch {
            return { score: 0, reason: 'the answer is not JSON' };
          }
        }
        const checked = compiled.validate(value);
        return checked.success ? 1 : { score: 0, reason: checked.error };
      },
    };
  },

  /** 1 when the run called the tool `tool` (with arguments `args` satisfies, when given). */
  toolUsed(tool: string, options: { name?: string; args?: (args: unknown) => boolean } = {}): Scorer {
    if (typeof tool !== 'string' || tool === '') throw new InvalidOptionsError('scorers.toolUsed(tool)', "a tool's name", tool);
    const name = options.name ?? `toolUsed(${tool})`;
    return {
      name,
      score: ({ output }) => {
        const calls = toolCallsOf(runOutputOf(name, output)).filter((call) => call.tool === tool);
        if (calls.length === 0) return { score: 0, reason: `${tool} was not called` };
        return !options.args || calls.some((call) => options.args?.(call.args))
          ? 1
          : { score: 0, reason: `${tool} was called with other arguments` };
      },
    };
  },

  /** 1 when the run cost at most `usd` (the machine needs a `prices` table: `output.cost`). */
  maxCost(usd: number, options: { name?: string } = {}): Scorer {
    positive(usd, 'scorers.maxCost(usd)');
    const name = options.name ?? `maxCost(${usd})`;
    return {
      name,
      score: ({ output }) => {
        const cost = runOutputOf(name, output).cost;
        if (!cost)
          throw new InvalidOptionsError(
            `${name}: output.cost`,
            'a run cost: give the machine a prices table (createConversationMachine({ prices }))',
          );
        return cost.total <= usd ? 1 : { score: 0, reason: `cost ${cost.total.toFixed(6)} > ${usd}` };
      },
    };
  },

  /** 1 when the run used at most `tokens` tokens in all (`usage.totalTokens`). */
  maxTokens(tokens: number, options: { name?: string } = {}): Scorer {
    positive(tokens, 'scorers.maxTokens(tokens)');
    const name = options.name ?? `maxTokens(${tokens})`;
    return {
      name,
      score: ({ output }) => {
        const used = runOutputOf(name, output).usage.totalTokens;
        return used <= tokens ? 1 : { score: 0, reason: `${used} tokens > ${tokens}` };
      },
    };
  },

  /** 1 when the run took at most `ms` milliseconds. */
  maxLatency(ms: number, options: { name?: string } = {}): Scorer {
    positive(ms, 'scorers.maxLatency(ms)');
    return {
      name: options.name ?? `maxLatency(${ms})`,
      score: ({ durationMs }) => (durationMs <= ms ? 1 : { score: 0, reason: `${Math.round(durationMs)} ms > ${ms}` }),
    };
  },

  /** 1 when the run ended with `status` (default `done`). */
  status(status: RunOutput['status'] = 'done', options: { name?: string } = {}): Scorer {
    const name = options.name ?? `status(${status})`;
    return {
      name,
      score: ({ output }) =>
        runOutputOf(name, output).status === status ? 1 : { score: 0, reason: `ended ${(output as RunOutput).status}` },
    };
  },
};
