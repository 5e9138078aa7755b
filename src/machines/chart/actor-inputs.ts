import type { ProviderCallInput } from '../../actors/provider-call.js';
import type { GuardrailCheckInput } from '../../tools/guardrail.js';
import { checkedText } from '../controls/guardrails.js';
import type { ConversationContext } from '../names/types.js';

/** What the request is made with: the history, the run's data, the active agent and which of its providers. */
export function providerCallInput(context: ConversationContext): ProviderCallInput {
  return {
    messages: context.messages,
    ...(context.sessionData === undefined ? {} : { sessionData: context.sessionData }),
    ...(context.agents.active === undefined ? {} : { agent: context.agents.active }),
    ...(context.control.provider === 0 ? {} : { provider: context.control.provider }),
    ...(context.conversationId === undefined ? {} : { cacheKey: context.conversationId }),
  };
}

/** What the guardrail being checked is given: its phase's text, the history, the run's data. */
export function guardrailInput(context: ConversationContext, phase: 'input' | 'output'): GuardrailCheckInput {
  return {
    phase,
    index: context.control.check,
    text: checkedText(context, phase),
    messages: context.messages,
    ...(context.sessionData === undefined ? {} : { sessionData: context.sessionData }),
  };
}
