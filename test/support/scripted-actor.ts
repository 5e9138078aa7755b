import { createActor } from 'xstate';
import { createConversationMachine, handlerProvider, type ConversationActor, type ConversationOptions } from '../../src/index.js';
import type { OpenAIChatCompletionChunk } from '../../src/providers/openai/index.js';
import { scriptedModel, type ScriptedTurn } from './scripted-model.js';

/** A conversation actor over a scripted model, created but not started: tests attach observers first or late. */
export function scriptedActor(turns: ScriptedTurn[], options: Omit<ConversationOptions, 'provider'> = {}) {
  const model = scriptedModel(turns);
  const machine = createConversationMachine({
    provider: handlerProvider(model.handler),
    retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5, jitter: false },
    ...options,
  });
  const actor: ConversationActor = createActor(machine, { input: { messages: [] } });
  return { actor, machine, requests: model.requests };
}

/** A turn that streams `text` and then fails with `status` (a partial response that a retry must discard). */
export function partialThenFail(text: string, status: number): ScriptedTurn {
  return async function* () {
    yield {
      id: 'p1',
      object: 'chat.completion.chunk',
      model: 'scripted',
      choices: [{ index: 0, delta: { role: 'assistant', content: text }, finish_reason: null }],
    } satisfies OpenAIChatCompletionChunk;
    throw Object.assign(new Error(`http ${status}`), { status });
  };
}

/** The listeners XState holds for an actor (private fields, read to prove observers leave nothing behind). */
export function listenerCounts(actor: ConversationActor): { observers: number; eventListeners: number } {
  const internals = actor as unknown as { observers: Set<unknown>; eventListeners: Map<string, Set<unknown>> };
  let eventListeners = 0;
  for (const listeners of internals.eventListeners.values()) eventListeners += listeners.size;
  return { observers: internals.observers.size, eventListeners };
}
