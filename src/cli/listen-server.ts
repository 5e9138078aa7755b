import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ConversationHost } from '../host/conversation-host.js';
import type { CliEnvironment } from './run-command.js';

/**
 * Starts `server` on `hostname:port` and resolves with its origin (`http://127.0.0.1:8787`, an IPv6
 * address in brackets). When it cannot listen (the port in use), the host it serves is closed before
 * the error goes on: a command that cannot serve leaves nothing open.
 */
export async function listenServer(server: Server, port: number, hostname: string, host: ConversationHost): Promise<string> {
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

/**
 * Serves until SIGINT/SIGTERM (`environment.onStop`) or the server closes, then closes the server —
 * its open event streams too, which would keep it waiting for ever; their clients resume elsewhere —
 * and the host. Resolves with the exit code, 0.
 */
export async function serveUntilStopped(
  server: Server,
  host: ConversationHost,
  environment: CliEnvironment & { onStop?: (stop: () => void) => () => void },
): Promise<number> {
  await new Promise<void>((resolve) => {
    const stopSignals = environment.onStop?.(resolve);
    server.once('close', () => stopSignals?.());
  });
  environment.stderr.write('actorloop: stopping\n');
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await host.close();
  return 0;
}
