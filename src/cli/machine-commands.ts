import { randomBytes } from 'node:crypto';
import { type AnyConversationHost, createConversationHost } from '../host/conversation-host.js';
import type { ConversationStore, StoredConversation } from '../host/conversation-store.js';
import { ConversationExistsError } from '../host/errors/conversation-exists-error.js';
import { memoryStore } from '../host/memory-store.js';
import { stateKeyOf } from '../host/stored-state.js';
import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import { isConversationMachine } from '../machines/names/conversation-mark.js';
import { sqliteStore } from '../stores/sqlite/index.js';
import { CliUsageError } from './cli-usage-error.js';
import { CommandRefusedError } from './command-refused-error.js';
import { followMachineRun } from './follow-machine-run.js';
import { type LoadedMachine, loadMachine, type MachineSpec } from './machine-module.js';
import { oneConversationStore } from './one-conversation-store.js';
import type { CancelCommand, ForkCommand, ResumeCommand, SendCommand, StartCommand } from './parse-arguments.js';
import { cliHostId } from './process-owner.js';
import type { CliEnvironment } from './run-command.js';
import { reportTo } from './stored-commands.js';
import { checkTakeOver, loadStored, shownStatusOf } from './stored-conversation.js';

/** A host of the user's machine over `store`, signed as this CLI process. */
function hostOf(loaded: LoadedMachine, store: ConversationStore, environment: CliEnvironment): AnyConversationHost {
  return createConversationHost({ machine: loaded.machine, store, hostId: cliHostId(), onError: reportTo(environment) });
}

/** The machine of `--machine`, loaded from the current directory. */
const loadCommandMachine = (spec: MachineSpec): Promise<LoadedMachine> => loadMachine(spec, process.cwd());

/** How the user's machine is named on stderr: `machine "order" (./order.ts)`. */
const described = (loaded: LoadedMachine) => `machine ${JSON.stringify(loaded.machine.id)} (${loaded.label})`;

/**
 * `actorloop start <id> --machine <module>[#export] [--input json] [--session-data json] [--db file]`:
 * `host.start(id, { input, sessionData })` on a host of the user's machine — over the SQLite file
 * (created when there is none) or in memory — followed here as `followMachineRun` says: streamed
 * text by path, the workflow's events, approvals asked at a terminal, the output as JSON, its exit
 * code. A workflow id whose last run ended starts again; one in flight is refused (exit 3).
 *
 * @example
 * ```ts
 * const machine = machineSpecOf('./order.js');
 * const { code } = await startRun({ command: 'start', id: 'o1', machine, input: { item: 'lamp' }, sessionData: undefined, db: 'runs.db' }, environment);
 * ```
 */
export async function startRun(command: StartCommand, environment: CliEnvironment): Promise<{ code: number; output?: unknown }> {
  const loaded = await loadCommandMachine(command.machine);
  const store = command.db === undefined ? memoryStore() : sqliteStore({ path: command.db });
  const host = hostOf(loaded, store, environment);
  const { id, db } = command;
  try {
    environment.stderr.write(
      `actorloop: starting ${id}, a run of ${described(loaded)}, ${db === undefined ? 'in memory (--db <file> keeps it)' : `stored in ${db}`}\n`,
    );
    return await followMachineRun(
      host,
      id,
      {
        db,
        loaded,
        start: async () => {
          try {
            await host.start(id, {
              ...(command.input === undefined ? {} : { input: command.input }),
              ...(command.sessionData === undefined ? {} : { sessionData: command.sessionData }),
            });
          } catch (error) {
            // The host names its own option; on the command line it is the flag.
            if (InvalidOptionsError.isInstance(error) && error.option.startsWith('options.')) {
              const flag = error.option.startsWith('options.sessionData') ? '--session-data' : '--input';
              throw new CliUsageError(`${flag}: ${error.message}`);
            }
            throw error;
          }
        },
      },
      environment,
    );
  } finally {
    await host.close();
  }
}

/**
 * Takes a stored run of the user's machine over for this process, when it is in flight and its
 * process is gone (`checkTakeOver`: a live one is refused, exit 3; one that cannot be checked needs
 * `--force`): `recover()` on a store that shows it this one run only. A workflow is held by the
 * process that runs it, also while it waits for an approval; a conversation waiting for one is
 * stored, not held, so any process answers it. A run that ended is refused, naming `start`.
 */
async function takeOver(
  host: AnyConversationHost,
  store: ConversationStore,
  loaded: LoadedMachine,
  { id, db, command, force }: { id: string; db: string; command: 'send' | 'resume' | 'cancel'; force: boolean },
): Promise<StoredConversation> {
  const stored = await loadStored(store, id, db);
  if (stored.machineId !== loaded.machine.id) {
    throw new CliUsageError(
      `"${id}" in ${db} is a run of machine "${stored.machineId}", and --machine ${loaded.label} makes machine "${loaded.machine.id}"`,
    );
  }
  // Read through the host first: a snapshot this machine cannot load is reported before anything is taken over.
  await host.get(id);
  const { status } = shownStatusOf(stored);
  if (status === 'done' || status === 'halted' || status === 'error' || status === 'idle') {
    const again = isConversationMachine(loaded.machine) ? '' : ` (actorloop start ${id} --machine ${loaded.label} … starts another)`;
    throw new CommandRefusedError(`"${id}" is ${status}: its run ended, there is nothing to ${command}${again}; nothing changed`);
  }
  const held = stored.status === 'running' || (!isConversationMachine(loaded.machine) && stored.status === 'awaitingApproval');
  if (!held) {
    if (command === 'resume')
      throw new CommandRefusedError(
        `"${id}" waits for approval, stored and held by no process: nothing to resume (actorloop send answers it); nothing changed`,
      );
    return stored;
  }
  checkTakeOver(stored, { command, db, force });
  const { resumed, failed } = await host.recover();
  if (failed[0]) throw failed[0].error;
  if (!resumed.includes(id))
    throw new CommandRefusedError(`"${id}" changed while it was being taken over (another process took it); nothing done`);
  return stored;
}

/** The store of a command on one stored run: the file (never created), as a host that takes over that run alone sees it. */
function storeOf(db: string, id: string) {
  const store = sqliteStore({ path: db, create: false });
  return { store, hosted: oneConversationStore(store, id) };
}

/**
 * `actorloop send --db file <id> --machine <module>[#export] --event json`: an event to a stored
 * run of the user's machine — one of the workflow's own, or `tool.approve` / `tool.deny` / `cancel`
 * — taking the run over first when its process is gone, then following it as `start` does.
 *
 * @example
 * ```ts
 * await sendEvent({ command: 'send', id: 'o1', db: 'runs.db', machine, event: { type: 'order.confirm' }, force: false }, environment);
 * ```
 */
export async function sendEvent(command: SendCommand, environment: CliEnvironment): Promise<{ code: number; output?: unknown }> {
  const loaded = await loadCommandMachine(command.machine);
  const { id, db, event } = command;
  const { store, hosted } = storeOf(db, id);
  const host = hostOf(loaded, hosted, environment);
  try {
    const stored = await takeOver(host, store, loaded, { id, db, command: 'send', force: command.force });
    environment.stderr.write(`actorloop: sending ${event.type} to ${id} (${shownStatusOf(stored).status}) in ${db}\n`);
    return await followMachineRun(
      host,
      id,
      {
        db,
        loaded,
        start: async () => {
          await host.send(id, event as never);
        },
      },
      environment,
    );
  } finally {
    await host.close();
  }
}

/**
 * `actorloop resume --db file <id> --machine <module>[#export]`: a run of the user's machine whose
 * process is gone, taken over and followed here as `start` follows one.
 *
 * @example
 * ```ts
 * await resumeMachineRun({ command: 'resume', id: 'o1', db: 'runs.db', machine, force: false, ...providerOptions }, environment);
 * ```
 */
export async function resumeMachineRun(
  command: ResumeCommand & { machine: MachineSpec },
  environment: CliEnvironment,
): Promise<{ code: number; output?: unknown }> {
  const loaded = await loadCommandMachine(command.machine);
  const { id, db } = command;
  const { store, hosted } = storeOf(db, id);
  const host = hostOf(loaded, hosted, environment);
  try {
    environment.stderr.write(`actorloop: resuming ${id}, a run of ${described(loaded)} in ${db}\n`);
    return await followMachineRun(
      host,
      id,
      {
        db,
        loaded,
        start: async () => {
          await takeOver(host, store, loaded, { id, db, command: 'resume', force: command.force });
        },
      },
      environment,
    );
  } finally {
    await host.close();
  }
}

/**
 * `actorloop cancel --db file <id> --machine <module>[#export] [--reason text]`: ends a stored run
 * of the user's machine with `cancel` — a workflow ends `halted`, every conversation in it stopped.
 * A run a live process holds is refused (exit 3; Ctrl-C there cancels it), as is one that ended.
 *
 * @example
 * ```ts
 * await cancelMachineRun({ command: 'cancel', id: 'o1', db: 'runs.db', machine, force: false, reason: 'not needed' }, environment);
 * ```
 */
export async function cancelMachineRun(command: CancelCommand & { machine: MachineSpec }, environment: CliEnvironment): Promise<number> {
  const loaded = await loadCommandMachine(command.machine);
  const { id, db } = command;
  const { store, hosted } = storeOf(db, id);
  const host = hostOf(loaded, hosted, environment);
  try {
    const stored = await takeOver(host, store, loaded, { id, db, command: 'cancel', force: command.force });
    await host.send(id, { type: 'cancel', ...(command.reason === undefined ? {} : { reason: command.reason }) } as never);
    await host.result(id);
    const view = await host.get(id);
    environment.stderr.write(
      `actorloop: cancelled ${id} (was ${shownStatusOf(stored).status}; now ${view?.status} in ${stateKeyOf(view?.value)})\n`,
    );
    return 0;
  } finally {
    await host.close();
  }
}

/**
 * `actorloop fork --db file <id> --seq n --machine <module>[#export] [--new-id x]`: a new run of the
 * user's machine from stored step `n`; a step in the middle of a run goes on at once, followed here
 * as `start` follows one, any other is stored as it was and its id printed.
 *
 * @example
 * ```ts
 * await forkMachineRun({ command: 'fork', id: 'o1', db: 'runs.db', seq: 4, newId: 'o1-b', machine, ...providerOptions }, environment);
 * ```
 */
export async function forkMachineRun(
  command: ForkCommand & { machine: MachineSpec },
  environment: CliEnvironment,
): Promise<{ code: number; output?: unknown }> {
  const loaded = await loadCommandMachine(command.machine);
  const { db, id, seq } = command;
  const store = sqliteStore({ path: db, create: false });
  const host = hostOf(loaded, store, environment);
  const newId = command.newId ?? `${id}-${seq}-${randomBytes(3).toString('hex')}`;
  const fork = async () => {
    try {
      return await host.fork(id, { seq, newId });
    } catch (error) {
      if (ConversationExistsError.isInstance(error))
        throw new CommandRefusedError(`"${newId}" already exists in ${db}: choose another --new-id; nothing written`);
      throw error;
    }
  };
  try {
    await loadStored(store, id, db);
    const step = await host.get(id, { seq });
    environment.stderr.write(
      `actorloop: forking ${id} at step ${seq} (${step?.status}, ${stateKeyOf(step?.value)}) into ${newId} in ${db}\n`,
    );
    if (step?.status !== 'running') {
      const view = await fork();
      environment.stdout.write(command.json ? `${JSON.stringify(view)}\n` : `${newId}\n`);
      return { code: 0 };
    }
    return await followMachineRun(
      host,
      newId,
      {
        db,
        loaded,
        start: async () => {
          await fork();
        },
      },
      environment,
    );
  } finally {
    await host.close();
  }
}
