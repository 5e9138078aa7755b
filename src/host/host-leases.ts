import type { ConversationLease } from './conversation-lease.js';
import type { ConversationStore } from './conversation-store.js';
import { ConversationLeaseLostError } from './errors/conversation-lease-lost-error.js';

/** What a host's leases need from the host. */
export type HostLeasesOptions = {
  store: ConversationStore;
  owner: string;
  ttlMs: number;
  /** The lease of a conversation the host runs was lost: its run must stop before it writes again. */
  lost: (id: string, error: ConversationLeaseLostError) => void;
  report: (error: unknown, id: string) => void;
};

type Held = {
  lease: ConversationLease;
  /** When the last acquire or renewal that succeeded was sent (this process's clock): the lease holds at least `ttlMs` from then. */
  sentAt: number;
};

/**
 * The leases a host holds, on a store that hands them out (`acquireLease`): one per conversation it
 * runs, taken before it applies an event, renewed by one timer while the run is live, given up when
 * it lets the run go. On a store without leases every conversation is the host's to run, as before.
 */
export class HostLeases {
  readonly enabled: boolean;
  private readonly held = new Map<string, Held>();
  private readonly releasing = new Map<string, Promise<void>>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private renewing = false;

  constructor(private readonly options: HostLeasesOptions) {
    const { store } = options;
    this.enabled =
      typeof store.acquireLease === 'function' && typeof store.renewLease === 'function' && typeof store.releaseLease === 'function';
  }

  /** Whether this host may apply events to the conversation: it holds the lease, or took it now (always, without leases). */
  async claim(id: string): Promise<boolean> {
    if (!this.enabled || this.held.has(id)) return true;
    await this.releasing.get(id);
    const sentAt = performance.now();
    const lease = await this.options.store.acquireLease?.(id, this.options.owner, this.options.ttlMs);
    if (!lease) return false;
    this.held.set(id, { lease, sentAt });
    this.timer ??= setInterval(() => void this.renewAll(), Math.max(1, Math.floor(this.options.ttlMs / 3)));
    // The renewals must not keep a process alive that has nothing else to do.
    this.timer.unref?.();
    return true;
  }

  /** The lease the conversation's writes carry, when the host holds one. */
  lease(id: string): ConversationLease | undefined {
    return this.held.get(id)?.lease;
  }

  /** Gives the conversation's lease up (the host let its run go), so another host may take it at once. */
  release(id: string): void {
    const held = this.held.get(id);
    if (!held) return;
    this.forget(id);
    const releasing = (async () => {
      try {
        await this.options.store.releaseLease?.(held.lease);
      } catch (error) {
        // Not given up: it lapses after its time-to-live instead.
        this.options.report(error, id);
      } finally {
        this.releasing.delete(id);
      }
    })();
    this.releasing.set(id, releasing);
  }

  /** Gives every lease up (the host closes), and waits for the store to take it. */
  async close(): Promise<void> {
    for (const id of [...this.held.keys()]) this.release(id);
    await Promise.all([...this.releasing.values()]);
  }

  private forget(id: string): void {
    this.held.delete(id);
    if (this.held.size === 0 && this.timer !== undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  private async renewAll(): Promise<void> {
    // A round that outlasts the interval is not overlapped by the next one.
    if (this.renewing) return;
    this.renewing = true;
    try {
      await Promise.all([...this.held].map(([id, held]) => this.renew(id, held)));
    } finally {
      this.renewing = false;
    }
  }

  private async renew(id: string, held: Held): Promise<void> {
    const sentAt = performance.now();
    let renewed: ConversationLease | undefined;
    try {
      renewed = await this.options.store.renewLease?.(held.lease, this.options.ttlMs);
    } catch (error) {
      if (this.held.get(id) !== held) return;
      // The store did not answer: the lease may lapse before the next try gets through, and then be taken.
      if (performance.now() - held.sentAt < this.options.ttlMs) return this.options.report(error, id);
      this.forget(id);
      this.options.lost(
        id,
        new ConversationLeaseLostError(
          id,
          held.lease.token,
          `it could not be renewed for its whole time-to-live (${this.options.ttlMs} ms)`,
        ),
      );
      return;
    }
    // Released (or taken again) while the renewal was under way: that answer is about a lease no longer held.
    if (this.held.get(id) !== held) return;
    if (renewed) {
      this.held.set(id, { lease: renewed, sentAt });
      return;
    }
    this.forget(id);
    this.options.lost(
      id,
      new ConversationLeaseLostError(id, held.lease.token, 'another host took the conversation over after the lease lapsed'),
    );
  }
}
