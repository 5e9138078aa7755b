/**
 * The OFFLINE model: a SCRIPTED stand-in (a `handlerProvider` in this process) that answers from
 * the conversation's own history, the way a model would:
 *
 *   "what is 2+3?"     → add({ a: 2, b: 3 }) → "2 + 3 = 5."
 *   "pay 80"           → pay({ amount: 80 }), which waits for your approval → "Done: …" or "I did not pay: …"
 *   "tell me a story"  → a long answer, streamed a word at a time (reload the page while it streams)
 */
import { handlerProvider, type Provider } from 'actorloop';
import type { OpenAIChatMessage } from 'actorloop/openai';
import { chatChunks, type ScriptReply, scriptedUsage, viewOfChatMessages } from '../support/script.js';

const story =
  'Once upon a time a small actor ran a long loop. Every step it took was a state you could see, and every tool it called waited ' +
  'for its turn. When the page that watched it was reloaded, nothing was lost: the stream picked up where the reader left, ' +
  'replayed from the first word, and went on to the end, which is here.';

/** The reply to this turn: the user's last message and the tool results that came after it. */
export function chatReply(messages: OpenAIChatMessage[]): ScriptReply {
  const { userText, toolResults } = viewOfChatMessages(messages.slice(messages.findLastIndex((message) => message.role === 'user')));
  const [result] = toolResults;
  const sum = /(-?\d+(?:\.\d+)?)\s*\+\s*(-?\d+(?:\.\d+)?)/.exec(userText);
  if (sum) {
    const [a, b] = [Number(sum[1]), Number(sum[2])];
    if (result === undefined) return { text: 'Let me add them. ', toolCalls: [{ name: 'add', args: { a, b } }] };
    return { text: `${a} + ${b} = ${(JSON.parse(result) as { sum: number }).sum}.` };
  }
  const pay = /\bpay\s+(\d+)/i.exec(userText);
  if (pay) {
    const amount = Number(pay[1]);
    if (result === undefined) return { text: `Paying ${amount} needs your approval. `, toolCalls: [{ name: 'pay', args: { amount } }] };
    return { text: result.startsWith('denied by user') ? `I did not pay: ${result}.` : `Done: ${result}.` };
  }
  if (/story/i.test(userText)) return { text: story };
  return { text: 'Ask me "what is 2+3?", "pay 80" or "tell me a story".' };
}

/** The scripted model as a provider: `wordDelayMs` between streamed pieces, so an answer visibly streams. */
export function scriptedChatModel(options: { wordDelayMs?: number } = {}): Provider {
  const delay = options.wordDelayMs ?? 40;
  return handlerProvider(async function* ({ messages, signal }) {
    const reply = chatReply(messages);
    const { turn } = viewOfChatMessages(messages);
    for (const chunk of chatChunks(reply, turn, scriptedUsage(JSON.stringify(messages), reply))) {
      signal.throwIfAborted();
      await new Promise((resolve) => setTimeout(resolve, delay));
      yield chunk;
    }
  });
}
