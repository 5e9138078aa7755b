/**
 * `actorloop/rx`: RxJS streams of a conversation (rxjs 7.8+, an optional peer dependency).
 *
 * @example
 * ```ts
 * import { events$, output$, state$, text$ } from 'actorloop/rx';
 *
 * text$(actor).subscribe((text) => render(text));
 * events$(actor, 'tool.call', 'tool.result').subscribe((event) => log(event));
 * output$(actor).subscribe((output) => console.log(output.status));
 * ```
 * @packageDocumentation
 */
export { state$ } from './state.js';
export { events$, type ConversationEmittedType } from './events.js';
export { text$ } from './text.js';
export { output$ } from './output.js';
export { conversation$ } from './conversation.js';
export { RunStoppedError } from './run-stopped-error.js';
export type {
  ConversationActorLike,
  ConversationFeed,
  ConversationSource,
  ConversationStateUpdate,
  ConversationUpdate,
  SnapshotLike,
  Unsubscribable,
} from '../conversation-source.js';
