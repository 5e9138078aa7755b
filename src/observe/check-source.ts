import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { ConversationEmittedEvent } from '../machines/names/types.js';
import { option } from '../util/option-schema.js';
import { isActorLike, isFeed } from './conversation-source.js';

/** Every type of event a conversation emits. */
export const emittedEventTypes = [
  'request.started',
  'request.finished',
  'text.delta',
  'reasoning.delta',
  'tool.call.delta',
  'tool.call',
  'tool.started',
  'agent.started',
  'agent.event',
  'agent.finished',
  'agent.handoff',
  'tool.result',
  'tool.progress',
  'tool.approval.requested',
  'request.retry',
  'usage',
  'doom_loop.detected',
  'event.rejected',
  'object.delta',
  'output.repair',
  'user.message.queued',
  'request.interrupted',
  'provider.fallback',
  'context.compacted',
  'guardrail.checked',
] as const satisfies readonly ConversationEmittedEvent['type'][];

// Fails to compile when an emitted event type is missing from the list above.
type MissingEmittedType = Exclude<ConversationEmittedEvent['type'], (typeof emittedEventTypes)[number]>;
const allEmittedTypesListed: MissingEmittedType extends never ? true : false = true;
void allEmittedTypesListed;

const eventTypesSchema = option.array(option.choice(emittedEventTypes, `one of ${emittedEventTypes.join(', ')}`));

/**
 * The source and event types given to an observer, checked: a source that is neither an actor nor
 * a feed, or a type no conversation emits, is an `InvalidOptionsError` naming it.
 */
export function checkSource(source: unknown, what: string, types: readonly unknown[] = []): void {
  if (!isActorLike(source) && !isFeed(source)) {
    throw new InvalidOptionsError(`${what}(source)`, 'a conversation actor or a feed { subscribe(listener) }', source);
  }
  eventTypesSchema.resolve(types, `${what}(source, ...types)`);
}
