import type { ConversationEmittedEvent } from '../machines/names/types.js';

/** The events that make or reset the text of the response being streamed. */
export type TextEvent = Extract<ConversationEmittedEvent, { type: 'request.started' | 'request.retry' | 'text.delta' }>;

/**
 * The text of the response being streamed after one more event, or `undefined` when the event
 * leaves it as it is: `''` at a new request and at a retry that discards partial output, longer
 * with each `text.delta`.
 */
export function nextText(text: string, event: TextEvent): string | undefined {
  if (event.type === 'text.delta') return event.delta === '' ? undefined : text + event.delta;
  if (event.type === 'request.started') return '';
  return event.discardPartial ? '' : undefined;
}
