import type { AnyStateMachine } from 'xstate';
import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { ConversationStore } from '../host/conversation-store.js';
import { memoryStore } from '../host/memory-store.js';
import { isConversationMachine } from '../machines/names/conversation-mark.js';
import { conversationInput } from '../machines/workflow/conversation-input.js';
import { isRecord } from '../util/is-record.js';
import { findJsonProblem } from '../util/json-problem.js';
import { type FaultKinds, type FaultPlan, planOf, planSize, prng, runSeedOf, smallerPlans } from './fault-plan.js';
import type { Problem } from './soak-checks.js';
import { listeningForEscapes, runOnce } from './soak-run.js';
import type { HostSettings, Settings, SoakOutcome } from './soak-types.js';
import type { SoakCheck, SoakViolation } from './soak-violation.js';

export type { SoakOutcome } from './soak-types.js';

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
 * The `host` option of {@link faultSoak}: each run goes through `createConversationHost` over a
 * store of its own, as a service runs it — started with `host.start(id, { input })` — and the
 * plan's restore is a kill: from that moment the host's process writes nothing and starts nothing,
 * it is dropped without a final save and without giving its lease up, and a new host over the
 * same store `recover()`s the run from its last stored step.
 *
 * @example
 * ```ts
 * import { sqliteStore } from 'actorloop/sqlite';
 *
 * const host: FaultSoakHostOptions = { store: () => sqliteStore({ path: ':memory:' }), leaseTtlMs: 200 };
 * const report = await faultSoak(machine, { runs: 50, seed: 7, host });
 * console.log(report.injected.kill);
 * ```
 */
export type FaultSoakHostOptions = {
  /**
   * Makes the store of one run: called once per run, and the store is closed after it (its
   * conversation deleted first), so return a new one each time. Default: `memoryStore()`.
   */
  store?: () => ConversationStore | Promise<ConversationStore>;
  /**
   * The hosts' `leaseTtlMs`: on a store that hands leases out, how long the new host waits after a
   * kill for the dead host's lease to lapse. Keep it well below `runTimeoutMs`. Default 500 ms.
   */
  leaseTtlMs?: number;
};

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
   * conversation `conversationInput('Hello')`; a workflow starts with none unless given. Hosted, it
   * is stored: plain JSON.
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
  /**
   * Runs each run in a conversation host over a store, its restores being kills of the host (see
   * {@link FaultSoakHostOptions}); `true` is `{}`: a new `memoryStore()` per run. Default: each run
   * is an actor, restored from its persisted snapshot.
   */
  host?: FaultSoakHostOptions | true;
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
  /** Faults injected, by kind (`cancel`, `restore` and, hosted, `kill` included). */
  injected: Record<string, number>;
  violations: SoakViolation[];
  ms: number;
};

/**
 * Runs a user's machine (a conversation or a workflow of conversations) `runs` times under seeded
 * random faults — provider statuses (429, 500, 503, 400), resets, stalls, malformed streams, streams
 * cut part way; tools that throw, hang until their signal aborts, or run late; a cancel and a
 * restore from the persisted snapshot at a moment of the run (with `host`, a kill of the host and a
 * `recover()` by a new one) — and checks DESIGN §3 on every run: it ends, nothing escapes, every
 * conversation's output is a valid end with a history valid to send again, a cancelled
 * conversation ends `halted` / `cancelled`, no call already answered in a restored snapshot runs
 * again, no non-idempotent call runs twice, and nothing the run started still runs once it ended.
 * Violations are data, each with the run's seed and a shrunk reproduction.
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
  const shrunk = new Set<SoakCheck>();
  // A hosted reproduction needs the same store: the line names the user's factory as `store`.
  const hostCode = settings.host ? `, host: ${settings.host.custom ? '{ store }' : '{}'}` : '';
  await listeningForEscapes(async () => {
    let next = 0;
    // The first failure of the soak itself (a bad option found as a run starts) stops every worker.
    let failure: { error: unknown } | undefined;
    const worker = async () => {
      while (!failure) {
        const index = next++;
        if (index >= settings.runs) return;
        const seed = runSeedOf(settings.seed, index);
        const plan = options.plan ?? planOf(seed, options.faults);
        const runStarted = Date.now();
        try {
          const result = await runOnce(machine, seed, plan, settings);
          report.outcomes[result.outcome]++;
          for (const [kind, count] of result.injected) report.injected[kind] = (report.injected[kind] ?? 0) + count;
          options.onRun?.({ run: index, seed, plan, outcome: result.outcome, problems: result.problems, ms: Date.now() - runStarted });
          for (const problem of result.problems) {
            // One shrink per kind of check: the same broken guarantee found again is usually the same bug.
            const minimal =
              shrunk.size < settings.shrink && !shrunk.has(problem.check)
                ? await shrink(machine, seed, plan, problem.check, settings)
                : plan;
            shrunk.add(problem.check);
            report.violations.push({
              seed,
              run: index,
              check: problem.check,
              message: problem.message,
              plan,
              reproduction: {
                seed,
                plan: minimal,
                code: `faultSoak(machine, { runs: 1, seed: ${seed}, plan: ${JSON.stringify(minimal)}${hostCode} })`,
              },
            });
          }
        } catch (error) {
          failure ??= { error };
        }
      }
    };
    await Promise.all(Array.from({ length: settings.concurrency }, worker));
    if (failure) throw failure.error;
  });
  report.ms = Date.now() - started;
  return report;
}

const storeExpected = 'a function that returns a new ConversationStore for each run, e.g. () => sqliteStore({ path: ":memory:" })';

/** The `host` option checked, its store factory made to check what it returns. */
function resolveHost(value: unknown): HostSettings | undefined {
  if (value === undefined || value === false) return undefined;
  const expected = 'true, or an object { store?, leaseTtlMs? }';
  if (value !== true && !isRecord(value)) throw new InvalidOptionsError('host', expected, value);
  const given = value === true ? {} : value;
  const { store, leaseTtlMs } = given;
  if (store !== undefined && typeof store !== 'function') throw new InvalidOptionsError('host.store', storeExpected, store);
  if (leaseTtlMs !== undefined && (typeof leaseTtlMs !== 'number' || !Number.isInteger(leaseTtlMs) || leaseTtlMs < 100))
    throw new InvalidOptionsError('host.leaseTtlMs', 'an integer of milliseconds ≥ 100', leaseTtlMs);
  const factory = store as (() => unknown) | undefined;
  return {
    custom: factory !== undefined,
    leaseTtlMs: leaseTtlMs ?? 500,
    store: async () => {
      if (!factory) return memoryStore({ keepSteps: 1 });
      const made = await factory();
      const methods = ['load', 'save', 'readLog', 'list', 'delete', 'close'] as const;
      if (!isRecord(made) || methods.some((name) => typeof made[name] !== 'function'))
        throw new InvalidOptionsError('host.store', `${storeExpected}; it returned`, made);
      return made as unknown as ConversationStore;
    },
  };
}

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
  const host = resolveHost(options.host);
  const { input } = options;
  if (host && typeof input !== 'function') {
    // Found here rather than as the first run starts: host.start stores the input.
    const problem = findJsonProblem(input, 'input');
    if (problem) throw new InvalidOptionsError('input', `plain JSON when hosted (host.start stores it): ${problem}`, input);
  }
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
    host,
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
