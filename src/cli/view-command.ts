import { createServer } from 'node:http';
import { listenServer, serveUntilStopped } from './listen-server.js';
import { createConversationHost } from '../host/conversation-host.js';
import { memoryStore } from '../host/memory-store.js';
import { toNodeListener } from '../http/node-listener.js';
import { createViewerHandler } from '../observe/inspect/index.js';
import { loopbackOnly } from '../observe/inspect/viewer/loopback.js';
import { missingChartPackage, missingChartPackageHint } from '../observe/inspect/viewer/chart-package.js';
import { sqliteStore } from '../stores/sqlite/index.js';
import type { ViewCommand } from './parse-arguments.js';
import { cliHostId } from './process-owner.js';
import { type CliEnvironment, chooseProvider, cliMachine, offlineNotice } from './run-command.js';
import { reportTo } from './stored-commands.js';

/**
 * `actorloop view [--db file] [--port n] [--hostname h] [provider options]`: the viewer you can
 * operate (`createViewerHandler` from `actorloop/inspect`) over a host on that SQLite file — every
 * stored conversation, the newest followed, time travel over its steps, approve / deny / cancel
 * and fork. A run an approval lets go on runs here, on the provider given (the offline model when
 * there is no key). It answers requests addressed to this machine's loopback names or to
 * `--hostname` only. Prints `{ url }` on stdout; runs until SIGINT or SIGTERM. Without `elkjs` (an
 * optional peer) it says at start what to install for the statechart, as the page does.
 */
export async function viewCommand(
  command: ViewCommand,
  environment: CliEnvironment & { onStop?: (stop: () => void) => () => void },
): Promise<number> {
  const chosen = chooseProvider(command, environment.env);
  const store = command.db === undefined ? memoryStore() : sqliteStore({ path: command.db, create: false });
  try {
    // The file is read before anything is served: a missing or bad one fails the command at once.
    await store.list({ limit: 1 });
  } catch (error) {
    await store.close();
    throw error;
  }
  // The chart's optional package, loaded while the rest starts: the first chart is drawn without waiting for it.
  const chartPackage = missingChartPackage().catch(() => undefined);
  const host = createConversationHost({
    machine: cliMachine(command, chosen.provider),
    store,
    hostId: cliHostId(),
    onError: reportTo(environment),
  });
  const handler = createViewerHandler(host, {
    title: `actorloop · ${command.db ?? 'in memory'}`,
    authorize: loopbackOnly(command.hostname),
    onError: reportTo(environment),
  });
  const server = createServer(toNodeListener(handler));
  const missing = await chartPackage;
  const origin = await listenServer(server, command.port, command.hostname, host);
  const url = `${origin}/`;
  const { stderr, stdout } = environment;
  if (chosen.offline) stderr.write(offlineNotice);
  // Said once here, as the page says it where the chart would be: a fresh install lacks this optional peer.
  if (missing !== undefined) stderr.write(`actorloop: ${missingChartPackageHint(missing)}\n`);
  stderr.write(`actorloop: the viewer on ${command.db ?? 'conversations in memory'}: ${url} (Ctrl-C to stop)\n`);
  stdout.write(`${JSON.stringify({ url })}\n`);

  return serveUntilStopped(server, host, environment);
}
