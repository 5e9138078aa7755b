import { A2AAgentError } from './a2a-agent-error.js';

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Room for a thrown message in an error text: a proxy's HTML error page is not for the model to read whole. */
const maxMessageLength = 500;

/**
 * A thrown error as a line for the model: its message, the reason undici's "fetch failed" hides in
 * its cause (ECONNREFUSED, a DNS failure, "other side closed") added, clipped to 500 characters.
 */
export function describeThrown(error: unknown): string {
  let root: unknown = error;
  for (let depth = 0; depth < 5 && root instanceof Error && root.cause !== undefined; depth++) root = root.cause;
  const top = messageOf(error);
  const text = root === error || messageOf(root) === top ? top : `${top}: ${messageOf(root)}`;
  return text.length > maxMessageLength ? `${text.slice(0, maxMessageLength - 1)}…` : text;
}

/**
 * What a thrown error of a call means, for the model: the agent could not be reached (`fetch`
 * throws a `TypeError` for a refused or dropped connection), or it answered with something that is
 * no A2A answer (a JSON-RPC error, HTML, a truncated stream).
 */
export function classifyCallFailure(thrown: unknown, agent: string, taskId: string | undefined): A2AAgentError {
  if (A2AAgentError.isInstance(thrown)) return thrown;
  const where = taskId === undefined ? '' : ` (task ${taskId})`;
  const base = { agent, ...(taskId === undefined ? {} : { taskId }), cause: thrown };
  if (
    thrown instanceof TypeError ||
    (thrown instanceof Error && thrown.name === 'AbortError') ||
    (thrown instanceof Error && thrown.name === 'TimeoutError')
  ) {
    return new A2AAgentError(`could not reach the remote agent "${agent}"${where}: ${describeThrown(thrown)}`, {
      kind: 'connection',
      ...base,
    });
  }
  // The SDK's errors for a JSON-RPC error answer carry its code; anything else it throws is an answer it could not parse.
  const code = thrown instanceof Error ? (thrown as { code?: unknown }).code : undefined;
  if (typeof code === 'number') {
    return new A2AAgentError(`the remote agent "${agent}" answered with error ${code}${where}: ${describeThrown(thrown)}`, {
      kind: 'protocol',
      ...base,
    });
  }
  return new A2AAgentError(`the remote agent "${agent}" gave an answer that is not valid A2A${where}: ${describeThrown(thrown)}`, {
    kind: 'protocol',
    ...base,
  });
}
