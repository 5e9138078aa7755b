import { createConversationHost } from '../host/conversation-host.js';
import { createConversationMachine } from '../machines/chart/conversation.js';
import type { ConversationMachine } from '../machines/names/types.js';
import { type ChunkHandler, handlerProvider } from '../providers/handler/handler-provider.js';
import { sqliteStore } from '../stores/sqlite/index.js';
import { CommandRefusedError } from './command-refused-error.js';
import { oneConversationStore } from './one-conversation-store.js';
import type { CancelCommand } from './parse-arguments.js';
import { cliHostId } from './process-owner.js';
import { type CliEnvironment, describeEnd } from './run-command.js';
import { reportTo } from './stored-commands.js';
import { checkMachineOf, checkTakeOver, loadStored, shownStatusOf, unansweredCalls } from './stored-conversation.js';

/** A model that never answers: the cancelled run makes no request that could reach anyone. */
const silent: ChunkHandler = ({ signal }) => ({
  async *[Symbol.asyncIterator]() {
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  },
});

/**
 * The machine a cancel runs on: no model to ask and no tools, so that nothing of the run is
 * started again on the way to `halted`. Restored mid-round, a call that was running is not run
 * again (no tool is idempotent here: it is answered `interrupted by a restart; not run again`);
 * the machine's `cancel` answers every other open call.
 */
function cancelMachine(): ConversationMachine {
  return createConversationMachine({ provider: { ...handlerProvider(silent), name: 'none' }, tools: [] });
}

/**
 * `actorloop cancel --db file id [--reason text]`: ends an interrupted run (its process is gone)
 * or one waiting for approval with the machine's `cancel`, which answers every open tool call:
 * the run ends `halted` / `cancelled` and its history stays valid to send to a model. Exit 0; a
 * run that already ended, or one a live process is running, is refused (exit 3), nothing changed.
 */
export async function cancelStored(command: CancelCommand, environment: CliEnvironment): Promise<number> {
  const { db, id } = command;
  const store = sqliteStore({ path: db, create: false });
  const host = createConversationHost({
    machine: cancelMachine(),
    store: oneConversationStore(store, id),
    hostId: cliHostId(),
    onError: reportTo(environment),
  });
  try {
    const stored = await loadStored(store, id, db);
    checkMachineOf(stored, host.machine.id, { command: 'cancel', db });
    // Read through the host first: a snapshot it cannot load is reported before anything is taken over.
    await host.get(id);
    const { status } = shownStatusOf(stored);
    if (status === 'done' || status === 'halted' || status === 'error' || status === 'idle') {
      const lastRun = status === 'idle' ? 'it has no run' : 'its last run already ended';
      throw new CommandRefusedError(`conversation "${id}" is ${status}: ${lastRun}, there is nothing to cancel; nothing changed`);
    }
    if (stored.status === 'running') {
      checkTakeOver(stored, { command: 'cancel', db, force: command.force });
      const { resumed, failed } = await host.recover();
      if (failed[0]) throw failed[0].error;
      if (!resumed.includes(id))
        throw new CommandRefusedError(
          `conversation "${id}" changed while it was being cancelled (another process took it over); nothing done`,
        );
    }
    await host.send(id, { type: 'cancel', ...(command.reason === undefined ? {} : { reason: command.reason }) });
    const output = await host.result(id);
    const open = unansweredCalls(output.messages);
    // The machine's cancel answers every call; a call left open would make the history unusable for the next run.
    if (open.length > 0) throw new Error(`conversation "${id}" was cancelled, but tool calls ${open.join(', ')} have no result`);
    const calls = output.messages.flatMap((message) => (message.role === 'tool' ? message.content : [])).length;
    environment.stderr.write(
      `actorloop: cancelled conversation ${id} (was ${status}; now ${describeEnd(output)}); ` +
        `all ${calls} tool call${calls === 1 ? '' : 's'} of its history answered\n`,
    );
    return 0;
  } finally {
    await host.close();
  }
}
