import type { AnyStateMachine, StateNode } from 'xstate';
import { findMessagesProblem } from '../../model/messages.js';
import { isRecord } from '../../util/is-record.js';

/**
 * What is wrong with a persisted snapshot: not a run of this machine at all, a damaged one, or one
 * of a schema version this actorloop does not read (see migrate-snapshot.ts).
 */
export type SnapshotProblem = { kind: 'corrupt' | 'other_machine' | 'unknown_version'; message: string };

const roundCallStates = new Set(['awaiting-approval', 'queued', 'running', 'settled']);
const finalStates = new Set(['done', 'halted', 'error']);

/** Every state value of the machine, one per leaf (`"idle"`, `{"requesting":"waiting"}`, …), as JSON. */
function stateValues(machine: AnyStateMachine): Set<string> {
  const values = new Set<string>();
  const visit = (node: StateNode, wrap: (leaf: unknown) => unknown) => {
    for (const [key, child] of Object.entries(node.states) as Array<[string, StateNode]>) {
      if (Object.keys(child.states).length === 0) values.add(JSON.stringify(wrap(key)));
      else visit(child, (leaf) => wrap({ [key]: leaf }));
    }
  };
  visit(machine.root as StateNode, (leaf) => leaf);
  return values;
}

const valuesByMachine = new WeakMap<AnyStateMachine, Set<string>>();

function describe(value: unknown): string {
  const json = JSON.stringify(value);
  return json === undefined ? typeof value : json.length > 80 ? `${json.slice(0, 77)}...` : json;
}

/**
 * Why a persisted snapshot (parsed from storage) cannot be restored as a run of `machine`, or
 * `undefined` when it can: checked before `createActor(machine, { snapshot })`, which would
 * otherwise throw deep inside XState or, worse, restore a run that fails later. Looks at what the
 * machine relies on — the state value, the history, the round of tool calls, the counters — not at
 * every field.
 *
 * @example
 * ```ts
 * const problem = findSnapshotProblem(JSON.parse(stored.snapshot), machine);
 * if (problem) throw new Error(`${problem.kind}: ${problem.message}`);
 * ```
 */
export function findSnapshotProblem(snapshot: unknown, machine: AnyStateMachine): SnapshotProblem | undefined {
  const corrupt = (message: string): SnapshotProblem => ({ kind: 'corrupt', message });
  if (!isRecord(snapshot)) return corrupt(`the snapshot must be a JSON object, got ${describe(snapshot)}`);
  let values = valuesByMachine.get(machine);
  if (!values) {
    values = stateValues(machine);
    valuesByMachine.set(machine, values);
  }
  const value = JSON.stringify(snapshot.value);
  if (value === undefined || !values.has(value)) {
    return {
      kind: 'other_machine',
      message: `its state value ${describe(snapshot.value)} is not a state of machine "${machine.id}" (${[...values].join(', ')})`,
    };
  }
  const isFinal = typeof snapshot.value === 'string' && finalStates.has(snapshot.value);
  if (snapshot.status !== (isFinal ? 'done' : 'active')) {
    return corrupt(`status ${describe(snapshot.status)} does not fit state ${value} (expected "${isFinal ? 'done' : 'active'}")`);
  }
  if (isFinal) {
    const output = snapshot.output;
    if (!isRecord(output) || typeof output.status !== 'string')
      return corrupt(`a finished run must hold its output, got ${describe(output)}`);
    const outputProblem = findMessagesProblem(output.messages);
    if (outputProblem) return corrupt(outputProblem.replace('input.messages', 'output.messages'));
  }
  if (snapshot.children !== undefined && !isRecord(snapshot.children))
    return corrupt(`children must be an object, got ${describe(snapshot.children)}`);
  const context = snapshot.context;
  if (!isRecord(context)) return corrupt(`context must be an object, got ${describe(context)}`);
  const messagesProblem = findMessagesProblem(context.messages);
  if (messagesProblem) return corrupt(messagesProblem.replace('input.messages', 'context.messages'));
  for (const counter of ['runStart', 'iterations', 'attempt']) {
    const count = context[counter];
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 0) {
      return corrupt(`context.${counter} must be a non-negative integer, got ${describe(count)}`);
    }
  }
  if (!isRecord(context.usage)) return corrupt(`context.usage must be an object, got ${describe(context.usage)}`);
  if (context.round !== null && context.round !== undefined) {
    if (!Array.isArray(context.round)) return corrupt(`context.round must be an array or null, got ${describe(context.round)}`);
    for (const [index, call] of (context.round as unknown[]).entries()) {
      if (
        !isRecord(call) ||
        typeof call.toolCallId !== 'string' ||
        typeof call.toolName !== 'string' ||
        typeof call.state !== 'string' ||
        !roundCallStates.has(call.state)
      ) {
        return corrupt(`context.round[${index}] must be a tool call { toolCallId, toolName, args, state }, got ${describe(call)}`);
      }
    }
  }
  return undefined;
}
