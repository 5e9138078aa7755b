import { afterEach } from 'vitest';
import { startWireServer, type WireServer, type WireStep } from './wire-server.js';

/**
 * A `serve(steps)` for one test file: each wire server it starts is closed after the test that
 * started it, whether the test passed or not.
 *
 * @example
 * ```ts
 * const serve = serveEachTest();
 * const server = await serve([openaiSse(chunks)]);
 * ```
 */
export function serveEachTest(): (steps: WireStep[]) => Promise<WireServer> {
  const servers: WireServer[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.close()));
  });
  return async (steps) => {
    const server = await startWireServer(steps);
    servers.push(server);
    return server;
  };
}
