/**
 * The seeded plan of one soak run: which provider request and which tool execution fails, how, and
 * when the run is cancelled or restored. A pure function of the run's seed and the fault kinds, so
 * a seed names a run exactly.
 */

/**
 * A fault of one provider request: an HTTP status (429, 500, 503 are retried, 400 is not), a reset
 * connection, a stall that yields nothing until the request's signal aborts, a malformed event, or
 * a few deltas of the real answer and then a reset.
 *
 * @example
 * ```ts
 * const fault: ProviderFault = { kind: 'status', status: 503 };
 * ```
 */
export type ProviderFault =
  | { kind: 'status'; status: 429 | 500 | 503 | 400 }
  | { kind: 'reset' }
  | { kind: 'stall' }
  | { kind: 'malformed' }
  | { kind: 'partial'; deltas: number };

/**
 * A fault of one tool execution: it throws (without running), hangs until its signal aborts (the
 * machine's tool timeout or a cancel), or runs after a delay.
 *
 * @example
 * ```ts
 * const fault: ToolFault = { kind: 'delay', ms: 20 };
 * ```
 */
export type ToolFault = { kind: 'throw' } | { kind: 'hang' } | { kind: 'delay'; ms: number };

/**
 * A moment of a run, counted in the run's own steps so a seed replays it: when provider request
 * `index` (or tool execution `index`) starts, plus `delayMs`. A run that never gets there never
 * sees it.
 *
 * @example
 * ```ts
 * const moment: FaultMoment = { on: 'tool', index: 0, delayMs: 5 };
 * ```
 */
export type FaultMoment = { on: 'request' | 'tool'; index: number; delayMs: number };

/**
 * What one run goes through. `requests[i]` is the fault of the i-th provider request of the run
 * (counted over the whole actor tree and across restores), `tools[i]` that of the i-th tool
 * execution; absent indexes run as they would.
 *
 * @example
 * ```ts
 * const plan: FaultPlan = { requests: [{ at: 0, fault: { kind: 'status', status: 429 } }], tools: [], cancel: { on: 'tool', index: 0, delayMs: 0 } };
 * ```
 */
export type FaultPlan = {
  requests: Array<{ at: number; fault: ProviderFault }>;
  tools: Array<{ at: number; fault: ToolFault }>;
  cancel?: FaultMoment;
  restore?: FaultMoment;
};

/**
 * The fault kinds a soak draws, each on (`true` or a weight) or off (`false`); absent: on with
 * weight 1. `rate` is the share of requests and executions that get a fault (default 0.35).
 *
 * @example
 * ```ts
 * const faults: FaultKinds = { stall: false, hang: false, restore: false, rate: 0.5 };
 * ```
 */
export type FaultKinds = {
  status?: boolean | number;
  reset?: boolean | number;
  stall?: boolean | number;
  malformed?: boolean | number;
  partial?: boolean | number;
  throw?: boolean | number;
  hang?: boolean | number;
  delay?: boolean | number;
  cancel?: boolean | number;
  restore?: boolean | number;
  rate?: number;
};

/** A small, fast, seedable PRNG (mulberry32): the same seed gives the same numbers everywhere. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The seed of run `index` of a soak seeded `seed`: run 0 is the soak's seed itself, so
 * `faultSoak(machine, { runs: 1, seed: violation.seed })` replays the run that failed.
 */
export function runSeedOf(seed: number, index: number): number {
  if (index === 0) return seed >>> 0;
  return Math.floor(prng((seed ^ Math.imul(index, 0x9e3779b1)) >>> 0)() * 2 ** 31);
}

/** How many requests and executions of a run the plan covers: later ones run without faults. */
const planned = 12;

function weightOf(kinds: FaultKinds, name: Exclude<keyof FaultKinds, 'rate'>): number {
  const value = kinds[name];
  if (value === undefined || value === true) return 1;
  if (value === false) return 0;
  return value;
}

function pick<T extends string>(random: () => number, kinds: FaultKinds, names: T[]): T | undefined {
  const weights = names.map((name) => weightOf(kinds, name as Exclude<keyof FaultKinds, 'rate'>));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  if (total <= 0) return undefined;
  let roll = random() * total;
  for (const [index, name] of names.entries()) {
    roll -= weights[index] ?? 0;
    if (roll < 0) return name;
  }
  return names.at(-1);
}

/** The plan of a run: a pure function of its seed and the fault kinds. */
export function planOf(runSeed: number, kinds: FaultKinds = {}): FaultPlan {
  const random = prng(runSeed);
  const rate = kinds.rate ?? 0.35;
  const statuses = [429, 500, 503, 400] as const;
  const plan: FaultPlan = { requests: [], tools: [] };
  for (let at = 0; at < planned; at++) {
    if (random() >= rate) continue;
    const kind = pick(random, kinds, ['status', 'reset', 'stall', 'malformed', 'partial']);
    if (kind === undefined) break;
    const fault: ProviderFault =
      kind === 'status'
        ? { kind, status: statuses[Math.floor(random() * statuses.length)] ?? 500 }
        : kind === 'partial'
          ? { kind, deltas: 1 + Math.floor(random() * 3) }
          : { kind };
    plan.requests.push({ at, fault });
  }
  for (let at = 0; at < planned; at++) {
    if (random() >= rate) continue;
    const kind = pick(random, kinds, ['throw', 'hang', 'delay']);
    if (kind === undefined) break;
    plan.tools.push({ at, fault: kind === 'delay' ? { kind, ms: 1 + Math.floor(random() * 30) } : { kind } });
  }
  const moment = (): FaultMoment => ({
    on: random() < 0.5 ? 'request' : 'tool',
    index: Math.floor(random() * 4),
    // Mostly at once: a fast run is over before a later moment could land.
    delayMs: random() < 0.6 ? 0 : Math.floor(random() * 10),
  });
  // Drawn whether or not they are on, so turning one off leaves the rest of the plan as it was.
  const cancel = moment();
  const restore = moment();
  const cancelRoll = random();
  const restoreRoll = random();
  if (cancelRoll < 0.25 * Math.min(1, weightOf(kinds, 'cancel'))) plan.cancel = cancel;
  if (restoreRoll < 0.3 * Math.min(1, weightOf(kinds, 'restore'))) plan.restore = restore;
  return plan;
}

/** How many faults a plan holds (what shrinking makes smaller). */
export function planSize(plan: FaultPlan): number {
  return plan.requests.length + plan.tools.length + (plan.cancel ? 1 : 0) + (plan.restore ? 1 : 0);
}

/** The plans one removal smaller than `plan`, the run-level moments first. */
export function smallerPlans(plan: FaultPlan): FaultPlan[] {
  const out: FaultPlan[] = [];
  if (plan.restore) {
    const { restore: _restore, ...rest } = plan;
    out.push(rest);
  }
  if (plan.cancel) {
    const { cancel: _cancel, ...rest } = plan;
    out.push(rest);
  }
  for (let index = 0; index < plan.requests.length; index++)
    out.push({ ...plan, requests: plan.requests.filter((_, other) => other !== index) });
  for (let index = 0; index < plan.tools.length; index++) out.push({ ...plan, tools: plan.tools.filter((_, other) => other !== index) });
  return out;
}
