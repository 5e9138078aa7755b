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
 * state$(hostFeed(host, 'c-42')).subscribe(({ status }) => console.log(status)); // a durable host conversation
 * ```
 * @packageDocumentation
 */
export { state$ } from './state.js';
export { events$, type ConversationEmittedType } from './events.js';
export { text$ } from './text.js';
export { output$ } from './output.js';
export { conversation$ } from './conversation.js';
export { RunStoppedError } from './run-stopped-error.js';
export { hostFeed, type HostConversationFeed, type HostConversations } from '../host-feed.js';
export { isRunEnd } from '../state-update.js';
export type {
  ConversationActorLike,
  ConversationFeed,
  ConversationSource,
  ConversationStateUpdate,
  ConversationUpdate,
  ObservedStatus,
  SnapshotLike,
  Unsubscribable,
} from '../conversation-source.js';
