/**
 * Serves `runtimeApp` with the runtime's own server — `Bun.serve`, `Deno.serve`, or `node:http`
 * through `toNodeListener` — on 127.0.0.1 and a free port, and prints `{"listening": url}` once it
 * accepts connections. Argument: the model server's base URL (`…/v1`).
 * Runs from the built tree (test/support/built-tree.ts), so each runtime loads plain JavaScript.
 */
import { runtimeApp } from './runtime-app.js';

type Fetch = (request: Request) => Promise<Response>;
type BunGlobal = { serve(options: { port: number; hostname: string; fetch: Fetch }): { port: number } };
type DenoGlobal = {
  serve(options: { port: number; hostname: string; onListen(address: { port: number }): void }, handler: Fetch): unknown;
};

const fetch = runtimeApp(process.argv[2] ?? 'http://127.0.0.1:9/v1');
const announce = (port: number) => console.log(JSON.stringify({ listening: `http://127.0.0.1:${port}` }));

const globals = globalThis as { Bun?: BunGlobal; Deno?: DenoGlobal };
if (globals.Bun) {
  announce(globals.Bun.serve({ port: 0, hostname: '127.0.0.1', fetch }).port);
} else if (globals.Deno) {
  globals.Deno.serve({ port: 0, hostname: '127.0.0.1', onListen: ({ port }) => announce(port) }, fetch);
} else {
  const { createServer } = await import('node:http');
  const { toNodeListener } = await import('../../src/http/index.js');
  const server = createServer(toNodeListener(fetch)).listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address && typeof address === 'object') announce(address.port);
  });
}
