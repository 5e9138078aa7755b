import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AnyConversationHost } from '../host/conversation-host.js';
import type { CliEnvironment } from './run-command.js';

/**
 * Starts `server` on `hostname:port` and resolves with its origin (`http://127.0.0.1:8787`, an IPv6
 * address in brackets). When it cannot listen (the port in use), the host it serves is closed before
 * the error goes on: a command that cannot serve leaves nothing open.
 */
export async function listenServer(server: Server, port: number, hostname: string, host: AnyConversationHost): Promise<string> {
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, hostname, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    await host.close();
    throw error;
  }
  const { port: bound } = server.address() as AddressInfo;
  return `http://${hostname.includes(':') ? `[${hostname}]` : hostname}:${bound}`;
}

/** How long answers still being written when the host has closed get to end before their connections are cut. */
const closeGraceMs = 2_000;

/**
 * Serves until SIGINT/SIGTERM (`environment.onStop`) or the server closes, then stops: the server
 * takes no new connection; the host closes — its open event streams end with `event: resume`
 * (`host_closed`, docs/http.md), so their clients know to reconnect with their last id; the
 * answers being written end (cut after `closeGraceMs` if they do not, as a request whose body never
 * comes); then the connections close. Resolves with the exit code, 0.
 */
export async function serveUntilStopped(
  server: Server,
  host: AnyConversationHost,
  environment: CliEnvironment & { onStop?: (stop: () => void) => () => void },
): Promise<number> {
  const answering = new Set<ServerResponse>();
  server.on('request', (_request: IncomingMessage, response: ServerResponse) => {
    answering.add(response);
    response.once('close', () => answering.delete(response));
  });
  await new Promise<void>((resolve) => {
    const stopSignals = environment.onStop?.(resolve);
    server.once('close', () => stopSignals?.());
  });
  environment.stderr.write('actorloop: stopping\n');
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  await host.close();
  await allEnded(answering, closeGraceMs);
  server.closeAllConnections();
  await closed;
  return 0;
}

/** Resolves once every response of `answering` has ended, or after `timeoutMs`. */
async function allEnded(answering: Set<ServerResponse>, timeoutMs: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const ended = Promise.all([...answering].map((response) => new Promise((resolve) => response.once('close', resolve))));
  await Promise.race([ended, new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
  clearTimeout(timer);
}
