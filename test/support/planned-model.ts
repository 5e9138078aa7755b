import type { ChunkHandler, HandlerRequest } from '../../src/providers/handler/handler-provider.js';
import type { OpenAIChatMessage } from '../../src/providers/openai-wire/chat-types.js';
import { type ScriptedTurn, turnChunks } from './scripted-model.js';

/** Where a request stands in its conversation, read from the history it sends. */
export type PlanStep = {
  /** The text of the conversation's first user message (tests name conversations with it). */
  conversation: string;
  /** User messages so far (1 for the first turn). */
  turn: number;
  /** Tool rounds answered since the last user message. */
  round: number;
  /** The last user message's text. */
  lastUser: string;
  messages: OpenAIChatMessage[];
};

const textOf = (message: OpenAIChatMessage | undefined) =>
  message?.role === 'user'
    ? typeof message.content === 'string'
      ? message.content
      : message.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
    : '';

/** Where a request with this history stands in its conversation. */
export function planStepOf(messages: OpenAIChatMessage[]): PlanStep {
  const users = messages.filter((message) => message.role === 'user');
  const lastUserIndex = messages.findLastIndex((message) => message.role === 'user');
  return {
    conversation: textOf(users[0]),
    turn: users.length,
    round: messages.slice(lastUserIndex + 1).filter((message) => message.role === 'assistant').length,
    lastUser: textOf(users.at(-1)),
    messages,
  };
}

/**
 * A stateless model for many concurrent conversations: each request is answered from its own
 * history by `plan` (so a request made again after a restart gets the same answer), unlike
 * `scriptedModel`, which answers requests in arrival order.
 */
export function plannedModel(plan: (step: PlanStep) => ScriptedTurn) {
  const requests: HandlerRequest[] = [];
  const handler: ChunkHandler = (request) => {
    requests.push(request);
    const turn = plan(planStepOf(request.messages));
    if (typeof turn === 'function') return turn(request);
    if ('error' in turn) throw turn.error;
    return turnChunks(turn);
  };
  return { handler, requests };
}
