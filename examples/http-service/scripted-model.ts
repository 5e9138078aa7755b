/**
 * The OFFLINE model: a SCRIPTED stand-in (a `handlerProvider`, in this process) that drives the
 * order tools the way a model would, decided from the conversation's own history — so a request
 * made again after a restart gets the same answer. Set a key or base URL to talk to a real model.
 *
 *   "refund order B-7" → lookup_order(B-7) → issue_refund(B-7) (waits for approval: €80) → an answer
 *   "what is order A-1?" → lookup_order(A-1) → an answer
 */
import { handlerProvider, type Provider } from 'actorloop';
import type { OpenAIChatMessage } from 'actorloop/openai';
import { chatChunks, type ScriptReply, scriptedUsage, viewOfChatMessages } from '../support/script.js';

/** The user's last message and the tool results since (this turn's). */
function thisTurn(messages: OpenAIChatMessage[]): { userText: string; results: string[] } {
  const lastUser = messages.findLastIndex((message) => message.role === 'user');
  const user = messages[lastUser];
  const userText =
    user?.role !== 'user'
      ? ''
      : typeof user.content === 'string'
        ? user.content
        : user.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  const results = messages.slice(lastUser + 1).flatMap((message) => (message.role === 'tool' ? [message.content] : []));
  return { userText, results };
}

/** The scripted reply to a conversation as it stands. */
export function scriptedReply(messages: OpenAIChatMessage[]): ScriptReply {
  const { userText, results } = thisTurn(messages);
  const orderId = /\b[A-Z]-\d+\b/.exec(userText)?.[0];
  if (!orderId) return { text: 'I look orders up and refund them: ask me "what is order A-1?" or "refund order B-7".' };
  const wantsRefund = /\brefund/i.test(userText);
  const [lookup, refund] = results;
  if (lookup === undefined) return { text: `Let me look order ${orderId} up.`, toolCalls: [{ name: 'lookup_order', args: { orderId } }] };
  let order: { item?: string; amountEur?: number; refunded?: boolean } | undefined;
  try {
    order = JSON.parse(lookup) as typeof order;
  } catch {
    return { text: `I could not find order ${orderId}: ${lookup}` };
  }
  const summary = `Order ${orderId} is ${order?.item} (€${order?.amountEur})`;
  if (!wantsRefund) return { text: `${summary}${order?.refunded ? ', already refunded' : ''}.` };
  if (refund === undefined) {
    if (order?.refunded) return { text: `${summary} and was refunded already.` };
    return { text: `${summary}. Refunding it.`, toolCalls: [{ name: 'issue_refund', args: { orderId } }] };
  }
  return { text: refund.startsWith('refunded') ? `Done: ${refund}.` : `The refund did not happen: ${refund}` };
}

/** The scripted model as a provider, streaming its replies as OpenAI chunks. */
export function scriptedModel(): Provider {
  return handlerProvider(async function* ({ messages, signal }) {
    const reply = scriptedReply(messages);
    const { turn } = viewOfChatMessages(messages);
    for (const chunk of chatChunks(reply, turn, scriptedUsage(JSON.stringify(messages), reply))) {
      signal.throwIfAborted();
      // A pause between chunks, so the answer streams like a model's.
      await new Promise((resolve) => setTimeout(resolve, 5));
      yield chunk;
    }
  });
}
