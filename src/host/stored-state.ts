/**
 * What of a run's snapshot a store must see change: its state, its history, its round of tool
 * calls and its queued messages. Compared by identity — XState makes a new context only when an action assigns, and each
 * of these is replaced, never mutated, when it changes.
 */
export type StoredShape = {
  value: string;
  status: string;
  messages: unknown;
  round: unknown;
  /** Messages queued for the next request (`steering: 'queue'`): stored, so none is lost to a restart. */
  queued: unknown;
  /** The shapes of the agent calls' child conversations (`agent:<toolCallId>`), which are stored with the run. */
  agents?: ReadonlyArray<readonly [string, StoredShape]>;
};

type SnapshotLike = {
  value: unknown;
  status: string;
  context: { messages: unknown; round: unknown; control?: { queued?: unknown } };
  children?: unknown;
};

function agentShapes(children: unknown): Array<readonly [string, StoredShape]> | undefined {
  if (typeof children !== 'object' || children === null) return undefined;
  // Called for every snapshot a host sees (each streamed delta batch): no array unless there are agent children.
  let shapes: Array<readonly [string, StoredShape]> | undefined;
  for (const id in children) {
    if (!id.startsWith('agent:')) continue;
    const child = (children as Record<string, { getSnapshot?: () => unknown } | undefined>)[id];
    const snapshot = child?.getSnapshot?.() as SnapshotLike | undefined;
    if (!snapshot?.context) continue;
    shapes ??= [];
    shapes.push([id, storedShapeOf(snapshot)]);
  }
  return shapes;
}

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
    queued: context.control?.queued,
    ...(snapshot.children === undefined ? {} : { agents: agentShapes(snapshot.children) }),
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
    previous.value !== next.value ||
    previous.status !== next.status ||
    previous.messages !== next.messages ||
    previous.round !== next.round ||
    previous.queued !== next.queued ||
    agentsChanged(previous.agents, next.agents)
  );
}

// A child's progress changes nothing in its parent's context, so the children are compared too.
function agentsChanged(previous: StoredShape['agents'], next: StoredShape['agents']): boolean {
  if (previous === next) return false;
  if (previous === undefined || next === undefined) return (previous?.length ?? 0) + (next?.length ?? 0) > 0;
  if (previous.length !== next.length) return true;
  return next.some(([id, shape], index) => {
    const [previousId, previousShape] = previous[index] as readonly [string, StoredShape];
    return id !== previousId || changesStoredState(previousShape, shape);
  });
}
