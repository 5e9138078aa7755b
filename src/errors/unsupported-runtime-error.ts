import { ActorloopError } from './actorloop-error.js';

/**
 * Thrown when a part of actorloop that needs Node.js is imported or used on another runtime (Bun,
 * Deno, Cloudflare workerd): the SQLite store, the CLI, MCP servers over stdio, the Restate
 * endpoint. The message names the runtime, the part and what to use there instead; `runtime` and
 * `feature` carry the same for code.
 *
 * @example
 * ```ts
 * try {
 *   await import('actorloop/sqlite');
 * } catch (error) {
 *   if (UnsupportedRuntimeError.isInstance(error)) console.error(error.message); // … use actorloop/postgres …
 * }
 * ```
 */
export class UnsupportedRuntimeError extends ActorloopError {
  static override readonly errorName = 'UnsupportedRuntimeError';
  /** The runtime that refused: `bun`, `deno`, `workerd` or `unknown`. */
  readonly runtime: string;
  /** The part that needs Node.js, e.g. `actorloop/sqlite`. */
  readonly feature: string;

  constructor(feature: string, runtime: string, runtimeLabel: string, alternative: string) {
    super(`${feature} needs Node.js (≥ 20.19) and cannot run on ${runtimeLabel}: ${alternative}`);
    this.runtime = runtime;
    this.feature = feature;
  }
}
