import { expect } from 'vitest';
import { findMessagesProblem, type Message } from '../../src/providers/messages.js';

/**
 * Checks a run's history is valid to send again: well formed, and every tool call answered by
 * exactly one result, in call order, in the tool message right after it (docs/behaviour.md item 2; both wires
 * require the pairing).
 */
export function expectValidHistory(messages: Message[]): void {
  expect(findMessagesProblem(messages)).toBeUndefined();
  messages.forEach((message, index) => {
    if (message.role === 'assistant') {
      const callIds = message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : []));
      if (callIds.length === 0) return;
      const next = messages[index + 1];
      expect(next?.role, `message ${index + 1} must hold the results of message ${index}'s tool calls`).toBe('tool');
      const resultIds = next?.role === 'tool' ? next.content.map((part) => part.toolCallId) : [];
      expect(resultIds).toEqual(callIds);
    }
    if (message.role === 'tool') {
      const previous = messages[index - 1];
      expect(previous?.role, `tool message ${index} must follow an assistant message`).toBe('assistant');
    }
  });
}
