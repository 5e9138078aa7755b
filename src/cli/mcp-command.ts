import { createRequire } from 'node:module';
import { type AnyConversationHost, createConversationHost } from '../host/conversation-host.js';
import type { ConversationStore } from '../host/conversation-store.js';
import { memoryStore } from '../host/memory-store.js';
import { serveMcp } from '../protocols/mcp/serve-mcp.js';
import { sqliteStore } from '../stores/sqlite/index.js';
import type { McpCommand } from './parse-arguments.js';
import { type LoadedMachine, loadMachine } from './machine-module.js';
import { oneConversationStore } from './one-conversation-store.js';
import { cliHostId, describeOwner, ownerLiveness } from './process-owner.js';
import { type CliEnvironment, chooseProvider, cliMachine, offlineNotice } from './run-command.js';
import { reportTo } from './stored-commands.js';

/**
 * `actorloop mcp [--db file] [--conversation id] [provider options | --machine m]`: the CLI's conversation (or the
 * runs of `--machine`) as an MCP server on stdin/stdout, for an MCP client that starts it as a
 * process (Claude Desktop, Cursor, an SDK client). stdout is the protocol's: everything else goes
 * to stderr. With `--db` the conversations are stored in that SQLite file; `--conversation` pins
 * the session's conversation id, so it continues across restarts, and resumes a run of it a killed
 * process left (see `recoverPinned`). Runs until the client
 * closes stdin, or SIGINT / SIGTERM; then the session ends (a call in progress is cancelled) and the
 * host closes. Resolves with the exit code, 0.
 */
export async function mcpCommand(
  command: McpCommand,
  environment: CliEnvironment & { onStop?: (stop: () => void) => () => void },
): Promise<number> {
  const loaded: LoadedMachine | undefined = command.machine === undefined ? undefined : await loadMachine(command.machine, process.cwd());
  const chosen = loaded === undefined ? chooseProvider(command, environment.env) : undefined;
  const pinned = command.conversation;
  const file = command.db === undefined ? undefined : sqliteStore({ path: command.db });
  // A pinned conversation's host sees that one conversation only: its recover() resumes it and no
  // other run of the file (those are `actorloop resume`'s to continue, on the provider it is given).
  const host = createConversationHost({
    machine: loaded?.machine ?? cliMachine(command, (chosen as NonNullable<typeof chosen>).provider),
    store: file === undefined ? memoryStore() : pinned === undefined ? file : oneConversationStore(file, pinned),
    hostId: cliHostId(),
    onError: reportTo(environment),
  });
  const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };
  const served = serveMcp(host, {
    name: 'actorloop',
    version,
    ...(pinned === undefined ? {} : { conversationId: pinned }),
    onError: (error) => environment.stderr.write(`actorloop: mcp: ${error instanceof Error ? error.message : String(error)}\n`),
  });
  const { stderr } = environment;
  if (chosen?.offline) stderr.write(offlineNotice);
  let session: Awaited<ReturnType<typeof served.connectStdio>>;
  try {
    if (file !== undefined && pinned !== undefined) await recoverPinned(host, file, pinned, stderr);
    session = await served.connectStdio();
  } catch (error) {
    await served.close();
    await host.close();
    throw error;
  }
  const what =
    loaded === undefined
      ? `the conversation on ${chosen?.label}`
      : `runs of machine ${JSON.stringify(loaded.machine.id)} (${loaded.label})`;
  stderr.write(
    `actorloop: MCP server on stdio: ${what}, conversation ${session.conversationId} ` +
      `${command.db === undefined ? 'in memory (--db <file> keeps it)' : `stored in ${command.db}`}\n`,
  );
  await new Promise<void>((resolve) => {
    const stopSignals = environment.onStop?.(resolve);
    void session.closed.then(() => {
      stopSignals?.();
      resolve();
    });
  });
  await served.close();
  await host.close();
  return 0;
}

/**
 * A run of the pinned conversation that a process killed mid-call left stored as running: resumed
 * here when that process is gone, so it finishes and the next call continues after it (a call that
 * comes first waits for it: `waitForRunMs`). One a live process holds, or one of another machine, is
 * left to it, and said so: calls then wait, and fail naming the holder.
 */
async function recoverPinned(
  host: AnyConversationHost,
  store: ConversationStore,
  id: string,
  stderr: CliEnvironment['stderr'],
): Promise<void> {
  const stored = await store.load(id);
  if (stored?.status !== 'running') return;
  const liveness = ownerLiveness(stored.owner);
  if (liveness.state !== 'dead') {
    stderr.write(
      `actorloop: mcp: conversation ${id} is running in ${describeOwner(stored.owner, liveness)}${liveness.state === 'unknown' ? ' (which cannot be checked from here)' : ''}; not resumed here\n`,
    );
    return;
  }
  const { resumed, failed } = await host.recover();
  if (failed[0]) throw failed[0].error;
  if (resumed.includes(id))
    stderr.write(`actorloop: mcp: resumed the run of conversation ${id} that ${describeOwner(stored.owner, liveness)} left\n`);
}
