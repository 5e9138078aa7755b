import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeListener } from '../../http/node-listener.js';

/**
 * A running A2A server: where it listens, and how to stop it.
 *
 * @example
 * ```ts
 * const server: A2AServer = await serveA2A(a2a, { port: 4000 });
 * await server.close();
 * ```
 */
export type A2AServer = {
  /** `http://<host>:<port>`: the agent card is at `{url}{basePath}/.well-known/agent-card.json`. */
  url: string;
  port: number;
  /** Stops taking connections, ends the open ones (streams included) and resolves once it is closed. */
  close(): Promise<void>;
};

/**
 * Serves a Fetch API handler — `createA2AHandler`'s, or one that composes it with others — on
 * `node:http` (through `actorloop/http`'s `toNodeListener`). `port` 0 picks a free one.
 *
 * @example
 * ```ts
 * const server = await serveA2A(a2a, { port: 4000, host: '0.0.0.0' });
 * console.log(server.url);
 * ```
 */
export async function serveA2A(
  handler: (request: Request) => Promise<Response>,
  options: { port: number; host?: string; onError?: (error: unknown) => void },
): Promise<A2AServer> {
  const server = createServer(toNodeListener(handler, options.onError ? { onError: options.onError } : {}));
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const shown = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shown}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
