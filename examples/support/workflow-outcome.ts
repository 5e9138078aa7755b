import type { RunOutput } from 'actorloop';

/** A conversation's output from its done event, for a guard declared in `setup` (where the event is not typed). */
export const outputOf = (event: unknown) => (event as { output: RunOutput }).output;

/** Who failed and how, from a conversation's done event (`halted`, `error`) or its actor's error event. */
export function failureOf(event: { type: string; output?: RunOutput; error?: unknown }): string {
  const who = event.type.replace(/^xstate\.(done|error)\.actor\./, '');
  if (!event.output) return `${who} could not run: ${String(event.error)}`;
  const { status, reason, error } = event.output;
  return `${who} ended ${status}${reason ? ` (${reason})` : ''}${error ? `: ${error.message}` : ''}`;
}
