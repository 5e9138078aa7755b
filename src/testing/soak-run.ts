import { type Actor, type AnyStateMachine, createActor } from 'xstate';
import { setFaultInjector } from '../actors/fault-injector.js';
import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import { isConversationMachine } from '../machines/names/conversation-mark.js';
import { isRecord } from '../util/is-record.js';
import { ActorWatch, leakProblems } from './actor-watch.js';
import type { FaultMoment, FaultPlan } from './fault-plan.js';
import { hostedDriver } from './hosted-soak-run.js';
import { RunFaults } from './run-faults.js';
import { answeredCallIds, outputProblems, type Problem } from './soak-checks.js';
import type { Ending, RunControl, RunDriver, RunResult, Settings, SoakOutcome } from './soak-types.js';

const escapes: unknown[] = [];
const recordEscape = (reason: unknown) => escapes.push(reason);
let listening = 0;

/** Listens for what escapes runs (`unhandledRejection`, `uncaughtException`) while `task` runs; soaks may overlap. */
export async function listeningForEscapes<T>(task: () => Promise<T>): Promise<T> {
  if (listening++ === 0) {
    process.on('unhandledRejection', recordEscape);
    process.on('uncaughtException', recordEscape);
  }
  try {
    return await task();
  } finally {
    if (--listening === 0) {
      process.off('unhandledRejection', recordEscape);
      process.off('uncaughtException', recordEscape);
    }
  }
}

/** How long a run that ended has for what it started to stop, before the leak check names it. */
const leakGraceMs = 50;

/** The status a run's output says it ended with: a conversation's, or a workflow's own when it gives one. */
function statusOf(output: unknown): 'done' | 'halted' | 'error' {
  const status = isRecord(output) ? output.status : undefined;
  return status === 'halted' || status === 'error' ? status : 'done';
}

/** One run of the machine through its plan, and what it broke. */
export async function runOnce(machine: AnyStateMachine, seed: number, plan: FaultPlan, settings: Settings): Promise<RunResult> {
  let settled = false;
  let ending = { stuck: true } as Ending;
  let resolveEnd = () => {};
  const ended = new Promise<void>((resolve) => {
    resolveEnd = resolve;
  });
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let watchdog: ReturnType<typeof setTimeout> | undefined;
  const settle = (value: Ending) => {
    if (settled) return;
    settled = true;
    ending = value;
    resolveEnd();
  };
  const touch = () => {
    if (settled) return;
    if (watchdog !== undefined) clearTimeout(watchdog);
    watchdog = setTimeout(() => settle({ stuck: true }), settings.runTimeoutMs);
  };
  const later = (fn: () => void, ms: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };
  let driver: RunDriver | undefined;
  const onStep = (on: FaultMoment['on'], index: number) => {
    const at = (moment: FaultMoment | undefined) => moment !== undefined && moment.on === on && moment.index === index;
    // From a timer: never inside the actor's own step.
    if (at(plan.cancel)) later(() => driver?.cancel(), plan.cancel?.delayMs ?? 0);
    if (at(plan.restore)) later(() => driver?.restore(), plan.restore?.delayMs ?? 0);
  };
  const faults = new RunFaults(plan, onStep, touch);
  const watch = new ActorWatch();
  const control: RunControl = {
    machine,
    seed,
    input: settings.inputOf(seed),
    faults,
    watch,
    settle,
    settled: () => settled,
    touch,
  };
  driver = settings.host ? hostedDriver(control, settings.host) : actorDriver(control);

  try {
    touch();
    await driver.start();
  } catch (error) {
    settle({ error });
    if (watchdog !== undefined) clearTimeout(watchdog);
    await driver.finish().catch(() => undefined);
    // A bad option found only as the run starts (what a store factory returned) is the caller's, not the machine's.
    if (InvalidOptionsError.isInstance(error)) throw error;
    return {
      outcome: 'failed',
      problems: [...faults.problems, { check: 'failed', message: `the machine threw as it started: ${String(error)}` }],
      injected: faults.injected,
    };
  }
  await ended;
  if (watchdog !== undefined) clearTimeout(watchdog);
  for (const timer of timers) clearTimeout(timer);
  // A last turn for late rejections (a tool that settles after its timeout) to surface.
  await new Promise((resolve) => setImmediate(resolve));

  const problems: Problem[] = [...faults.problems];
  let outcome: SoakOutcome;
  if ('stuck' in ending) {
    const snapshot = await driver.resting().catch(() => undefined);
    const waiting = settings.externalEvents.some((type) => {
      try {
        return snapshot?.can({ type }) === true;
      } catch {
        return false;
      }
    });
    outcome = waiting ? 'waiting' : 'stuck';
    if (!waiting)
      problems.push({
        check: 'stuck',
        message: `did not end within ${settings.runTimeoutMs} ms of its last fault: stuck in ${JSON.stringify(snapshot?.value)}${faults.waiting > 0 ? ` (${faults.waiting} stalled request(s) or hung tool(s) still wait for their signal: is a machine timeout longer than runTimeoutMs?)` : ''}`,
      });
  } else if ('error' in ending) {
    outcome = 'failed';
    problems.push({
      check: 'failed',
      message: `the machine failed: ${ending.error instanceof Error ? ending.error.message : String(ending.error)}`,
    });
  } else {
    const output = ending.output;
    outcome = statusOf(output);
    if (settings.conversation) problems.push(...outputProblems(output, 'the conversation', driver.cancelledWhileActive()));
  }
  for (const { where, output } of watch.nested) problems.push(...outputProblems(output, where, false));
  // A run that ended stops all it started; one that did not end still runs by right.
  if (outcome !== 'stuck' && outcome !== 'waiting') problems.push(...(await leakProblems(watch, faults, leakGraceMs)));
  await driver.finish().catch((error: unknown) => {
    problems.push({ check: 'failed', message: `the run could not be let go: ${String(error)}` });
  });
  const escaped = escapes.splice(0);
  for (const reason of escaped)
    problems.push({
      check: 'escape',
      message: `escaped the run: ${reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason)}`,
    });
  return { outcome, problems, injected: faults.injected };
}

/** Runs the machine as an actor; a restore is `getPersistedSnapshot()` through JSON, `stop()`, `createActor(machine, { snapshot })`. */
function actorDriver(control: RunControl): RunDriver {
  const { machine, faults, watch } = control;
  let actor: Actor<AnyStateMachine> | undefined;
  let cancelled = false;
  const attach = (current: Actor<AnyStateMachine>, generation: number) => {
    setFaultInjector(current.system, faults);
    current.subscribe({
      next: (snapshot) => {
        if (generation === faults.generation && snapshot.status === 'done') control.settle({ output: snapshot.output });
      },
      error: (error) => {
        if (generation === faults.generation) control.settle({ error });
      },
    });
  };
  const active = () => !control.settled() && actor?.getSnapshot().status === 'active';
  return {
    async start() {
      actor = createActor(machine, { input: control.input, inspect: watch.inspect });
      attach(actor, 0);
      actor.start();
    },
    cancel() {
      if (!actor || !active()) return;
      faults.count('cancel');
      // A workflow is cancelled only when it takes `cancel` where it is.
      if (!isConversationMachine(machine) && !actor.getSnapshot().can({ type: 'cancel' })) return;
      cancelled = true;
      actor.send({ type: 'cancel' });
    },
    restore() {
      if (!actor || !active()) return;
      let persisted: unknown;
      try {
        // Stored as a user stores it: as JSON text.
        persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
      } catch (error) {
        faults.problems.push({ check: 'failed', message: `the persisted snapshot is not JSON: ${String(error)}` });
        return;
      }
      faults.count('restore');
      faults.answeredAtRestore = answeredCallIds(persisted);
      faults.generation++;
      actor.stop();
      try {
        actor = createActor(machine, { snapshot: persisted as never, inspect: watch.inspect });
        attach(actor, faults.generation);
        actor.start();
      } catch (error) {
        faults.problems.push({ check: 'failed', message: `restoring from the persisted snapshot threw: ${String(error)}` });
        control.settle({ error });
      }
    },
    cancelledWhileActive: () => cancelled,
    async resting() {
      return actor?.getSnapshot();
    },
    async finish() {
      if (actor?.getSnapshot().status === 'active') actor.stop();
    },
  };
}
