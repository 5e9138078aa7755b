import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { listenServer, serveUntilStopped } from './listen-server.js';
import { createConversationHost } from '../host/conversation-host.js';
import { memoryStore } from '../host/memory-store.js';
import { createConversationHandler } from '../http/conversation-handler.js';
import { toNodeListener } from '../http/node-listener.js';
import { sqliteStore } from '../stores/sqlite/index.js';
import type { ServeCommand } from './parse-arguments.js';
import { type LoadedMachine, loadMachine } from './machine-module.js';
import { cliHostId } from './process-owner.js';
import { type CliEnvironment, chooseProvider, cliMachine, offlineNotice } from './run-command.js';
import { reportTo } from './stored-commands.js';

/** Where `serve` reads its token when `--token` is not given. */
export const serveTokenVariable = 'ACTORLOOP_TOKEN';

/** Compares digests, so the time a wrong token takes says nothing of the right one (nor of its length). */
function tokenCheck(token: string): (request: Request) => boolean {
  const expected = createHash('sha256').update(token).digest();
  return (request) => {
    const header = request.headers.get('authorization') ?? '';
    const match = /^Bearer\s+(\S+)$/i.exec(header);
    if (!match?.[1]) return false;
    return timingSafeEqual(createHash('sha256').update(match[1]).digest(), expected);
  };
}

/**
 * `actorloop serve [--db file] [--port n] [--hostname h] [--token t] [provider options | --machine m]`:
 * the conversation routes of `actorloop/http` on a local port, for local use (a page, a script, curl)
 * — every request needs `Authorization: Bearer <token>`, the token from `--token`,
 * `ACTORLOOP_TOKEN`, or made up and printed at start. With `--db` the conversations are stored in
 * that SQLite file (created when there is none); runs a killed server left in flight stay
 * interrupted until `actorloop resume` continues them. Runs until SIGINT or SIGTERM, then closes the
 * server and the host (runs in flight stay stored as they are).
 */
export async function serveCommand(
  command: ServeCommand,
  environment: CliEnvironment & { onStop?: (stop: () => void) => () => void },
): Promise<number> {
  // `--machine`: the user's machine (a workflow, started with POST …/start) with the model its module chose.
  const loaded: LoadedMachine | undefined = command.machine === undefined ? undefined : await loadMachine(command.machine, process.cwd());
  const chosen = loaded === undefined ? chooseProvider(command, environment.env) : undefined;
  const given = command.token ?? environment.env[serveTokenVariable];
  const token = given === undefined || given === '' ? randomBytes(24).toString('base64url') : given;
  const store = command.db === undefined ? memoryStore() : sqliteStore({ path: command.db });
  const host = createConversationHost({
    machine: loaded?.machine ?? cliMachine(command, (chosen as NonNullable<typeof chosen>).provider),
    store,
    hostId: cliHostId(),
    onError: reportTo(environment),
  });
  const handler = createConversationHandler(host, { authorize: tokenCheck(token), store });
  const server = createServer(toNodeListener(handler));
  const { stderr, stdout } = environment;
  const origin = await listenServer(server, command.port, command.hostname, host);
  if (chosen?.offline) stderr.write(offlineNotice);
  const what = loaded === undefined ? 'conversations' : 'runs';
  const on =
    loaded === undefined
      ? `on ${chosen?.label}`
      : `of machine ${JSON.stringify(loaded.machine.id)} (${loaded.label}); POST ${origin}/conversations/{id}/start starts one`;
  stderr.write(
    `actorloop: serving ${command.db === undefined ? `${what} in memory (gone when it stops; --db <file> keeps them)` : `the ${what} of ${command.db}`} ${on}\n` +
      `actorloop: routes in ${origin}/openapi.json; every request needs "Authorization: Bearer <token>"` +
      `${given ? ` (the token from ${command.token === undefined ? serveTokenVariable : '--token'})` : ''}\n`,
  );
  // The address goes to stdout, so a script can read where to connect; a made-up token goes with it.
  stdout.write(`${JSON.stringify({ url: origin, ...(given ? {} : { token }) })}\n`);

  return serveUntilStopped(server, host, environment);
}
