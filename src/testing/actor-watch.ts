import type { AnyActorRef, InspectionEvent } from 'xstate';
import { isConversationMachine } from '../machines/names/conversation-mark.js';
import { isRecord } from '../util/is-record.js';
import type { RunFaults } from './run-faults.js';
import type { Problem } from './soak-checks.js';

/** The path of ids from the root to an actor, e.g. `review/agent:call_1` (the root's own id for the root). */
function pathOf(ref: AnyActorRef): string {
  const ids: string[] = [];
  for (let current: AnyActorRef | undefined = ref; current?._parent; current = current._parent) ids.unshift(current.id);
  return ids.join('/') || ref.id;
}

/**
 * Watches every actor of a soak run through XState's inspection — all its actor systems, across
 * restores and host lives: the conversations' outputs as their parents receive them, and the actors
 * that started, to find those still running once the run ended.
 */
export class ActorWatch {
  /** Each nested conversation's output, as its parent received it. */
  readonly nested: Array<{ where: string; output: unknown }> = [];
  /** Actors that started (an actor only made — a restore's, a view's — never runs and is no leak). */
  private readonly started = new Set<AnyActorRef>();

  readonly inspect = (inspection: InspectionEvent): void => {
    if (inspection.type !== '@xstate.event') return;
    const { event } = inspection;
    // XState sends `xstate.init` to an actor as it starts it.
    if (event.type === 'xstate.init') {
      this.started.add(inspection.actorRef as AnyActorRef);
      return;
    }
    // A root's end is sent to no one: every done event with a source is a child's.
    const source = inspection.sourceRef as (AnyActorRef & { logic?: unknown }) | undefined;
    if (!event.type.startsWith('xstate.done.actor.') || !source?._parent) return;
    if (isConversationMachine(source.logic))
      this.nested.push({ where: `conversation ${pathOf(source)}`, output: (event as { output?: unknown }).output });
  };

  /** The actors still running: started, and neither ended nor stopped. */
  active(): AnyActorRef[] {
    const active: AnyActorRef[] = [];
    for (const ref of this.started) {
      const status = (ref.getSnapshot() as { status?: unknown } | undefined)?.status;
      if (status === 'active') active.push(ref);
      // Ended or stopped for good: not looked at again.
      else this.started.delete(ref);
    }
    return active;
  }
}

/** Where an actor is: a machine's state, else what kind of actor it is. */
function stateOf(ref: AnyActorRef): string {
  const snapshot: unknown = ref.getSnapshot();
  if (isRecord(snapshot) && 'value' in snapshot) return `in state ${JSON.stringify(snapshot.value)}`;
  const src = (ref as { src?: unknown }).src;
  return typeof src === 'string' && src !== ref.id ? `running (${src})` : 'running';
}

const listed = (items: string[]) =>
  items.length <= 5 ? items.join('; ') : `${items.slice(0, 5).join('; ')}; and ${items.length - 5} more`;

/** The conversation a call belongs to, when it has an id of its own (XState's generated `x:<n>` names none). */
const ownerOf = (caller: string | undefined) => (caller === undefined || /^x:\d+$/.test(caller) ? '' : ` of ${caller}`);

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * What a run that ended left running, after `graceMs`: actors of its systems still active (a
 * nested conversation, an agent call, a spawned child no one stopped), stalled requests and hung
 * tools whose signal never fired, tools' `execute`s that ignore their signal. Looked at again every
 * few milliseconds, so a clean run costs one event-loop turn.
 */
export async function leakProblems(watch: ActorWatch, faults: RunFaults, graceMs: number): Promise<Problem[]> {
  const deadline = Date.now() + graceMs;
  await tick();
  for (;;) {
    const actors = watch.active();
    const clean = actors.length === 0 && faults.waiting === 0 && faults.running.size === 0;
    if (clean) return [];
    if (Date.now() >= deadline) {
      const after = `${graceMs} ms after the run ended`;
      const problems: Problem[] = [];
      if (actors.length > 0)
        problems.push({
          check: 'leak',
          message: `${actors.length} actor(s) still active ${after}: ${listed(actors.map((ref) => `${pathOf(ref)} ${stateOf(ref)}`))}`,
        });
      if (faults.waiting > 0)
        problems.push({
          check: 'leak',
          message: `${faults.waiting} stalled request(s) or hung tool(s) still wait for their signal ${after}: the actor that made them was never stopped`,
        });
      if (faults.running.size > 0)
        problems.push({
          check: 'leak',
          message: `${faults.running.size} tool execution(s) still running ${after}: ${listed(
            [...faults.running].map((call) => `${call.toolName} call ${call.toolCallId}${ownerOf(call.caller)}`),
          )} (an execute that ignores its signal goes on after the machine gave up on the call)`,
        });
      return problems;
    }
    await pause(Math.min(5, Math.max(1, deadline - Date.now())));
  }
}
