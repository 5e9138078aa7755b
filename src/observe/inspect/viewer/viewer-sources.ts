import type { AnyStateMachine } from 'xstate';
import { InvalidOptionsError } from '../../../errors/invalid-options-error.js';
import type { ConversationStep, ForkOptions, GetOptions, HistoryOptions } from '../../../host/conversation-history.js';
import type { ConversationSummary, ListOptions } from '../../../host/conversation-store.js';
import type { FollowOptions, StreamObserver } from '../../../host/conversation-stream.js';
import type { ConversationView } from '../../../host/conversation-view.js';
import { ConversationExistsError } from '../../../host/errors/conversation-exists-error.js';
import { ConversationNotFoundError } from '../../../host/errors/conversation-not-found-error.js';
import type { ConversationUserEvent } from '../../../machines/names/types.js';
import { type ConversationFeed, isActorLike } from '../../conversation-source.js';
import type { HostConversationFeed } from '../../host-feed.js';
import { ViewerRequestError } from './viewer-request-error.js';
import type { ViewerHost } from './viewer-host.js';
import { type WatchableActor, WatchedRun, type WatchedSummary } from './watched-run.js';

/**
 * How a watched run is shown.
 *
 * @example
 * ```ts
 * viewer.watch(actor, { id: 'c-42', label: 'Ada, turn 3' });
 * ```
 */
export type WatchOptions = {
  /** The run's id in the viewer (and in the page's address, `#id`). Default: a host feed's conversation id, else `run-<n>`. */
  id?: string;
  /** What the run list shows. Default: the id. */
  label?: string;
  /** The machine to draw. Default: the actor's own (`actor.logic`), a host feed's, or the viewer's `machine`. */
  machine?: AnyStateMachine;
};

/**
 * How a watched host's conversations are shown.
 *
 * @example
 * ```ts
 * viewer.watchHost(euHost, { prefix: 'eu/' });
 * ```
 */
export type WatchHostOptions = {
  /** Put before each conversation id to make its id in the viewer (to tell two hosts apart). Default `''`. */
  prefix?: string;
  /** The machine to draw. Default: the host's. */
  machine?: AnyStateMachine;
};

type HostEntry = { host: ViewerHost; prefix: string; machine: AnyStateMachine };
type Owner = { run: WatchedRun } | { entry: HostEntry; hostId: string };
type Limits = { machine: AnyStateMachine | undefined; maxRuns: number; maxSteps: number; maxItems: number };

export function isMachine(value: unknown): value is AnyStateMachine {
  return typeof value === 'object' && value !== null && typeof (value as { root?: unknown }).root === 'object' && 'definition' in value;
}

/** What a host feed (`hostFeed(host, id)`) says of itself: its conversation id and machine. */
function hostFeedOf(source: ConversationFeed): Partial<Pick<HostConversationFeed, 'conversationId' | 'machine'>> {
  const { conversationId, machine } = source as ConversationFeed & Partial<HostConversationFeed>;
  return { ...(typeof conversationId === 'string' ? { conversationId } : {}), ...(machine ? { machine } : {}) };
}

/**
 * Everything one viewer shows, under one set of ids: runs watched in this process (actors and
 * feeds, recorded step by step) and the conversations of durable hosts (read through them, a
 * prefix telling hosts apart). It answers what the viewer's routes ask as a host would — `list`,
 * `get` at a step, `history`, `follow`, `send`, `fork` — so the page is the same for every source.
 */
export class ViewerSources {
  private readonly runs = new Map<string, WatchedRun>();
  private readonly hosts: HostEntry[] = [];
  private readonly owners = new Map<string, HostEntry>();
  private readonly forks = new Set<{ stop(): void }>();
  private readonly followers = new Set<{ stop(): void; end(): void }>();
  private serial = 0;
  private closed = false;

  constructor(private readonly limits: Limits) {}

  /** The machine drawn when no conversation is picked: the viewer's, else the first host's, else the first watched run's. */
  defaultMachine(): AnyStateMachine | undefined {
    return this.limits.machine ?? this.hosts[0]?.machine ?? [...this.runs.values()].find((run) => run.machine)?.machine;
  }

  /** The machine of a conversation the viewer showed (after `get`). */
  machineOf(id: string): AnyStateMachine | undefined {
    return this.runs.get(id)?.machine ?? this.ownerEntry(id)?.machine;
  }

  watch(source: WatchableActor | ConversationFeed, options: WatchOptions = {}): () => void {
    this.ensureOpen('watch()');
    const fromHost = isActorLike(source) ? {} : hostFeedOf(source as ConversationFeed);
    const id = options.id ?? fromHost.conversationId ?? `run-${++this.serial}`;
    if (this.runs.has(id))
      throw new InvalidOptionsError('watch(source, options).id', `an id no other watched run has ("${id}" is taken)`, id);
    const logic = isActorLike(source) ? (source as { logic?: unknown }).logic : undefined;
    const machine = options.machine ?? (isMachine(logic) ? logic : isMachine(fromHost.machine) ? fromHost.machine : this.limits.machine);
    if (!machine && isActorLike(source))
      throw new InvalidOptionsError('watch(source, options).machine', 'a state machine to draw (the actor brings none of its own)');
    const run = new WatchedRun(id, options.label ?? id, machine, source, {
      maxSteps: this.limits.maxSteps,
      maxItems: this.limits.maxItems,
    });
    this.runs.set(id, run);
    run.start(isActorLike(source) ? source : undefined);
    this.dropOldRuns();
    return () => run.stop();
  }

  watchHost(host: ViewerHost, options: WatchHostOptions = {}): () => void {
    this.ensureOpen('watchHost()');
    const prefix = options.prefix ?? '';
    if (this.hosts.some((entry) => entry.host === host && entry.prefix === prefix))
      throw new InvalidOptionsError('watchHost(host)', 'a host this viewer does not show yet (it shows this one)');
    const entry: HostEntry = { host, prefix, machine: options.machine ?? host.machine };
    this.hosts.push(entry);
    return () => {
      const at = this.hosts.indexOf(entry);
      if (at >= 0) this.hosts.splice(at, 1);
      for (const [id, owner] of this.owners) if (owner === entry) this.owners.delete(id);
    };
  }

  /** Every conversation, ordered by id, paged like a store's `list` (watched runs carry their `label`). */
  async list({ after, limit = 1000 }: Pick<ListOptions, 'after' | 'limit'> = {}): Promise<Array<ConversationSummary | WatchedSummary>> {
    const found: Array<ConversationSummary | WatchedSummary> = [...this.runs.values()]
      .map((run) => run.summary())
      .filter((summary) => after === undefined || summary.id > after);
    for (const entry of this.hosts) {
      const { prefix } = entry;
      // A host's ids all start with its prefix: after an id past every one of them, it has none to give.
      if (after !== undefined && !after.startsWith(prefix) && after > prefix) continue;
      const hostAfter = after?.startsWith(prefix) ? after.slice(prefix.length) : undefined;
      const page = await entry.host.list({ limit, ...(hostAfter === undefined ? {} : { after: hostAfter }) });
      found.push(...page.map((summary) => ({ ...summary, id: prefix + summary.id })));
    }
    return found.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)).slice(0, limit);
  }

  async get(id: string, options: GetOptions = {}): Promise<ConversationView | undefined> {
    const owner = await this.owner(id);
    if (!owner) return undefined;
    if ('run' in owner) return owner.run.view(options.seq);
    const view = await owner.entry.host.get(owner.hostId, options);
    return view && { ...view, id };
  }

  async history(id: string, options: HistoryOptions = {}): Promise<ConversationStep[]> {
    const owner = await this.existing(id, 'history');
    return 'run' in owner ? owner.run.history(options) : owner.entry.host.history(owner.hostId, options);
  }

  async send(id: string, event: ConversationUserEvent): Promise<ConversationView> {
    const owner = await this.existing(id, 'send');
    if ('run' in owner) {
      owner.run.send(event);
      return owner.run.view() as ConversationView;
    }
    return { ...(await owner.entry.host.send(owner.hostId, event)), id };
  }

  async fork(id: string, { seq, newId }: ForkOptions): Promise<ConversationView> {
    const owner = await this.existing(id, 'fork');
    if ('entry' in owner) {
      const { prefix, host } = owner.entry;
      if (!newId.startsWith(prefix))
        throw new ViewerRequestError(400, `newId: expected an id starting with ${JSON.stringify(prefix)} (its host's prefix)`, 'newId');
      return { ...(await host.fork(owner.hostId, { seq, newId: newId.slice(prefix.length) })), id: newId };
    }
    if ((await this.owner(newId)) !== undefined) throw new ConversationExistsError(newId, 'pick another id for the fork');
    const actor = owner.run.forkActor(seq);
    this.forks.add(actor as unknown as { stop(): void });
    this.watch(actor, {
      id: newId,
      label: `${owner.run.label} · fork of step ${seq}`,
      ...(owner.run.machine ? { machine: owner.run.machine } : {}),
    });
    (actor as unknown as { start(): void }).start();
    return (await this.get(newId)) as ConversationView;
  }

  /** Follows a conversation's stream (the route checked it exists, so its owner is known). */
  follow(id: string, observer: StreamObserver, options: FollowOptions = {}): () => void {
    const run = this.runs.get(id);
    const entry = run ? undefined : this.ownerEntry(id);
    if (!run && !entry) throw new ConversationNotFoundError(id, 'nothing to follow');
    const stop = run
      ? run.follow(observer, options)
      : (entry as HostEntry).host.follow(id.slice((entry as HostEntry).prefix.length), observer, options);
    // Kept so that `close()` ends each page's stream as a stream ends, not as a dropped connection.
    const follower = { stop, end: () => observer.error?.(new ViewerRequestError(503, 'the viewer closed')) };
    this.followers.add(follower);
    return () => {
      this.followers.delete(follower);
      stop();
    };
  }

  /** Stops recording every watched run and every fork the viewer started. Never stops a watched actor or a host. */
  close(): void {
    this.closed = true;
    for (const follower of this.followers) {
      follower.stop();
      follower.end();
    }
    this.followers.clear();
    for (const run of this.runs.values()) run.stop();
    for (const fork of this.forks) fork.stop();
    this.forks.clear();
    this.hosts.splice(0);
    this.owners.clear();
  }

  private ensureOpen(what: string): void {
    if (this.closed) throw new InvalidOptionsError(what, 'a viewer that is still open (it was closed)');
  }

  private ownerEntry(id: string): HostEntry | undefined {
    return this.owners.get(id) ?? this.hosts.find((entry) => id.startsWith(entry.prefix));
  }

  private async owner(id: string): Promise<Owner | undefined> {
    const run = this.runs.get(id);
    if (run) return { run };
    for (const entry of this.hosts) {
      if (!id.startsWith(entry.prefix)) continue;
      const hostId = id.slice(entry.prefix.length);
      if ((await entry.host.get(hostId)) === undefined) continue;
      this.owners.set(id, entry);
      return { entry, hostId };
    }
    return undefined;
  }

  private async existing(id: string, what: string): Promise<Owner> {
    const owner = await this.owner(id);
    if (!owner) throw new ConversationNotFoundError(id, `nothing to ${what}`);
    return owner;
  }

  private dropOldRuns(): void {
    for (const [id, run] of this.runs) {
      if (this.runs.size <= this.limits.maxRuns) break;
      if (run.ended) {
        run.stop();
        this.runs.delete(id);
      }
    }
  }
}
