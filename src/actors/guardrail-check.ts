import { fromPromise } from 'xstate';
import { type GuardrailCheckInput, type GuardrailVerdict, isVerdict, type ResolvedGuardrails } from '../tools/guardrail.js';
import { stepJournalOf } from './step-journal.js';

/** A check's verdict with the guardrail's name, as the machine gets it. */
export type GuardrailCheckOutput = { name: string; phase: 'input' | 'output'; tripped: boolean; reason: string };

/**
 * The actor logic of one guardrail check. The machine bounds it with the guardrail's `timeoutMs`
 * (a delayed transition) and stops it on cancel, which aborts the check's `signal`. Whatever the
 * check returns that is not a verdict is an error, as is what it throws: a broken guardrail ends the
 * run in `error`, never passes silently. With a step journal, the verdict is journaled, so a replay
 * does not ask again.
 */
export function createGuardrailCheckLogic(guardrails: ResolvedGuardrails) {
  return fromPromise<GuardrailCheckOutput, GuardrailCheckInput>(async ({ input, signal, system }) => {
    const guardrail = guardrails[input.phase][input.index];
    if (!guardrail) throw new Error(`no ${input.phase} guardrail at index ${input.index}`);
    const check = async (checkSignal: AbortSignal): Promise<GuardrailVerdict> => {
      const verdict: unknown = await guardrail.check(input.text, {
        messages: input.messages,
        sessionData: input.sessionData,
        signal: checkSignal,
      });
      if (!isVerdict(verdict)) {
        throw new Error(
          `guardrail "${guardrail.name}" returned ${JSON.stringify(verdict) ?? String(verdict)}; expected { tripped: boolean, reason? }`,
        );
      }
      return { tripped: verdict.tripped, ...(typeof verdict.reason === 'string' ? { reason: verdict.reason } : {}) };
    };
    const journal = stepJournalOf(system);
    let verdict: GuardrailVerdict;
    if (journal) {
      const outcome = await journal.step({ kind: 'guardrail', phase: input.phase, name: guardrail.name }, check, signal);
      // A check an earlier attempt started is asked again: a verdict has no side effect to repeat.
      verdict = outcome.status === 'done' ? outcome.value : await check(signal);
    } else verdict = await check(signal);
    const reason = verdict.reason ?? (verdict.tripped ? `tripped by the ${input.phase} guardrail "${guardrail.name}"` : '');
    return { name: guardrail.name, phase: input.phase, tripped: verdict.tripped, reason };
  });
}
