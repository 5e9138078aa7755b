import { ActorloopError } from '../../../errors/actorloop-error.js';

/**
 * Why a call of a remote A2A agent gave no answer:
 * - `card`: its agent card could not be fetched or is not a card (not JSON, no interface the client speaks);
 * - `connection`: the agent could not be reached, or the connection dropped mid-task;
 * - `protocol`: the agent answered with a JSON-RPC error or with something that is not A2A;
 * - `failed` / `rejected`: the remote task ended `failed` or `rejected`;
 * - `canceled`: the remote agent canceled the task itself (a cancel of the caller's is no error);
 * - `input-required` / `auth-required`: the remote task stopped to ask for more, and nothing answered it.
 *
 * @example
 * ```ts
 * const kind: A2AAgentErrorKind = 'input-required';
 * ```
 */
export type A2AAgentErrorKind =
  | 'card'
  | 'connection'
  | 'protocol'
  | 'failed'
  | 'rejected'
  | 'canceled'
  | 'input-required'
  | 'auth-required';

/**
 * What an A2A agent tool throws when the remote agent gives no answer. Inside a conversation the
 * machine turns it into an error result the parent's model reads, so the message names the remote
 * agent and is written for the model; `kind`, `agent` and `taskId` are for code that calls
 * `execute` itself or reads `cause` of a halt.
 *
 * @example
 * ```ts
 * try {
 *   await a2aAgentToolFromCard('https://agents.example.com/research');
 * } catch (error) {
 *   if (A2AAgentError.isInstance(error) && error.kind === 'card') console.warn('no agent card:', error.message);
 * }
 * ```
 */
export class A2AAgentError extends ActorloopError {
  static override readonly errorName = 'A2AAgentError';
  readonly kind: A2AAgentErrorKind;
  /** The remote agent's name (from its card), or its URL when the card was never read. */
  readonly agent: string;
  /** The remote task, when one was created. */
  readonly taskId?: string;

  constructor(message: string, options: { kind: A2AAgentErrorKind; agent: string; taskId?: string; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = options.kind;
    this.agent = options.agent;
    if (options.taskId !== undefined) this.taskId = options.taskId;
  }
}
