/** The call about to run, as the gate sees it. */
export type GatedCall = { toolCallId: string; toolName: string };

/**
 * Awaited before a tool's `execute` runs; a rejection keeps the call from running (it fails with
 * that error instead).
 */
export type ExecutionGate = (call: GatedCall) => Promise<void>;

const gates = new WeakMap<object, ExecutionGate>();

/**
 * Makes every execution of a tool that is not `idempotent` in the actor system wait for `gate`
 * before it calls `execute`. A durable host uses it to write ahead: XState starts a spawned child
 * before the parent's observers see the snapshot that holds it, so without a gate a tool could run
 * before the snapshot saying it runs is stored — and a crash in between would make the restored run
 * ask for it again.
 */
export function setExecutionGate(system: object, gate: ExecutionGate): void {
  gates.set(system, gate);
}

/** The gate of an actor system, if a host set one. */
export function executionGateOf(system: object): ExecutionGate | undefined {
  return gates.get(system);
}
