import { type AnyActorRef, type AnyStateMachine, type Actor, createActor, type InspectionEvent } from 'xstate';
import { type FaultInjector, type FaultedCall, setFaultInjector } from '../actors/fault-injector.js';
import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { Provider, ProviderEvent, ProviderRequest } from '../model/provider.js';
import { isConversationMachine } from '../machines/names/conversation-mark.js';
import { conversationInput } from '../machines/workflow/conversation-input.js';
import {
  type FaultKinds,
  type FaultMoment,
  type FaultPlan,
  planOf,
  planSize,
  prng,
  runSeedOf,
  smallerPlans,
  type ProviderFault,
} from './fault-plan.js';
import { answeredCallIds, looksLikeRunOutput, outputProblems, type Problem } from './soak-checks.js';
import type { SoakCheck, SoakViolation } from './soak-violation.js';

/**
 * How a run of the soak ended: its output's status (`done`, `halted`, `error`; a workflow whose
 * output has none counts `done`), `waiting` (a workflow resting in a state one of `externalEvents`
 * leaves), `stuck` (not ended in time) or `failed` (the actor itself errored).
 *
 * @example
 * ```ts
 * const outcome: SoakOutcome = 'halted';
 * ```
 */
export type SoakOutcome = 'done' | 'halted' | 'error' | 'waiting' | 'stuck' | 'failed';

/**
 * One finished run, as `onRun` hears it.
 *
 * @example
 * ```ts
 * const onRun = (run: SoakRun) => console.log(run.run, run.seed, run.outcome, run.problems.length);
 * ```
 */
export type SoakRun = { run: number; seed: number; plan: FaultPlan; outcome: SoakOutcome; problems: Problem[]; ms: number };

/**
 * Options of {@link faultSoak}.
 *
 * @example
 * ```ts
 * const options: FaultSoakOptions = { runs: 200, seed: 42, faults: { stall: false }, runTimeoutMs: 2_000 };
 * ```
 */
export type FaultSoakOptions = {
  /** How many runs (default 100). */
  runs?: number;
  /** The soak's seed (default random); run 0 uses it as its own seed. */
  seed?: number;
  /** Which fault kinds are drawn, and how often. */
  faults?: FaultKinds;
  /** Replays this plan on every run instead of drawing one (what a reproduction passes). */
  plan?: FaultPlan;
  /**
   * What each run starts with: a value, or a function of a seeded random source. Default for a
   * conversation `conversationInput('Hello')`; a workflow starts with none unless given.
   */
  input?: unknown;
  /** Runs at a time (default 1). Escapes are attributed to the run that ends next. */
  concurrency?: number;
  /** A run must end within this long after its last fault (default 10 000 ms). */
  runTimeoutMs?: number;
  /** Events from outside a workflow (a human's review): a run resting where one of them is accepted is `waiting`, not stuck. */
  externalEvents?: string[];
  /** Violations to shrink (each re-runs the machine at most 30 times; default 3). */
  shrink?: number;
  /** Called after each run. */
  onRun?: (run: SoakRun) => void;
};

/**
 * What a soak found: runs by outcome, faults by kind, and each broken guarantee with its seed.
 *
 * @example
 * ```ts
 * const report: FaultSoakReport = await faultSoak(machine, { runs: 50 });
 * if (report.violations.length > 0) throw new Error(report.violations[0]?.reproduction.code);
 * ```
 */
export type FaultSoakReport = {
  runs: number;
  seed: number;
  outcomes: Record<SoakOutcome, number>;
  /** Faults injected, by kind (`cancel` and `restore` included). */
  injected: Record<string, number>;
  violations: SoakViolation[];
  ms: number;
};

type RunResult = { outcome: SoakOutcome; problems: Problem[]; injected: Map<string, number> };

const escapes: unknown[] = [];
const recordEscape = (reason: unknown) => escapes.push(reason);

/**
 * Runs a user's machine (a conversation or a workflow of conversations) `runs` times under seeded
 * random faults — provider statuses (429, 500, 503, 400), resets, stalls, malformed streams, streams
 * cut part way; tools that throw, hang until their signal aborts, or run late; a cancel and a
 * restore from the persisted snapshot at a moment of the run — and checks DESIGN §3 on every run:
 * it ends, nothing escapes, every conversation's output is a valid end with a history valid to send
 * again, a cancelled conversation ends `halted` / `cancelled`, no call already answered in a
 * restored snapshot runs again and no non-idempotent call runs twice. Violations are data, each
 * with the run's seed and a shrunk reproduction.
 *
 * The soak listens for `unhandledRejection` / `uncaughtException` on the process while it runs
 * (removed after): do not run it beside unrelated code that relies on those events. Give the
 * machine timeouts (`requestTimeoutMs`, `toolTimeoutMs`) and retry delays below `runTimeoutMs`,
 * or stalls and hangs make runs stuck.
 *
 * @example
 * ```ts
 * const report = await faultSoak(machine, { runs: 100, seed: 7, runTimeoutMs: 2_000 });
 * for (const violation of report.violations) console.log(violation.seed, violation.message, violation.reproduction.code);
 * ```
 */
export async function faultSoak(machine: AnyStateMachine, options: FaultSoakOptions = {}): Promise<FaultSoakReport> {
  const settings = resolve(machine, options);
  const started = Date.now();
  const report: FaultSoakReport = {
    runs: settings.runs,
    seed: settings.seed,
    outcomes: { done: 0, halted: 0, error: 0, waiting: 0, stuck: 0, failed: 0 },
    injected: {},
    violations: [],
    ms: 0,
  };
  process.on('unhandledRejection', recordEscape);
  process.on('uncaughtException', recordEscape);
  const shrunk = new Set<SoakCheck>();
  try {
    let next = 0;
    const worker = async () => {
      for (;;) {
        const index = next++;
        if (index >= settings.runs) return;
        const seed = runSeedOf(settings.seed, index);
        const plan = options.plan ?? planOf(seed, options.faults);
        const runStarted = Date.now();
        const result = await runOnce(machine, seed, plan, settings);
        report.outcomes[result.outcome]++;
        for (const [kind, count] of result.injected) report.injected[kind] = (report.injected[kind] ?? 0) + count;
        options.onRun?.({ run: index, seed, plan, outcome: result.outcome, problems: result.problems, ms: Date.now() - runStarted });
        for (const problem of result.problems) {
          // One shrink per kind of check: the same broken guarantee found again is usually the same bug.
          const minimal =
            shrunk.size < settings.shrink && !shrunk.has(problem.check) ? await shrink(machine, seed, plan, problem.check, settings) : plan;
          shrunk.add(problem.check);
          report.violations.push({
            seed,
            run: index,
            check: problem.check,
            message: problem.message,
            plan,
            reproduction: { seed, plan: minimal, code: `faultSoak(machine, { runs: 1, seed: ${seed}, plan: ${JSON.stringify(minimal)} })` },
          });
        }
      }
    };
    await Promise.all(Array.from({ length: settings.concurrency }, worker));
  } finally {
    process.off('unhandledRejection', recordEscape);
    process.off('uncaughtException', recordEscape);
  }
  report.ms = Date.now() - started;
  return report;
}

type Settings = {
  runs: number;
  seed: number;
  concurrency: number;
  runTimeoutMs: number;
  shrink: number;
  externalEvents: string[];
  conversation: boolean;
  inputOf: (seed: number) => unknown;
};

function resolve(machine: AnyStateMachine, options: FaultSoakOptions): Settings {
  if (typeof machine !== 'object' || machine === null || typeof (machine as { transition?: unknown }).transition !== 'function')
    throw new InvalidOptionsError(
      'faultSoak machine',
      'a state machine (a conversation machine or a workflow made with setup().createMachine)',
      machine,
    );
  const integer = (name: string, value: unknown, fallback: number, minimum: number) => {
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum)
      throw new InvalidOptionsError(name, `an integer ≥ ${minimum}`, value);
    return value;
  };
  const conversation = isConversationMachine(machine);
  const { input } = options;
  const inputOf =
    typeof input === 'function'
      ? (seed: number) => (input as (random: () => number) => unknown)(prng(seed ^ 0x5eed))
      : () => (input === undefined ? (conversation ? conversationInput('Hello') : undefined) : input);
  return {
    runs: integer('runs', options.runs, 100, 1),
    seed: integer('seed', options.seed, Math.floor(Math.random() * 2 ** 31), 0),
    concurrency: integer('concurrency', options.concurrency, 1, 1),
    runTimeoutMs: integer('runTimeoutMs', options.runTimeoutMs, 10_000, 1),
    shrink: integer('shrink', options.shrink, 3, 0),
    externalEvents: options.externalEvents ?? [],
    conversation,
    inputOf,
  };
}

/** Removes the plan's faults one at a time while the same check still fails, within 30 re-runs. */
async function shrink(machine: AnyStateMachine, seed: number, plan: FaultPlan, check: SoakCheck, settings: Settings): Promise<FaultPlan> {
  let smallest = plan;
  let budget = 30;
  let progressed = true;
  while (progressed && budget > 0) {
    progressed = false;
    for (const candidate of smallerPlans(smallest)) {
      if (budget-- <= 0) break;
      const again = await runOnce(machine, seed, candidate, settings);
      if (again.problems.some((problem) => problem.check === check)) {
        smallest = candidate;
        progressed = planSize(candidate) > 0;
        break;
      }
    }
  }
  return smallest;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });

const injectedError = (message: string, fields: Record<string, unknown>) =>
  Object.assign(new Error(`${message} (injected by faultSoak)`), fields);

/** The faults of one run, counted over the whole actor tree and across restores. */
class RunFaults implements FaultInjector {
  requests = 0;
  executions = 0;
  /** Stalled requests and hung tools still waiting for their signal. */
  waiting = 0;
  generation = 0;
  readonly injected = new Map<string, number>();
  /** Executions by call: the generations (actor incarnations) each ran in. */
  readonly ran = new Map<string, { generations: number[]; idempotent: boolean; toolName: string }>();
  /** Calls answered in the snapshot of the last restore. */
  answeredAtRestore = new Set<string>();
  readonly problems: Problem[] = [];

  constructor(
    private readonly plan: FaultPlan,
    private readonly onStep: (on: FaultMoment['on'], index: number) => void,
    private readonly touch: () => void,
  ) {}

  private count(kind: string) {
    this.injected.set(kind, (this.injected.get(kind) ?? 0) + 1);
    this.touch();
  }

  provider(provider: Provider, _request: { caller?: string }): Provider {
    // Not a copy: the prototype keeps the provider's other members (name, model, getters) as they are.
    const wrapped = Object.create(provider) as Provider & { stream: Provider['stream'] };
    wrapped.stream = (request: ProviderRequest) => {
      const index = this.requests++;
      this.onStep('request', index);
      const fault = this.plan.requests.find((entry) => entry.at === index)?.fault;
      if (!fault) return provider.stream(request);
      this.count(fault.kind === 'status' ? `status ${fault.status}` : fault.kind);
      return this.faulted(provider, request, fault);
    };
    return wrapped;
  }

  private async *faulted(provider: Provider, request: ProviderRequest, fault: ProviderFault): AsyncGenerator<ProviderEvent> {
    switch (fault.kind) {
      case 'status':
        throw injectedError(`HTTP ${fault.status}`, { status: fault.status });
      case 'reset':
        throw injectedError('socket hang up', { code: 'ECONNRESET' });
      case 'stall':
        this.waiting++;
        await untilAborted(request.signal);
        this.waiting--;
        this.touch();
        throw request.signal.reason;
      case 'malformed':
        // An event the machine must refuse: a text delta without a string delta.
        yield { type: 'text.delta', delta: 42 } as unknown as ProviderEvent;
        return;
      case 'partial': {
        let sent = 0;
        for await (const event of provider.stream(request)) {
          if (event.type === 'finish' || sent >= fault.deltas) break;
          yield event;
          sent++;
        }
        throw injectedError('socket hang up mid-stream', { code: 'ECONNRESET' });
      }
    }
  }

  tool(call: FaultedCall, execute: () => Promise<unknown>, signal: () => AbortSignal): Promise<unknown> {
    const index = this.executions++;
    this.onStep('tool', index);
    const fault = this.plan.tools.find((entry) => entry.at === index)?.fault;
    if (fault) this.count(`tool ${fault.kind}`);
    const run = () => {
      this.executed(call);
      return execute();
    };
    if (!fault) return run();
    switch (fault.kind) {
      case 'throw':
        return Promise.reject(injectedError(`${call.toolName} failed`, {}));
      case 'hang': {
        this.waiting++;
        const aborted = signal();
        return untilAborted(aborted).then(() => {
          this.waiting--;
          this.touch();
          throw aborted.reason;
        });
      }
      case 'delay': {
        const aborted = signal();
        return sleep(fault.ms, aborted).then(() => {
          if (aborted.aborted) throw aborted.reason;
          return run();
        });
      }
    }
  }

  private executed(call: FaultedCall) {
    const key = `${call.caller ?? ''}/${call.toolCallId}`;
    const entry = this.ran.get(key) ?? { generations: [], idempotent: call.idempotent, toolName: call.toolName };
    if (this.generation > 0 && this.answeredAtRestore.has(call.toolCallId))
      this.problems.push({
        check: 'execution',
        message: `${call.toolName} call ${call.toolCallId} ran again after a restore, though the restored snapshot already held its result`,
      });
    if (!call.idempotent && entry.generations.length > 0)
      this.problems.push({
        check: 'execution',
        message: `${call.toolName} call ${call.toolCallId} (not idempotent) ran twice${entry.generations.includes(this.generation) ? ' in one actor' : ', before and after a restore'}`,
      });
    entry.generations.push(this.generation);
    this.ran.set(key, entry);
  }
}

/** The path of ids from the root to an actor, e.g. `review/agent:call_1`. */
function pathOf(ref: AnyActorRef): string {
  const ids: string[] = [];
  for (let current: AnyActorRef | undefined = ref; current?._parent; current = current._parent) ids.unshift(current.id);
  return ids.join('/') || ref.id;
}

/** One run of the machine through its plan, and what it broke. */
async function runOnce(machine: AnyStateMachine, seed: number, plan: FaultPlan, settings: Settings): Promise<RunResult> {
  let actor: Actor<AnyStateMachine>;
  let settled = false;
  let ending: { output?: unknown; error?: unknown; stuck?: true } = {};
  let resolveEnd = () => {};
  const ended = new Promise<void>((resolve) => {
    resolveEnd = resolve;
  });
  const settle = (value: typeof ending) => {
    if (settled) return;
    settled = true;
    ending = value;
    resolveEnd();
  };
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let watchdog: ReturnType<typeof setTimeout> | undefined;
  const touch = () => {
    if (settled) return;
    if (watchdog !== undefined) clearTimeout(watchdog);
    watchdog = setTimeout(() => settle({ stuck: true }), settings.runTimeoutMs);
  };
  let cancelledWhileActive = false;
  const nested: Array<{ where: string; output: unknown }> = [];

  const later = (fn: () => void, ms: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };
  const onStep = (on: FaultMoment['on'], index: number) => {
    const at = (moment: FaultMoment | undefined) => moment !== undefined && moment.on === on && moment.index === index;
    // From a timer: never inside the actor's own step.
    if (at(plan.cancel)) later(cancel, plan.cancel?.delayMs ?? 0);
    if (at(plan.restore)) later(restore, plan.restore?.delayMs ?? 0);
  };
  const faults = new RunFaults(plan, onStep, touch);

  const inspect = (inspection: InspectionEvent) => {
    if (inspection.type !== '@xstate.event' || !inspection.sourceRef || inspection.sourceRef === actor) return;
    const { event } = inspection;
    if (!event.type.startsWith('xstate.done.actor.')) return;
    const source = inspection.sourceRef as AnyActorRef & { logic?: unknown };
    if (isConversationMachine(source.logic))
      nested.push({ where: `conversation ${pathOf(source)}`, output: (event as { output?: unknown }).output });
  };

  const attach = (current: Actor<AnyStateMachine>, generation: number) => {
    setFaultInjector(current.system, faults);
    current.subscribe({
      next: (snapshot) => {
        if (generation === faults.generation && snapshot.status === 'done') settle({ output: snapshot.output });
      },
      error: (error) => {
        if (generation === faults.generation) settle({ error });
      },
    });
  };

  function cancel() {
    if (settled || actor.getSnapshot().status !== 'active') return;
    faults.injected.set('cancel', (faults.injected.get('cancel') ?? 0) + 1);
    touch();
    // A workflow is cancelled only when it takes `cancel` where it is.
    if (!settings.conversation && !actor.getSnapshot().can({ type: 'cancel' })) return;
    cancelledWhileActive = true;
    actor.send({ type: 'cancel' });
  }

  function restore() {
    if (settled || actor.getSnapshot().status !== 'active') return;
    let persisted: unknown;
    try {
      // Stored as a user stores it: as JSON text.
      persisted = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    } catch (error) {
      faults.problems.push({ check: 'failed', message: `the persisted snapshot is not JSON: ${String(error)}` });
      return;
    }
    faults.injected.set('restore', (faults.injected.get('restore') ?? 0) + 1);
    touch();
    faults.answeredAtRestore = answeredCallIds(persisted);
    faults.generation++;
    actor.stop();
    try {
      actor = createActor(machine, { snapshot: persisted as never, inspect });
      attach(actor, faults.generation);
      actor.start();
    } catch (error) {
      faults.problems.push({ check: 'failed', message: `restoring from the persisted snapshot threw: ${String(error)}` });
      settle({ error });
    }
  }

  try {
    actor = createActor(machine, { input: settings.inputOf(seed), inspect });
    attach(actor, 0);
    touch();
    actor.start();
  } catch (error) {
    return {
      outcome: 'failed',
      problems: [{ check: 'failed', message: `the machine threw as it started: ${String(error)}` }],
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
  const snapshot = actor.getSnapshot();
  if (ending.stuck) {
    const waiting = settings.externalEvents.some((type) => {
      try {
        return snapshot.can({ type });
      } catch {
        return false;
      }
    });
    outcome = waiting ? 'waiting' : 'stuck';
    if (!waiting)
      problems.push({
        check: 'stuck',
        message: `did not end within ${settings.runTimeoutMs} ms of its last fault: stuck in ${JSON.stringify(snapshot.value)}${faults.waiting > 0 ? ` (${faults.waiting} stalled request(s) or hung tool(s) still wait for their signal: is a machine timeout longer than runTimeoutMs?)` : ''}`,
      });
    actor.stop();
  } else if ('error' in ending) {
    outcome = 'failed';
    problems.push({
      check: 'failed',
      message: `the machine failed: ${ending.error instanceof Error ? ending.error.message : String(ending.error)}`,
    });
  } else {
    const output = ending.output;
    const status = looksLikeRunOutput(output) ? output.status : 'done';
    outcome = status === 'halted' || status === 'error' ? status : 'done';
    if (settings.conversation) problems.push(...outputProblems(output, 'the conversation', cancelledWhileActive));
  }
  for (const { where, output } of nested) problems.push(...outputProblems(output, where, false));
  const escaped = escapes.splice(0);
  for (const reason of escaped)
    problems.push({
      check: 'escape',
      message: `escaped the run: ${reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason)}`,
    });
  return { outcome, problems, injected: faults.injected };
}
