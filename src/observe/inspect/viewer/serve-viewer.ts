import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InvalidOptionsError } from '../../../errors/invalid-options-error.js';
import { toNodeListener } from '../../../http/node-listener.js';
import { option, resolveOptionsWith } from '../../../util/option-schema.js';

/**
 * Where {@link serveViewer} listens.
 *
 * @example
 * ```ts
 * const options: ServeViewerOptions = { port: 4400 };
 * ```
 */
export type ServeViewerOptions = {
  /** The interface to listen on. Default `127.0.0.1`: only this machine can open the page. */
  host?: string;
  /** The port. Default `0`: a free port (read it from `url`). */
  port?: number;
};

/**
 * A viewer being served: open `url` in a browser.
 *
 * @example
 * ```ts
 * const served: ServedViewer = await serveViewer(createViewerHandler(host));
 * console.log(served.url);
 * ```
 */
export type ServedViewer = {
  /** The page, e.g. `http://127.0.0.1:41234/`. */
  url: string;
  port: number;
  /**
   * Closes the server: streams already ended (the handler's `close()`) finish, any other open stream
   * is cut after a second. The handler and what it shows stay as they are.
   */
  close(): Promise<void>;
};

const serveOptionsSchema = option.object(
  {
    host: option.withDefault(option.string({ nonEmpty: true, expected: 'a host name or IP address' }), '127.0.0.1'),
    port: option.withDefault(option.integer({ minimum: 0, maximum: 65_535, expected: 'an integer from 0 (a free port) to 65535' }), 0),
  },
  { expected: 'an object { host?, port? }', unknownKeys: 'ignore' },
);

/**
 * Serves a viewer handler (`createViewerHandler(...)`) on a port of this machine with `node:http`.
 * Elsewhere — Bun, Deno, a Worker, your own server — mount the handler itself: it is a Fetch API
 * handler.
 *
 * @example
 * ```ts
 * import { createViewerHandler, serveViewer } from 'actorloop/inspect';
 *
 * const served = await serveViewer(createViewerHandler([host, actor]), { port: 4400 });
 * console.log(`open ${served.url}`);
 * ```
 */
export async function serveViewer(
  handler: (request: Request) => Promise<Response>,
  options: ServeViewerOptions = {},
): Promise<ServedViewer> {
  if (typeof handler !== 'function') throw new InvalidOptionsError('handler', 'a viewer handler from createViewerHandler(...)', handler);
  const { host, port: listenPort } = resolveOptionsWith(serveOptionsSchema, options, 'options');
  const server = createServer(toNodeListener(handler));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Errors of single connections (a page closed mid-write) are the client's business.
  server.on('clientError', (_error, socket) => socket.destroy());
  const { port } = server.address() as AddressInfo;
  const anyHost = host === '0.0.0.0' || host === '::';
  const urlHost = anyHost ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${urlHost}:${port}/`,
    port,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        // Streams the handler ended (its close()) get to send their last bytes: connections are
        // closed as they go idle, and whatever is still open after a second is cut.
        const idle = setInterval(() => server.closeIdleConnections(), 10);
        const cut = setTimeout(() => server.closeAllConnections(), 1_000);
        server.close(() => {
          clearInterval(idle);
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
