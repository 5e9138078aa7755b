import { ActorloopError } from '../../errors/actorloop-error.js';

/**
 * Why an MCP tool call failed:
 * - `tool`: the server ran the tool and answered `isError: true` (the message is the server's text);
 * - `server`: the server answered the request with a JSON-RPC error, or with something that is not a tool result;
 * - `connection`: the server could not be reached, or the connection closed before it answered;
 * - `closed`: the tool set was closed with `close()`.
 *
 * @example
 * ```ts
 * const kind: McpToolErrorKind = 'connection';
 * ```
 */
export type McpToolErrorKind = 'tool' | 'server' | 'connection' | 'closed';

/**
 * What an MCP tool throws when a call does not produce a result. Inside a conversation the machine
 * turns it into an error result (`isError: true`) the model reads, so its message is written for
 * the model; `kind` and `code` are for code that calls `execute` itself.
 *
 * @example
 * ```ts
 * try {
 *   await tool.execute({ path: '/etc' }, context);
 * } catch (error) {
 *   if (McpToolError.isInstance(error) && error.kind === 'connection') console.warn('server down:', error.message);
 * }
 * ```
 */
export class McpToolError extends ActorloopError {
  static override readonly errorName = 'McpToolError';
  readonly kind: McpToolErrorKind;
  /** The JSON-RPC error code, for `kind: 'server'` errors that had one. */
  readonly code?: number;

  constructor(message: string, options: { kind: McpToolErrorKind; code?: number; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = options.kind;
    if (options.code !== undefined) this.code = options.code;
  }
}
