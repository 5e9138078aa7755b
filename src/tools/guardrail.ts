import type { Message } from '../model/messages.js';

/**
 * What a guardrail's `check` is given besides the text: the history so far, the run's
 * `sessionData`, and a signal that aborts when the check is no longer awaited (its timeout, a cancel).
 */
export type GuardrailContext = { messages: Message[]; sessionData: unknown; signal: AbortSignal };

/** A guardrail's verdict: `tripped` ends the run `halted` / `guardrail` with the `reason`. */
export type GuardrailVerdict = { tripped: boolean; reason?: string };

/**
 * A check on the user's message (`guardrails.input`, before the first request) or on the final
 * answer (`guardrails.output`, before `done`). It runs as an actor with a timeout: a check that
 * throws or times out ends the run in `error`, never a silent pass. A check may call a model itself.
 *
 * @example
 * ```ts
 * const noSecrets: Guardrail = {
 *   name: 'no-secrets',
 *   check: (text) => ({ tripped: /sk-[a-z0-9]{20,}/i.test(text), reason: 'the text holds an API key' }),
 * };
 * createConversationMachine({ provider, guardrails: { input: [noSecrets], output: [noSecrets] } });
 * ```
 */
export type Guardrail = {
  name: string;
  check: (text: string, context: GuardrailContext) => GuardrailVerdict | Promise<GuardrailVerdict>;
  /** How long the check may take. Default 30 s. */
  timeoutMs?: number;
};

/** The guardrails of a machine, checked, with their timeouts applied. */
export type ResolvedGuardrails = { input: readonly Required<Guardrail>[]; output: readonly Required<Guardrail>[] };

/** What a guardrail check actor is asked: the phase and index of the guardrail, the text and what it may read. */
export type GuardrailCheckInput = { phase: 'input' | 'output'; index: number; text: string; messages: Message[]; sessionData?: unknown };

/** Whether an actor's output is a verdict (`{ tripped: boolean }`); anything else is a broken check. */
export function isVerdict(value: unknown): value is GuardrailVerdict {
  return typeof value === 'object' && value !== null && typeof (value as GuardrailVerdict).tripped === 'boolean';
}
