import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { option } from '../../util/option-schema.js';
import type { FinishReason } from '../../model/provider.js';
import type { StandardOutput, StandardSchemaV1 } from '../../tools/standard-schema.js';
import { compileSchema, type JSONSchema, type ValidationResult } from '../../tools/validate.js';
import type { AnswerCheck } from '../names/types.js';

/**
 * The `output` option: the final answer must be a JSON object matching `schema`; it is returned as
 * `output.object`. An invalid answer goes back to the model with what was wrong, at most
 * `maxRepairs` times, each repair a `repairing` state; then the run ends in `error`.
 *
 * @example
 * ```ts
 * const machine = createConversationMachine({
 *   provider,
 *   output: { schema: z.object({ city: z.string(), celsius: z.number() }), name: 'weather_report' },
 * });
 * const { object } = await toPromise(actor); // { city: string; celsius: number } | undefined
 * ```
 */
export type OutputOptions<TSchema extends StandardSchemaV1 | JSONSchema = StandardSchemaV1 | JSONSchema> = {
  /** A zod (≥ 4.2) or other Standard Schema object schema, or a JSON Schema with `type: "object"`. */
  schema: TSchema;
  /** The schema's name on the wire (OpenAI `json_schema.name`, the Anthropic answer tool). Default `final_answer`. */
  name?: string;
  /** What the answer is, for the model. */
  description?: string;
  /** Repairs of an invalid answer before the run ends in `error`. Default 2. */
  maxRepairs?: number;
  /** OpenAI strict structured outputs (the schema must then meet OpenAI's strict rules). Default false. */
  strict?: boolean;
};

/**
 * The type of `output.object` for a machine's `output.schema`: inferred from a Standard Schema, a
 * JSON object for a plain JSON Schema.
 *
 * @example
 * ```ts
 * type Report = InferObject<typeof reportSchema>;
 * ```
 */
export type InferObject<TSchema> = TSchema extends StandardSchemaV1 ? StandardOutput<TSchema> : Record<string, unknown>;

/** The `output` option checked and compiled. */
export type ResolvedOutput = {
  name: string;
  description: string | undefined;
  maxRepairs: number;
  strict: boolean;
  jsonSchema: JSONSchema;
  validate(value: unknown): ValidationResult<unknown>;
};

const namePattern = /^[a-zA-Z0-9_-]{1,64}$/;

const outputOptionsSchema = option.object(
  {
    schema: option.unchecked(),
    name: option.withDefault(
      option.matching(
        'a name of 1 to 64 letters, digits, "_" or "-"',
        (value): value is string => typeof value === 'string' && namePattern.test(value),
      ),
      'final_answer',
    ),
    description: option.optional(option.string()),
    maxRepairs: option.withDefault(option.integer({ minimum: 0 }), 2),
    strict: option.withDefault(option.boolean(), false),
  },
  { expected: 'an object { schema, name?, description?, maxRepairs?, strict? }' },
);

/** Checks the `output` option at machine creation. */
export function resolveOutput(output: unknown, toolNames: ReadonlySet<string>): ResolvedOutput | undefined {
  if (output === undefined) return undefined;
  const { schema, name, description, maxRepairs, strict } = outputOptionsSchema.resolve(output, 'output');
  if (toolNames.has(name)) throw new InvalidOptionsError('output.name', 'a name no tool uses (the answer may travel as a tool call)', name);
  const compiled = compileSchema<unknown>(schema, 'output.schema', 'answer');
  return { name, description, maxRepairs, strict, jsonSchema: compiled.jsonSchema, validate: compiled.validate };
}

/** A JSON answer wrapped in a Markdown code fence, as some models write it anyway. */
const fenced = /^\s*```(?:json)?\s*\n([\s\S]*?)\n?```\s*$/;

/**
 * Checks a final answer: a refusal, text that is not JSON (cut at the token limit or not), or an
 * object the schema rejects is a problem the model can fix; anything else is the object.
 *
 * @example
 * ```ts
 * checkAnswer('{"city":"Oslo"}', 'stop', output); // { ok: true, object: { city: 'Oslo' } }
 * ```
 */
export function checkAnswer(text: string, finishReason: FinishReason, output: Pick<ResolvedOutput, 'validate'>): AnswerCheck {
  if (finishReason === 'refusal') return { ok: false, problem: `the model refused: ${text.trim() || '(no reason given)'}` };
  const body = fenced.exec(text)?.[1] ?? text;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    if (finishReason === 'length') return { ok: false, problem: 'the answer was cut at the token limit before the JSON was complete' };
    const shown = body.trim() === '' ? 'an empty answer' : `${(error as Error).message}`;
    return { ok: false, problem: `the answer is not valid JSON (${shown})` };
  }
  const checked = output.validate(value);
  return checked.success
    ? { ok: true, object: checked.value }
    : { ok: false, problem: `the answer does not match the schema: ${checked.error}` };
}

/** The user-role message that sends a problem back to the model. */
export function repairPrompt(problem: string, output: Pick<ResolvedOutput, 'name'>): string {
  return (
    `Your answer could not be used: ${problem}. ` +
    `Answer again with only a JSON object that matches the "${output.name}" schema, with no other text.`
  );
}
