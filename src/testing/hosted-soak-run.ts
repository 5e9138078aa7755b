import type { AnyActorRef, AnyStateMachine, InspectionEvent } from 'xstate';
import { createActor } from 'xstate';
import { setFaultInjector } from '../actors/fault-injector.js';
import { type ConversationHost, createConversationHost } from '../host/conversation-host.js';
import type { ConversationStore } from '../host/conversation-store.js';
import { hostedMachineOf } from '../host/hosted-machine.js';
import { answeredCallIds } from './soak-checks.js';
import type { HostSettings, RestingSnapshot, RunControl, RunDriver } from './soak-types.js';

/** One process's host over the run's store: dead once killed. */
type Life = { host: ConversationHost<AnyStateMachine>; dead: boolean; systems: Set<object>; roots: AnyActorRef[] };

/** The store calls that write: a killed process makes none of them, its lease's release included. */
const writes = new Set<PropertyKey>(['save', 'delete', 'acquireLease', 'renewLease', 'releaseLease']);

/**
 * The store as one host's process sees it: every write refused once the process is killed (a
 * write already on its way lands, as a database commit in flight does), and never closed by the
 * host — the soak closes the store once, after the run.
 */
function processView(store: ConversationStore, life: { dead: boolean }): ConversationStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'close') return async () => undefined;
      const value = Reflect.get(target, property, target) as unknown;
      if (typeof value !== 'function') return value;
      if (!writes.has(property)) return value.bind(target);
      return async (...args: unknown[]) => {
        if (life.dead) throw new Error('the process was killed (faultSoak): nothing more is written');
        return value.apply(target, args);
      };
    },
  });
}

const describe = (error: unknown) => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
let hostedRuns = 0;

/**
 * Runs the machine in a host (`createConversationHost` over a store of its own, `host.start`), as
 * a service does. The plan's restore is a kill: from that moment the host's process writes
 * nothing, its actors start nothing more, it is dropped without a final save and without giving
 * its lease up, and a new host over the same store `recover()`s the run from its last stored step
 * (once the dead host's lease lapsed, on a store that hands leases out).
 */
export function hostedDriver(control: RunControl, settings: HostSettings): RunDriver {
  const { machine, faults, watch } = control;
  const id = `faultsoak-${control.seed}-${++hostedRuns}`;
  faults.restoreWords = { restore: 'a kill', snapshot: 'the last stored step' };
  let store: ConversationStore | undefined;
  let current: Life | undefined;
  let killing: Promise<void> | undefined;
  let cancelled = false;

  const live = (stored: ConversationStore): Life => {
    const life = { dead: false, systems: new Set<object>(), roots: [] as AnyActorRef[] };
    const inspect = (inspection: InspectionEvent) => {
      // The host makes each run's root actor: the injector is set on its system before anything in it starts.
      const root = inspection.actorRef as AnyActorRef;
      if (inspection.type === '@xstate.actor' && !root._parent) {
        life.roots.push(root);
        life.systems.add(root.system);
        setFaultInjector(root.system, life.dead ? faults.frozen() : faults);
      }
      watch.inspect(inspection);
    };
    const host = createConversationHost<AnyStateMachine>({
      machine,
      store: processView(stored, life),
      inspect,
      leaseTtlMs: settings.leaseTtlMs,
      // A killed host's failures are the kill's; a live host has none to report on a working store.
      onError: (error) => {
        if (!life.dead) faults.problems.push({ check: 'failed', message: `the host reported: ${describe(error)}` });
      },
    });
    return Object.assign(life, { host });
  };

  const awaitResult = (life: Life) => {
    life.host.result(id).then(
      (output) => {
        if (!life.dead) control.settle({ output });
      },
      (error: unknown) => {
        if (!life.dead) control.settle({ error });
      },
    );
  };

  /** Starts the run in `life`. A start a kill cut short is not the run's failure: the kill sees to the run. */
  const startIn = async (life: Life) => {
    try {
      await life.host.start(id, { input: control.input });
    } catch (error) {
      if (life.dead) return;
      throw error;
    }
    awaitResult(life);
  };

  /** Resumes the run in the new host, waiting out a lease the killed host still holds. */
  const recoverIn = async (life: Life, stored: ConversationStore) => {
    const workflow = hostedMachineOf(machine).workflow;
    const patienceMs = settings.leaseTtlMs * 2 + 1_000;
    const deadline = Date.now() + patienceMs;
    for (;;) {
      const report = await life.host.recover();
      for (const { error } of report.failed)
        faults.problems.push({ check: 'failed', message: `recover() could not resume the run after a kill: ${describe(error)}` });
      if (!report.skipped.includes(id)) return;
      // Skipped: not in flight (it ended, or waits for an approval any host takes), or the dead host's lease holds.
      const record = await stored.load(id);
      const inFlight = record?.status === 'running' || (workflow && record?.status === 'awaitingApproval');
      if (!inFlight || control.settled()) return;
      if (Date.now() > deadline) {
        faults.problems.push({
          check: 'failed',
          message: `recover() did not resume the run within ${patienceMs} ms of a kill: the killed host's lease never lapsed`,
        });
        return;
      }
      control.touch();
      await sleep(Math.max(5, Math.floor(settings.leaseTtlMs / 5)));
    }
  };

  const kill = async (dying: Life, stored: ConversationStore) => {
    dying.dead = true;
    for (const system of dying.systems) setFaultInjector(system, faults.frozen());
    faults.generation++;
    faults.count('kill');
    // Its runs stop without a write (the store refuses them now) and its lease is left to lapse, as a killed process leaves them.
    await dying.host.close().catch(() => undefined);
    const record = await stored.load(id);
    faults.answeredAtRestore = answeredCallIds(record ? (JSON.parse(record.snapshot) as unknown) : undefined);
    if (control.settled()) return;
    const next = live(stored);
    current = next;
    // Killed before its start was stored, the run never existed: its caller starts it again.
    if (!record) return startIn(next);
    await recoverIn(next, stored);
    awaitResult(next);
  };

  return {
    async start() {
      store = await settings.store();
      current = live(store);
      await startIn(current);
    },
    cancel() {
      const life = current;
      if (!life || control.settled() || killing) return;
      faults.count('cancel');
      life.host.send(id, { type: 'cancel' }).then(
        () => {
          // Stored: the run goes on from a step that has it, whatever happens to this host.
          cancelled = true;
        },
        // Refused (the run had ended) or lost with a killed host: the run was not cancelled.
        () => undefined,
      );
    },
    restore() {
      if (!current || !store || control.settled() || killing) return;
      killing = kill(current, store)
        .catch((error: unknown) => {
          control.settle({ error: new Error(`the run could not be recovered after a kill: ${describe(error)}`) });
        })
        .finally(() => {
          killing = undefined;
        });
    },
    cancelledWhileActive: () => cancelled,
    async resting() {
      await killing;
      const root = current?.roots.at(-1);
      if (root) return root.getSnapshot() as RestingSnapshot;
      // Recovered, yet not loaded (a conversation waiting for an approval): where it rests is where it is stored.
      const record = await store?.load(id);
      if (!record) return undefined;
      const actor = createActor(machine, { snapshot: hostedMachineOf(machine).decode(record) as never, input: {} });
      return actor.getSnapshot() as RestingSnapshot;
    },
    async finish() {
      await killing;
      await current?.host.close();
      if (!store) return;
      // The store may be one the user keeps (a database): the run's conversation is not left in it.
      await store.delete(id).catch(() => undefined);
      await store.close();
    },
  };
}
