import { ActorloopError } from '../errors/actorloop-error.js';

/**
 * Thrown by a tool to end the run on purpose. The run ends in `halted` with reason `tool_halt`,
 * and the error's `content` becomes the run's final text; the other calls of that round that had
 * not finished get a "halted" error result, so the history stays valid.
 *
 * @example
 * ```ts
 * const transfer = defineTool({
 *   name: 'transfer', description: 'Hand the conversation to a human',
 *   parameters: z.object({ summary: z.string() }),
 *   execute: ({ summary }) => { throw new HaltError(`Handed to a human: ${summary}`); },
 * });
 * ```
 */
export class HaltError extends ActorloopError {
  static override readonly errorName = 'HaltError';
  /** The text the run ends with. */
  readonly content: string;

  constructor(content: string, options?: { cause?: unknown }) {
    super(content, options);
    this.content = content;
  }
}
