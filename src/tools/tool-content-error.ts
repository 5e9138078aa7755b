import { ActorloopError } from '../errors/actorloop-error.js';

/**
 * Why a tool's `toolContent([...])` result cannot go to the model: a part that is not text, an
 * image or a file, or a media part with a bad type, URL or base64, or over `maxMediaBytes`. The
 * run makes it the call's error result (the model reads the message), so the call still gets
 * exactly one result.
 *
 * @example
 * ```ts
 * if (ToolContentError.isInstance(error)) console.log(error.message); // 'toolContent part 1.data is a file: URL; …'
 * ```
 */
export class ToolContentError extends ActorloopError {
  static override readonly errorName = 'ToolContentError';
}
