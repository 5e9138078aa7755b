import { createConversationHost } from '../host/conversation-host.js';
import type { RunOutput } from '../machines/names/types.js';
import { sqliteStore } from '../stores/sqlite/index.js';
import { CommandRefusedError } from './command-refused-error.js';
import { followRun } from './follow-run.js';
import { oneConversationStore } from './one-conversation-store.js';
import type { ResumeCommand } from './parse-arguments.js';
import { cliHostId, describeOwner } from './process-owner.js';
import { type CliEnvironment, chooseProvider, cliMachine, offlineNotice } from './run-command.js';
import { reportTo } from './stored-commands.js';
import { checkMachineOf, checkTakeOver, loadStored, shownStatusOf } from './stored-conversation.js';

/**
 * `actorloop resume --db file id [options]`: continues an interrupted run — one whose process is
 * gone — on the provider (and limits) given to `resume`, following it like `run` (same output,
 * same exit codes). The run resumes as the durable host resumes any run: a finished tool call is
 * never run again, one that was running runs again only if its tool is idempotent, a request in
 * progress is made again. Anything but an interrupted run is refused (exit 3), nothing changed.
 */
export async function resumeStored(command: ResumeCommand, environment: CliEnvironment): Promise<{ code: number; output?: RunOutput }> {
  const { db, id } = command;
  const chosen = chooseProvider(command, environment.env);
  const store = sqliteStore({ path: db, create: false });
  // The host sees this one conversation only: its recover() takes over this run and no other.
  const host = createConversationHost({
    machine: cliMachine(command, chosen.provider),
    store: oneConversationStore(store, id),
    hostId: cliHostId(),
    onError: reportTo(environment),
  });
  try {
    const stored = await loadStored(store, id, db);
    checkMachineOf(stored, host.machine.id, { command: 'resume', db });
    const view = await host.get(id);
    const { status } = shownStatusOf(stored);
    if (stored.status !== 'running')
      throw new CommandRefusedError(`conversation "${id}" is ${status}: ${whyNothingToResume(status, id, db)}`);
    const owner = describeOwner(stored.owner, checkTakeOver(stored, { command: 'resume', db, force: command.force }));
    if (chosen.offline) environment.stderr.write(offlineNotice);
    environment.stderr.write(
      `actorloop: resuming conversation ${id} in ${db} (${status}: ${owner}${status === 'interrupted' ? ' is gone' : ''}; ` +
        `stored in ${JSON.stringify(view?.value)}) on ${chosen.label}\n`,
    );
    return await followRun(
      host,
      id,
      {
        json: command.json,
        started: { provider: chosen.provider.name, model: chosen.label, offline: chosen.offline, resumed: true },
        start: async () => {
          const { resumed, failed } = await host.recover();
          if (failed[0]) throw failed[0].error;
          if (!resumed.includes(id))
            throw new CommandRefusedError(
              `conversation "${id}" changed while it was being resumed (another process took it over); nothing done`,
            );
        },
      },
      environment,
    );
  } finally {
    await host.close();
  }
}

function whyNothingToResume(status: string, id: string, db: string): string {
  if (status === 'awaitingApproval')
    return `a run waiting for approval is stored, not held by a process, so there is nothing to resume (actorloop cancel --db ${db} ${id} ends it); nothing changed`;
  if (status === 'idle') return 'it has no run to resume; nothing changed';
  return `its last run ended, so there is nothing to resume (actorloop run --db ${db} --id ${id} "…" starts the next one); nothing changed`;
}
