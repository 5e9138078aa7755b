import type { AnyStateMachine } from 'xstate';
import { isConversationMachine } from '../../machines/names/conversation-mark.js';
import { journaledMachine } from '../../machines/restore/step-journal.js';
import type { ConversationMachine } from '../../machines/names/types.js';
import { isRecord } from '../../util/is-record.js';

/** A workflow's machine with its conversations journaled, and the conversation logics it runs so. */
export type JournaledWorkflow = {
  machine: AnyStateMachine;
  /** Every conversation machine the journaled workflow invokes or spawns by name: the run tells a stray one from these. */
  conversations: WeakSet<object>;
};

/** A state machine's shape, read without importing XState's class (a machine from another copy of XState passes too). */
function isStateMachine(logic: unknown): logic is AnyStateMachine {
  return isRecord(logic) && typeof logic.provide === 'function' && isRecord(logic.config) && isRecord(logic.implementations);
}

type StateConfig = { invoke?: unknown; states?: Record<string, StateConfig> } & Record<string, unknown>;

/**
 * The workflow's machine for runs whose steps go through a step journal: each conversation it
 * invokes or spawns runs `journaledMachine(conversation)` (its request and tool timeouts decided
 * inside the journaled steps, so that a replay takes the transitions the run took), and so does
 * each conversation of a workflow nested in it. The journal itself is the actor system's
 * (`setStepJournal(actor.system, …)`): a workflow's conversations are actors of its system, so it
 * reaches them as it reaches an agent call's child. Only the machines change: the chart, its ids
 * and its implementations are the user's, so a snapshot of either machine restores in the other.
 *
 * Conversations named in `setup({ actors })` are replaced through `provide`; one given inline as an
 * invoke's `src` is replaced in a copy of the chart's config (XState resolves inline sources from
 * the config, not from the implementations). One spawned from an inline machine cannot be reached:
 * the run warns about it.
 */
export function journaledWorkflow(machine: AnyStateMachine): JournaledWorkflow {
  const conversations = new WeakSet<object>();
  const done = new Map<AnyStateMachine, AnyStateMachine>();

  const journaledLogic = (logic: unknown): unknown => {
    if (isConversationMachine(logic)) {
      const known = done.get(logic);
      if (known) return known;
      const journaled = journaledMachine(logic as ConversationMachine);
      conversations.add(journaled);
      done.set(logic, journaled);
      return journaled;
    }
    return isStateMachine(logic) ? workflowOf(logic) : logic;
  };

  const workflowOf = (workflow: AnyStateMachine): AnyStateMachine => {
    const known = done.get(workflow);
    if (known) return known;
    // A chart that invokes itself gets the machine being built.
    done.set(workflow, workflow);
    const actors: Record<string, unknown> = {};
    let changedActors = false;
    for (const [source, logic] of Object.entries(workflow.implementations.actors as Record<string, unknown>)) {
      const journaled = journaledLogic(logic);
      actors[source] = journaled;
      if (journaled !== logic) changedActors = true;
    }
    const config = configWithJournaledSources(workflow.config as StateConfig, journaledLogic);
    let result = workflow;
    if (config !== workflow.config) {
      // What `provide` does, with the copied config: XState's own constructor, the same implementations.
      const Machine = (workflow as unknown as { constructor: new (config: unknown, implementations: unknown) => AnyStateMachine })
        .constructor;
      result = new Machine(config, workflow.implementations);
    }
    if (changedActors) result = result.provide({ actors: actors as never });
    done.set(workflow, result);
    return result;
  };

  return { machine: workflowOf(machine), conversations };
}

/** The chart's config with each inline invoke source journaled; the same object when none changes. */
function configWithJournaledSources(config: StateConfig, journaled: (logic: unknown) => unknown): StateConfig {
  let copy: StateConfig | undefined;
  if (config.invoke !== undefined) {
    const invokes = Array.isArray(config.invoke) ? config.invoke : [config.invoke];
    let changed = false;
    const next = invokes.map((invoke: unknown) => {
      if (!isRecord(invoke) || typeof invoke.src === 'string' || invoke.src === undefined) return invoke;
      const src = journaled(invoke.src);
      if (src === invoke.src) return invoke;
      changed = true;
      return { ...invoke, src };
    });
    if (changed) copy = { ...config, invoke: Array.isArray(config.invoke) ? next : next[0] };
  }
  if (isRecord(config.states)) {
    let states: Record<string, StateConfig> | undefined;
    for (const [key, state] of Object.entries(config.states)) {
      if (!isRecord(state)) continue;
      const next = configWithJournaledSources(state as StateConfig, journaled);
      if (next === state) continue;
      states ??= { ...config.states };
      states[key] = next;
    }
    if (states) copy = { ...(copy ?? config), states };
  }
  return copy ?? config;
}
