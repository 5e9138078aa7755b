/**
 * The agent call of the crash and Restate fault scenarios: `consult`, whose child conversation is
 * named by its prompt (`sub <conversation> t<turn>`) and makes one round that calls `charge` (not
 * idempotent), then answers. Shared so both scenarios' children behave, and are checked, the same.
 */
import type { PlanStep } from './planned-model.js';
import type { PlannedAnswer } from './planned-wire-server.js';

export const consultId = (conversation: string, turn: number) => `cs-${conversation}-t${turn}`;
export const childPrompt = (conversation: string, turn: number) => `sub ${conversation} t${turn}`;
export const childChargeId = (conversation: string, turn: number) => `ch-sub.${conversation}-t${turn}`;
export const childText = (conversation: string, turn: number) => `sub done ${conversation} t${turn}`;

/** The child's answer, for a request of a `consult` child (else `undefined`): the same history, the same answer. */
export function childPlan(step: PlanStep): PlannedAnswer | undefined {
  if (!step.conversation.startsWith('sub ')) return undefined;
  const [, conversation = '', turnText = 't0'] = step.conversation.split(' ');
  const turn = Number(turnText.slice(1));
  return step.round === 0
    ? { toolCalls: [{ id: childChargeId(conversation, turn), name: 'charge', args: { cents: 1 } }] }
    : { text: childText(conversation, turn) };
}

/** The `consult` call of a conversation's turn. */
export const consultCall = (conversation: string, turn: number) => ({
  id: consultId(conversation, turn),
  name: 'consult',
  args: { prompt: childPrompt(conversation, turn) },
});
