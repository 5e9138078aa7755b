import type { ConversationStatus, ConversationStore, RunEndedLogEvent, StoredConversation } from '../host/conversation-store.js';
import type { Message } from '../model/messages.js';
import { CliUsageError } from './cli-usage-error.js';
import { CommandRefusedError } from './command-refused-error.js';
import { describeOwner, type OwnerLiveness, ownerLiveness } from './process-owner.js';

/**
 * A conversation's status as the CLI shows it: the stored one, except that a `running` run whose
 * process is gone (see `ownerLiveness`) is `interrupted` — it stays so until `resume` or `cancel`.
 */
export type ShownStatus = ConversationStatus | 'interrupted';

/** The status to show for a stored conversation, with what was found of its owner when it is in flight. */
export function shownStatusOf(stored: Pick<StoredConversation, 'status' | 'owner'>): { status: ShownStatus; liveness?: OwnerLiveness } {
  if (stored.status !== 'running') return { status: stored.status };
  const liveness = ownerLiveness(stored.owner);
  return { status: liveness.state === 'dead' ? 'interrupted' : 'running', liveness };
}

/** The stored conversation, or an error naming the id and the file. */
export async function loadStored(store: ConversationStore, id: string, db: string): Promise<StoredConversation> {
  const stored = await store.load(id);
  if (!stored) throw new Error(`no conversation "${id}" in ${db} (see actorloop list --db ${db})`);
  return stored;
}

/** Every stored conversation (the store's pages, in id order). */
export async function listAll(store: ConversationStore) {
  const all = [];
  for (let after: string | undefined; ; ) {
    const page = await store.list({ limit: 1000, ...(after === undefined ? {} : { after }) });
    all.push(...page);
    if (page.length < 1000) return all;
    after = page.at(-1)?.id;
  }
}

/** The outcome of the conversation's last finished run, from its log; `undefined` before one ended. */
export async function lastRunOf(store: ConversationStore, id: string): Promise<Omit<RunEndedLogEvent, 'type'> | undefined> {
  let last: RunEndedLogEvent | undefined;
  for (let afterSeq = 0; ; ) {
    const page = await store.readLog(id, { afterSeq, limit: 1000 });
    for (const { event } of page) if (event.type === 'run.ended') last = event;
    if (page.length < 1000) break;
    afterSeq = page.at(-1)?.seq ?? afterSeq;
  }
  if (!last) return undefined;
  const { type: _type, ...outcome } = last;
  return outcome;
}

/**
 * Whether `resume` or `cancel` may take over a stored run in flight (`running`): only when its
 * process is gone — or, with `force`, when that cannot be checked from here (or is not believed).
 * Throws a {@link CommandRefusedError} naming the process and what to do instead.
 */
export function checkTakeOver(
  stored: StoredConversation,
  { command, db, force }: { command: 'resume' | 'cancel' | 'send'; db: string; force: boolean },
) {
  const liveness = ownerLiveness(stored.owner);
  if (liveness.state === 'dead' || force) return liveness;
  const name = `conversation "${stored.id}"`;
  const owner = describeOwner(stored.owner, liveness);
  if (liveness.state === 'alive') {
    throw new CommandRefusedError(
      `${name} is running in ${owner}, which is alive: ${command} takes over only a run whose process is gone` +
        (command === 'cancel' ? ' (Ctrl-C in that terminal cancels it)' : '') +
        '; nothing changed',
    );
  }
  throw new CommandRefusedError(
    `${name} is running in ${owner}, which cannot be checked from this machine: if that process is gone, ` +
      `add --force (actorloop ${command} --db ${db} --force ${stored.id}); nothing changed`,
  );
}

/**
 * Refuses a stored run of another machine than the one the command runs (a workflow, for a command
 * on the CLI's own conversations): it names the machine, and `--machine`, which reads it.
 *
 * @example
 * ```ts
 * checkMachineOf(await loadStored(store, 'o1', 'runs.db'), host.machine.id, { command: 'show', db: 'runs.db' });
 * ```
 */
export function checkMachineOf(stored: StoredConversation, machineId: string, { command, db }: { command: string; db: string }): void {
  if (stored.machineId === machineId) return;
  throw new CliUsageError(
    `"${stored.id}" in ${db} is a run of machine "${stored.machineId}", not of the CLI's conversation machine: ` +
      `${command} it with --machine <module>[#export], the module that makes that machine`,
  );
}

/** The refusal of a new message to a conversation whose run is in flight, naming what to do instead. */
export function inFlightRefusal(stored: StoredConversation, db: string): CommandRefusedError {
  const { status, liveness } = shownStatusOf(stored);
  const owner = liveness ? describeOwner(stored.owner, liveness) : `host ${stored.owner}`;
  const name = `conversation "${stored.id}"`;
  if (status === 'interrupted') {
    return new CommandRefusedError(
      `${name} was interrupted (${owner} is gone): continue it with actorloop resume --db ${db} ${stored.id} [provider options], ` +
        `or end it with actorloop cancel --db ${db} ${stored.id}; nothing was sent`,
    );
  }
  return new CommandRefusedError(
    liveness?.state === 'unknown'
      ? `${name} is running in ${owner}, which cannot be checked from this machine: if that process is gone, resume or cancel it with --force; nothing was sent`
      : `${name} is running in ${owner}: send the next message once that run ends; nothing was sent`,
  );
}

/** The ids of the tool calls in `messages` that have no result. */
export function unansweredCalls(messages: readonly Message[]): string[] {
  const answered = new Set(messages.flatMap((message) => (message.role === 'tool' ? message.content.map((part) => part.toolCallId) : [])));
  return messages.flatMap((message) =>
    message.role === 'assistant'
      ? message.content.flatMap((part) => (part.type === 'tool-call' && !answered.has(part.toolCallId) ? [part.toolCallId] : []))
      : [],
  );
}
