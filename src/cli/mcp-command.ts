import { createRequire } from 'node:module';
import { createConversationHost } from '../host/conversation-host.js';
import { memoryStore } from '../host/memory-store.js';
import { serveMcp } from '../protocols/mcp/serve-mcp.js';
import { sqliteStore } from '../stores/sqlite/index.js';
import type { McpCommand } from './parse-arguments.js';
import { type LoadedMachine, loadMachine } from './machine-module.js';
import { cliHostId } from './process-owner.js';
import { type CliEnvironment, chooseProvider, cliMachine, offlineNotice } from './run-command.js';
import { reportTo } from './stored-commands.js';

/**
 * `actorloop mcp [--db file] [provider options | --machine m]`: the CLI's conversation (or the
 * runs of `--machine`) as an MCP server on stdin/stdout, for an MCP client that starts it as a
 * process (Claude Desktop, Cursor, an SDK client). stdout is the protocol's: everything else goes
 * to stderr. With `--db` the conversations are stored in that SQLite file. Runs until the client
 * closes stdin, or SIGINT / SIGTERM; then the session ends (a call in progress is cancelled) and the
 * host closes. Resolves with the exit code, 0.
 */
export async function mcpCommand(
  command: McpCommand,
  environment: CliEnvironment & { onStop?: (stop: () => void) => () => void },
): Promise<number> {
  const loaded: LoadedMachine | undefined = command.machine === undefined ? undefined : await loadMachine(command.machine, process.cwd());
  const chosen = loaded === undefined ? chooseProvider(command, environment.env) : undefined;
  const host = createConversationHost({
    machine: loaded?.machine ?? cliMachine(command, (chosen as NonNullable<typeof chosen>).provider),
    store: command.db === undefined ? memoryStore() : sqliteStore({ path: command.db }),
    hostId: cliHostId(),
    onError: reportTo(environment),
  });
  const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };
  const served = serveMcp(host, {
    name: 'actorloop',
    version,
    onError: (error) => environment.stderr.write(`actorloop: mcp: ${error instanceof Error ? error.message : String(error)}\n`),
  });
  const { stderr } = environment;
  if (chosen?.offline) stderr.write(offlineNotice);
  let session: Awaited<ReturnType<typeof served.connectStdio>>;
  try {
    session = await served.connectStdio();
  } catch (error) {
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
