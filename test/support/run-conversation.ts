import { createActor, toPromise } from 'xstate';
import {
  createConversationMachine,
  handlerProvider,
  type ConversationEmittedEvent,
  type ConversationOptions,
  type Message,
  type RunOutput,
  type UserContent,
} from '../../src/index.js';
import { scriptedModel, type ScriptedTurn } from './scripted-model.js';

export { expectValidHistory } from './history.js';

export type RunOptions = Omit<ConversationOptions, 'provider'> & {
  messages?: Message[];
  content?: UserContent;
  /** Called once the actor started, before the user message is sent. */
  onStart?: (actor: ReturnType<typeof createActor<ReturnType<typeof createConversationMachine>>>) => void;
};

/** Runs one scripted conversation to its end, recording every emitted event and state. */
export async function runConversation(turns: ScriptedTurn[], options: RunOptions = {}) {
  const { messages = [], content = 'hello', onStart, ...machineOptions } = options;
  const model = scriptedModel(turns);
  const machine = createConversationMachine({
    provider: handlerProvider(model.handler),
    retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 5, jitter: false },
    ...machineOptions,
  });
  const actor = createActor(machine, { input: { messages } });
  const events: ConversationEmittedEvent[] = [];
  const states: string[] = [];
  actor.on('*', (event) => events.push(event));
  actor.subscribe({ next: (snapshot) => states.push(JSON.stringify(snapshot.value)), error: () => undefined });
  actor.start();
  onStart?.(actor);
  actor.send({ type: 'user.message', content });
  const output: RunOutput = await toPromise(actor);
  return { output, events, states, requests: model.requests, actor, machine };
}

/** Emitted events of one type. */
export function eventsOf<T extends ConversationEmittedEvent['type']>(events: ConversationEmittedEvent[], type: T) {
  return events.filter((event): event is Extract<ConversationEmittedEvent, { type: T }> => event.type === type);
}

/** A promise and its resolver, for tests that hold a tool or a stream at a chosen point. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
