/**
 * A remote task's state, as A2A names it (`unknown` for a state this client does not know).
 *
 * @example
 * ```ts
 * const state: A2ATaskStateName = 'working';
 * ```
 */
export type A2ATaskStateName =
  | 'submitted'
  | 'working'
  | 'completed'
  | 'failed'
  | 'canceled'
  | 'input-required'
  | 'rejected'
  | 'auth-required'
  | 'unknown';

/**
 * The `data` of a `tool.progress` event of an A2A agent call, one per update the remote agent
 * streams: a status change (with the text of its status message, if any) or a chunk of an
 * artifact. Plain JSON, so it is stored and streamed like any tool progress.
 *
 * @example
 * ```ts
 * actor.on('tool.progress', ({ data }) => {
 *   const update = data as A2AAgentProgress;
 *   if (update.kind === 'status') console.log(`${update.agent}: ${update.state} ${update.text ?? ''}`);
 * });
 * ```
 */
export type A2AAgentProgress =
  | { kind: 'status'; agent: string; taskId: string; state: A2ATaskStateName; text?: string }
  | {
      kind: 'artifact';
      agent: string;
      taskId: string;
      artifactId: string;
      name?: string;
      text: string;
      append: boolean;
      lastChunk: boolean;
    };

/**
 * What `onInputRequired` is given: the remote task that stopped for input and what it asked.
 *
 * @example
 * ```ts
 * const onInputRequired = ({ agent, question }: A2AInputRequest) => (question.includes('currency') ? 'EUR' : undefined);
 * ```
 */
export type A2AInputRequest = {
  /** The remote agent's name. */
  agent: string;
  taskId: string;
  contextId: string;
  /** The text of the task's status message: what the agent asks ('' if it said nothing). */
  question: string;
  /** The message the call sent first. */
  message: string;
  /** How many answers this call has sent already (0 the first time). */
  answered: number;
  /** Aborted when the call is canceled or times out. */
  signal: AbortSignal;
};
