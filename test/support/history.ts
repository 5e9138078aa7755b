import { expect } from 'vitest';
import { toAnthropicMessages } from '../../src/providers/anthropic/index.js';
import { findMessagesProblem, type Message } from '../../src/model/messages.js';
import { toOpenAIMessages } from '../../src/providers/openai-wire/to-openai-messages.js';

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

/**
 * The history as each wire receives it, checked the way the APIs check it: OpenAI Chat — every
 * assistant `tool_calls` answered by `tool` messages with those ids, right after it; Anthropic
 * Messages — roles alternate starting with `user`, and every `tool_use` is answered by a
 * `tool_result` at the start of the next user message.
 */
export function expectValidForBothWires(messages: Message[]): void {
  expectValidHistory(messages);
  const openai = toOpenAIMessages(messages);
  openai.forEach((message, index) => {
    if (message.role !== 'assistant' || !message.tool_calls?.length) return;
    const answers = openai.slice(index + 1, index + 1 + message.tool_calls.length);
    expect(answers.map((answer) => (answer.role === 'tool' ? answer.tool_call_id : answer.role))).toEqual(
      message.tool_calls.map((call) => call.id),
    );
  });
  const { messages: anthropic } = toAnthropicMessages(messages);
  expect(anthropic[0]?.role).toBe('user');
  anthropic.forEach((message, index) => {
    if (index > 0) expect(message.role, `anthropic message ${index}`).not.toBe(anthropic[index - 1]?.role);
    if (message.role !== 'assistant' || typeof message.content === 'string') return;
    const uses = message.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []));
    if (uses.length === 0) return;
    const next = anthropic[index + 1];
    const blocks = next && typeof next.content !== 'string' ? next.content : [];
    expect(blocks.slice(0, uses.length).map((block) => (block.type === 'tool_result' ? block.tool_use_id : block.type))).toEqual(uses);
  });
}
