import type { FaultPlan } from './fault-plan.js';

/**
 * Which guarantee a soak run broke: it did not end (`stuck`), something escaped (`escape`), the
 * machine itself failed (`failed`), its output is not a valid end (`output`), a cancelled run did
 * not end `halted` / `cancelled` (`cancel`), its history is not valid to send again (`history`), a
 * tool ran when it must not have (`execution`), something of the run still ran after it ended — an
 * actor, a request or a tool waiting for its signal, a tool's `execute` (`leak`).
 *
 * @example
 * ```ts
 * const check: SoakCheck = 'stuck';
 * ```
 */
export type SoakCheck = 'stuck' | 'escape' | 'failed' | 'output' | 'cancel' | 'history' | 'execution' | 'leak';

/**
 * How to replay a violation: the run's seed, the smallest plan that still breaks the same check,
 * and the one line that replays it.
 *
 * @example
 * ```ts
 * console.log(violation.reproduction.code); // faultSoak(machine, { runs: 1, seed: 1234, plan: {...} })
 * ```
 */
export type SoakReproduction = { seed: number; plan: FaultPlan; code: string };

/**
 * One broken guarantee of one run. `seed` replays the run (`faultSoak(machine, { runs: 1, seed })`);
 * `reproduction` replays it with the plan shrunk to what it needs.
 *
 * @example
 * ```ts
 * for (const { seed, message, reproduction } of report.violations) console.log(seed, message, reproduction.code);
 * ```
 */
export type SoakViolation = {
  seed: number;
  /** The run's index in the soak. */
  run: number;
  check: SoakCheck;
  message: string;
  /** The plan the run went through, as drawn. */
  plan: FaultPlan;
  reproduction: SoakReproduction;
};
