import { randomBytes } from 'node:crypto';
import { createConversationHost } from '../host/conversation-host.js';
import { ConversationExistsError } from '../host/errors/conversation-exists-error.js';
import { stateKeyOf } from '../host/stored-state.js';
import type { RunOutput } from '../machines/names/types.js';
import { sqliteStore } from '../stores/sqlite/index.js';
import { CommandRefusedError } from './command-refused-error.js';
import { followRun } from './follow-run.js';
import type { ForkCommand } from './parse-arguments.js';
import { isConversationMachine } from '../machines/names/conversation-mark.js';
import { loadMachine, type MachineSpec } from './machine-module.js';
import { cliHostId } from './process-owner.js';
import { type CliEnvironment, chooseProvider, cliMachine, offlineNotice } from './run-command.js';
import { readingHost, reportTo } from './stored-commands.js';
import { withTurns } from './step-turns.js';
import { checkMachineOf, loadStored } from './stored-conversation.js';

/** The header row of `actorloop history`'s text output: its columns, tab-separated like the rows. */
export const historyHeader = ['seq', 'turn', 'time', 'status', 'state'].join('\t');

/**
 * `actorloop history --db file id [--machine m]`: the conversation's stored steps, oldest first — a
 * header row, then one step a line: `seq`, turn (n: after the n-th user message; `-` for a step
 * that cannot be read), time, status, state — or `--json`: `host.history(id)`, each step with its
 * `turn` (`null` when unreadable). A run of another machine (a workflow) lists its steps as well,
 * with `--machine` or without: it has no turns (`-`). Reads only; a missing file or conversation
 * is an error and nothing is created.
 */
export async function historyStored(
  db: string,
  id: string,
  json: boolean,
  environment: CliEnvironment,
  machine?: MachineSpec,
): Promise<number> {
  const loaded = machine === undefined ? undefined : await loadMachine(machine, process.cwd());
  const store = sqliteStore({ path: db, create: false });
  const host = readingHost(store, environment, loaded);
  try {
    const stored = await loadStored(store, id, db);
    const history = await host.history(id, { limit: 10_000 });
    // Turns count a conversation's user messages: a workflow has no one history to count them in.
    const conversation = loaded === undefined ? stored.machineId === host.machine.id : isConversationMachine(loaded.machine);
    const steps = conversation ? await withTurns(host, id, history) : history.map((step) => ({ ...step, turn: null }));
    if (json) environment.stdout.write(`${JSON.stringify(steps)}\n`);
    else {
      environment.stdout.write(`${historyHeader}\n`);
      for (const { seq, turn, at, status, state } of steps) {
        environment.stdout.write(`${seq}\t${turn ?? '-'}\t${new Date(at).toISOString()}\t${status}\t${stateKeyOf(state)}\n`);
      }
    }
    return 0;
  } finally {
    await host.close();
  }
}

/**
 * `actorloop fork --db file id --seq n [--new-id x] [provider options]`: a new conversation from
 * stored step `n` of `id` (the original is untouched). A step in the middle of a run goes on from
 * there — on the provider given, followed like `run` (same output and exit codes); any other step
 * is stored as it was (waiting for approval, or ended) and the new id is printed. A `--new-id` in
 * use is refused (exit 3), an unknown step is an error (exit 1); either way nothing is written.
 */
export async function forkStored(command: ForkCommand, environment: CliEnvironment): Promise<{ code: number; output?: RunOutput }> {
  const { db, id, seq } = command;
  const chosen = chooseProvider(command, environment.env);
  const store = sqliteStore({ path: db, create: false });
  const host = createConversationHost({
    machine: cliMachine(command, chosen.provider),
    store,
    hostId: cliHostId(),
    onError: reportTo(environment),
  });
  const newId = command.newId ?? `${id}-${seq}-${randomBytes(3).toString('hex')}`;
  const fork = async () => {
    try {
      return await host.fork(id, { seq, newId });
    } catch (error) {
      if (ConversationExistsError.isInstance(error)) {
        throw new CommandRefusedError(`conversation "${newId}" already exists in ${db}: choose another --new-id; nothing written`);
      }
      throw error;
    }
  };
  try {
    checkMachineOf(await loadStored(store, id, db), host.machine.id, { command: 'fork', db });
    const step = await host.get(id, { seq });
    const { stderr, stdout } = environment;
    stderr.write(`actorloop: forking ${id} at step ${seq} (${step?.status}, ${stateKeyOf(step?.value)}) into ${newId} in ${db}\n`);
    if (step?.status !== 'running') {
      const view = await fork();
      if (command.json) stdout.write(`${JSON.stringify(view)}\n`);
      else stdout.write(`${newId}\n`);
      return { code: 0 };
    }
    if (chosen.offline) stderr.write(offlineNotice);
    return await followRun(
      host,
      newId,
      {
        json: command.json,
        started: { provider: chosen.provider.name, model: chosen.label, offline: chosen.offline, forkedFrom: { id, seq } },
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
