import { ActorloopError } from './actorloop-error.js';

const notGiven = Symbol('not given');

/**
 * Thrown at creation time (machine or tool) when an option is wrong. `option` names the option
 * and the message says what was expected, so a misconfiguration never reaches a running actor.
 *
 * @example
 * ```ts
 * try {
 *   createConversationMachine({ provider, maxToolIterations: -1 });
 * } catch (error) {
 *   if (InvalidOptionsError.isInstance(error)) console.error(error.option, error.message);
 * }
 * ```
 */
export class InvalidOptionsError extends ActorloopError {
  static override readonly errorName = 'InvalidOptionsError';
  /** The path of the offending option, e.g. `tools[1].name` or `retry.maxRetries`. */
  readonly option: string;

  constructor(option: string, expected: string, received: unknown = notGiven) {
    super(`Invalid option ${option}: expected ${expected}${received === notGiven ? '' : `, got ${describeValue(received)}`}`);
    this.option = option;
  }
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return JSON.stringify(value);
  return String(value);
}
