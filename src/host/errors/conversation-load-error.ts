import { ActorloopError } from '../../errors/actorloop-error.js';

/**
 * What is wrong with a stored conversation: `corrupt` — the snapshot is not valid JSON or not the
 * shape of a conversation run; `other_machine` — it was written for another machine;
 * `unknown_version` — its snapshot format version is one this actorloop does not read (written by
 * a newer one); `missing_media` — it refers to a medium (`sha256:…`) whose bytes the store no
 * longer has.
 */
export type ConversationLoadProblem = 'corrupt' | 'other_machine' | 'unknown_version' | 'missing_media';

/**
 * A stored conversation cannot be loaded. The stored data is left as it is (nothing is written
 * over it) and every other conversation goes on working; `recover()` lists it among `failed`.
 *
 * @example
 * ```ts
 * try {
 *   await host.get('c-42');
 * } catch (error) {
 *   if (ConversationLoadError.isInstance(error)) console.error(error.conversationId, error.problem, error.message);
 * }
 * ```
 */
export class ConversationLoadError extends ActorloopError {
  static override readonly errorName = 'ConversationLoadError';
  readonly conversationId: string;
  readonly problem: ConversationLoadProblem;

  constructor(conversationId: string, problem: ConversationLoadProblem, detail: string) {
    super(`stored conversation ${JSON.stringify(conversationId)} cannot be loaded (${problem.replace('_', ' ')}): ${detail}`);
    this.conversationId = conversationId;
    this.problem = problem;
  }
}
