/**
 * What of a run's snapshot a store must see change: its state, its history and its round of tool
 * calls. Compared by identity — XState makes a new context only when an action assigns, and each
 * of these is replaced, never mutated, when it changes.
 */
export type StoredShape = { value: string; status: string; messages: unknown; round: unknown };

type SnapshotLike = { value: unknown; status: string; context: { messages: unknown; round: unknown } };

/** A state value as one string (`executingTools.running`); called on every snapshot, so without JSON. */
export function stateKeyOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) return String(value);
  let key = '';
  for (const [name, inner] of Object.entries(value)) key += `${key === '' ? '' : ','}${name}.${stateKeyOf(inner)}`;
  return key;
}

export function storedShapeOf(snapshot: SnapshotLike): StoredShape {
  const { value, status, context } = snapshot;
  return {
    value: stateKeyOf(value),
    status,
    messages: context.messages,
    round: context.round,
  };
}

/**
 * Whether a snapshot must be written: the run entered another state (requesting, executingTools,
 * awaitingApproval, a final state…), its history grew, or a tool call of the round started, got its
 * result, or was approved or denied. What changes within a request — streamed progress, the
 * response being received — is not written: a run restored in `requesting` makes the request again
 * and drops all of it.
 *
 * @example
 * ```ts
 * if (changesStoredState(lastWritten, storedShapeOf(snapshot))) write(snapshot);
 * ```
 */
export function changesStoredState(previous: StoredShape, next: StoredShape): boolean {
  return (
    previous.value !== next.value || previous.status !== next.status || previous.messages !== next.messages || previous.round !== next.round
  );
}
