import type { Provider } from '../../model/provider.js';
import type { Effects } from '../names/effects.js';
import type { ConversationContext, RequestStartedEvent } from '../names/types.js';

/** The agent a completed round hands the conversation to: its one answered `transfer_to_<name>` call. */
export function handoffOf(round: ConversationContext['round']): string | undefined {
  for (const call of round ?? [])
    if (call.handoff !== undefined && call.state === 'settled' && call.result?.isError !== true) return call.handoff;
  return undefined;
}

/** The round's handoff takes effect: the active agent changes and `agent.handoff` announces it. */
export function handedOff(context: Pick<ConversationContext, 'round' | 'agents'>): Effects {
  const to = handoffOf(context.round);
  const from = context.agents.active;
  if (to === undefined || from === undefined) return {};
  return { context: { agents: { ...context.agents, active: to } }, emitted: [{ type: 'agent.handoff', from, to }] };
}

/** `request.started` for the request the active agent's provider makes. */
export function requestStartedEvent(
  context: Pick<ConversationContext, 'iterations' | 'attempt'>,
  provider: Pick<Provider, 'name' | 'model'>,
): RequestStartedEvent {
  return {
    type: 'request.started',
    iteration: context.iterations,
    attempt: context.attempt,
    provider: provider.name,
    ...(provider.model === undefined ? {} : { model: provider.model }),
  };
}
