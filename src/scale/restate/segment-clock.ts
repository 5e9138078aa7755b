import type { ActorOptions, AnyActorLogic } from 'xstate';

/** XState's clock (its type is not exported by name). */
type Clock = NonNullable<ActorOptions<AnyActorLogic>['clock']>;

/** The longest delay timers take (about 24.8 days): the journaled machine's "never" (see `journaledMachine`). */
const neverMs = 2_147_483_647;

/**
 * The clock of a workflow's actor system while a segment runs it. A timer that fired between two
 * journaled steps in the run would fire at another point in a replay of it (which gets its steps'
 * records at once), and the workflow would take other transitions than the run it replays. So no
 * timer fires on its own here:
 *
 * - a timer of no delay (a backoff that a restored conversation makes at once) fires in a
 *   microtask, right after the transition that set it — the same point in a replay;
 * - a timer with a delay is held: once nothing else is left to run, the segment ends and the next
 *   `advance` comes after the shortest held delay (Restate keeps that timer). The restored run sets
 *   its own timers again: a conversation's backoff (stored as no delay) and time budget.
 *
 * A timer of the journaled machine's "never" (the request and tool timeouts the steps decide) is
 * dropped.
 */
export class SegmentClock implements Clock {
  private nextHandle = 0;
  private readonly held = new Map<number, number>();
  private readonly due = new Set<number>();
  private stopped = false;
  private readonly fired: () => void;

  /** `fired` is told after a timer fired: the segment may have nothing left to run then. */
  constructor(fired: () => void) {
    this.fired = fired;
  }

  setTimeout(fire: () => void, delay: number): number {
    const handle = ++this.nextHandle;
    if (this.stopped) return handle;
    if (delay > 0) {
      if (delay < neverMs) this.held.set(handle, delay);
      return handle;
    }
    this.due.add(handle);
    queueMicrotask(() => {
      if (!this.due.delete(handle) || this.stopped) return;
      fire();
      this.fired();
    });
    return handle;
  }

  clearTimeout(handle: number): void {
    this.held.delete(handle);
    this.due.delete(handle);
  }

  /** Whether a timer of no delay has yet to fire. */
  get firing(): boolean {
    return this.due.size > 0;
  }

  /** The shortest delay held, if any. */
  get nextDelay(): number | undefined {
    return this.held.size === 0 ? undefined : Math.min(...this.held.values());
  }

  /** No timer fires any more: the segment ended. */
  stop(): void {
    this.stopped = true;
    this.held.clear();
    this.due.clear();
  }
}
