import type { Guardrail, ResolvedGuardrails } from '../../tools/guardrail.js';
import { option, type OptionSchema } from '../../util/option-schema.js';
import type { ConversationContext, GuardrailCheckedEvent, GuardrailTripped, RunError } from '../names/types.js';
import type { Effects } from '../names/effects.js';
import { lastAssistantText } from '../rounds/run-context.js';
import { haltRecorded } from '../rounds/run-outcome.js';
import { textOf } from '../../model/messages.js';

/**
 * Guardrails by phase (see {@link Guardrail}); each list runs in order, the first to trip ends the run.
 *
 * @example
 * ```ts
 * createConversationMachine({ provider, guardrails: { input: [topicCheck], output: [piiCheck] } });
 * ```
 */
export type GuardrailOptions = { input?: readonly Guardrail[]; output?: readonly Guardrail[] };

const guardrailSchema: OptionSchema<Required<Guardrail>> = option.object(
  {
    name: option.string({ nonEmpty: true }),
    check: option.callable<Guardrail['check']>('a function check(text, { messages, sessionData, signal }) => { tripped, reason? }'),
    timeoutMs: option.withDefault(option.milliseconds(), 30_000),
  },
  { expected: 'a guardrail { name, check, timeoutMs? }' },
);

const listSchema = option.withDefault(option.array(guardrailSchema, 'an array of guardrails { name, check, timeoutMs? }'), []);

/** `guardrails`, checked at creation: every guardrail has a name and a `check` function. */
export const guardrailsSchema: OptionSchema<ResolvedGuardrails> = option.withDefault(
  option.object({ input: listSchema, output: listSchema }, { expected: 'an object { input?, output? } of guardrail lists' }),
  { input: [], output: [] },
);

/** The text a phase checks: the last user message for `input`, the final answer for `output`. */
export function checkedText(context: Pick<ConversationContext, 'messages' | 'runStart' | 'outcome'>, phase: 'input' | 'output'): string {
  if (phase === 'output') return context.outcome.finalText ?? lastAssistantText(context.messages, context.runStart);
  for (let index = context.messages.length - 1; index >= 0; index--) {
    const message = context.messages[index];
    if (message?.role === 'user') return textOf(message);
  }
  return '';
}

/** A check passed: the next guardrail of the phase is up. */
export function guardrailPassed(context: Pick<ConversationContext, 'control'>, name: string, phase: 'input' | 'output'): Effects {
  return {
    context: { control: { ...context.control, check: context.control.check + 1 } },
    emitted: [{ type: 'guardrail.checked', name, phase, tripped: false } satisfies GuardrailCheckedEvent],
  };
}

/** A check tripped: the run halts with the guardrail's name and reason. */
export function guardrailTripped(context: Pick<ConversationContext, 'control' | 'outcome'>, tripped: GuardrailTripped): Effects {
  return {
    context: { ...haltRecorded(context.outcome, 'guardrail'), control: { ...context.control, guardrail: tripped } },
    emitted: [{ type: 'guardrail.checked', name: tripped.name, phase: tripped.phase, tripped: true, reason: tripped.reason }],
  };
}

/** The error of a guardrail that threw (`thrown`) or, without it, timed out: never a silent pass. */
export function guardrailError(
  context: Pick<ConversationContext, 'control'>,
  phase: 'input' | 'output',
  guardrails: ResolvedGuardrails,
  thrown?: unknown,
): RunError {
  const guardrail = guardrails[phase][context.control.check];
  const name = guardrail?.name ?? `#${context.control.check}`;
  const message =
    thrown === undefined
      ? `${phase} guardrail "${name}" did not answer within ${guardrail?.timeoutMs ?? 0} ms`
      : `${phase} guardrail "${name}" failed: ${thrown instanceof Error ? thrown.message : String(thrown)}`;
  return { name: 'GuardrailError', message, retryable: false, code: thrown === undefined ? 'guardrail_timeout' : 'guardrail_error' };
}
