import { randomUUID } from 'node:crypto';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import type { McpSessionInfo, ServeMcpOptions } from './serve-mcp-options.js';

/**
 * The conversation of a new session: `conversationId`'s (checked: a function may answer anything),
 * else `idPrefix` and a random UUID.
 *
 * @example
 * ```ts
 * conversationIdOf({ name: 'a', version: '1', conversationId: 'c1' }, { transport: 'stdio' }); // 'c1'
 * ```
 */
export function conversationIdOf(options: ServeMcpOptions, session: McpSessionInfo): string {
  const chosen = options.conversationId;
  if (chosen === undefined) return `${options.idPrefix ?? 'mcp-'}${randomUUID()}`;
  const id = typeof chosen === 'function' ? chosen(session) : chosen;
  if (!isConversationId(id)) {
    throw new InvalidOptionsError(
      'conversationId',
      'a function answering a non-empty string without surrounding spaces or control characters',
      id,
    );
  }
  return id;
}

/** An id that prints and stores as it is: not empty, no surrounding spaces, no control characters. */
export function isConversationId(id: unknown): id is string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  return typeof id === 'string' && id !== '' && id.trim() === id && !/[\u0000-\u001f\u007f]/.test(id);
}
