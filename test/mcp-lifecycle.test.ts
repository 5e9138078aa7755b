/**
 * The life of an MCP connection under real faults: a stdio server killed mid-call and between
 * calls, an HTTP server killed mid-call and restarted, the server's tool list changing, close().
 */
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { InvalidOptionsError, type ToolResultEvent } from '../src/index.js';
import { type McpToolSet, McpToolError, mcpTools } from '../src/tools/mcp/index.js';
import { callContext } from './support/call-context.js';
import {
  eventually,
  type HttpServer,
  isRunning,
  muteStdioSource,
  serverLog,
  startHttpServer,
  startLog,
  stdioSource,
} from './support/mcp-servers.js';
import { eventsOf, expectValidHistory, runConversation } from './support/run-conversation.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A tool set closed after the test. */
async function openSet(...args: Parameters<typeof mcpTools>): Promise<McpToolSet> {
  const set = await mcpTools(...args);
  cleanups.push(() => set.close());
  return set;
}

function starts() {
  const log = startLog();
  cleanups.push(log.remove);
  return log;
}

async function httpServer(options: Parameters<typeof startHttpServer>[0] = {}): Promise<HttpServer> {
  const server = await startHttpServer(options);
  cleanups.push(() => server.stop());
  return server;
}

const results = (events: Parameters<typeof eventsOf>[0]) =>
  eventsOf(events, 'tool.result').map((event: ToolResultEvent) => `${event.name}${event.isError ? ' (error)' : ''}: ${event.result}`);

describe('a stdio server that dies', () => {
  it('killed mid-call: the call gets an error result at once, and the next call starts the server again', async () => {
    const log = starts();
    const set = await openSet(stdioSource({ startLog: log.path }));
    const first = log.starts();
    expect(first).toHaveLength(1);

    const started = Date.now();
    const { output, events } = await runConversation(
      [
        { toolCalls: [{ id: 'c1', name: 'hang', args: {} }] },
        { toolCalls: [{ id: 'c2', name: 'add', args: { a: 20, b: 22 } }] },
        { text: '42' },
      ],
      {
        tools: set.tools,
        toolTimeoutMs: 15_000,
        onStart: (actor) =>
          actor.on('tool.call', (event) => {
            if (event.name === 'hang') setTimeout(() => process.kill(first[0]!, 'SIGKILL'), 200);
          }),
      },
    );
    // Well before the 15 s timeout: the dead process closed the connection.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(output.status).toBe('done');
    expect(results(events)).toEqual([
      'hang (error): Error: McpToolError: the connection to the stdio server "node" closed before it answered; the next call reconnects',
      'add: 42',
    ]);
    expectValidHistory(output.messages);
    const restarted = log.starts();
    expect(restarted).toHaveLength(2);
    expect(restarted[1]).not.toBe(first[0]);
    expect((await serverLog(set.tools)).pid).toBe(restarted[1]);
  });

  it('killed between calls: nothing restarts it until a call needs it (lazy), and onError is told', async () => {
    const log = starts();
    const errors: Error[] = [];
    const set = await openSet(stdioSource({ startLog: log.path }), { onError: (error) => errors.push(error) });
    const [pid] = log.starts();
    process.kill(pid!, 'SIGKILL');
    await eventually(() => errors.length > 0, 5_000, 'onError to hear of the lost connection');
    expect(McpToolError.isInstance(errors[0]) && errors[0].kind).toBe('connection');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(log.starts()).toHaveLength(1);
    const add = set.tools.find((tool) => tool.name === 'add')!;
    expect(await add.execute({ a: 1, b: 2 }, callContext())).toBe('3');
    expect(log.starts()).toHaveLength(2);
  });

  it('a server that cannot start: mcpTools rejects naming it; a restart that fails gives an error result, and the next call tries again', async () => {
    await expect(mcpTools({ command: 'actorloop-no-such-mcp-server' })).rejects.toThrow(
      /could not connect to the stdio server "actorloop-no-such-mcp-server": spawn actorloop-no-such-mcp-server ENOENT/,
    );
  });
});

describe('an HTTP server that dies', () => {
  it('killed mid-call: the call gets an error result at once (not at its timeout); after a restart the next call opens a new session', async () => {
    const log = starts();
    const server = await httpServer({ startLog: log.path });
    const set = await openSet(server.source);
    const started = Date.now();
    const { output, events } = await runConversation([{ toolCalls: [{ id: 'c1', name: 'hang', args: {} }] }, { text: 'gone' }], {
      tools: set.tools,
      toolTimeoutMs: 15_000,
      onStart: (actor) => actor.on('tool.call', () => setTimeout(() => void server.stop(), 200)),
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(output.status).toBe('done');
    expect(results(events)).toEqual([
      `hang (error): Error: McpToolError: the connection to the HTTP server http://127.0.0.1:${server.port} closed before it answered; the next call reconnects`,
    ]);

    // While it is down, a call fails with an error result naming the server…
    const add = set.tools.find((tool) => tool.name === 'add')!;
    await expect(add.execute({ a: 1, b: 1 }, callContext())).rejects.toThrow(/could not connect to the HTTP server/);
    // …and once it is back on its port, the next call works on a new session.
    await httpServer({ startLog: log.path, port: server.port });
    expect(await add.execute({ a: 1, b: 1 }, callContext())).toBe('2');
    expect(log.starts()).toHaveLength(2);
  });

  for (const noGetStream of [false, true]) {
    it(`restarted between calls (its session is gone), ${noGetStream ? 'no event stream: the 404 answer' : 'its event stream breaking'} makes the next call open a new session, where it runs once`, async () => {
      const server = await httpServer({ noGetStream });
      const set = await openSet(server.source);
      await server.stop();
      await httpServer({ port: server.port, noGetStream });
      const add = set.tools.find((tool) => tool.name === 'add')!;
      expect(await add.execute({ a: 2, b: 2 }, callContext())).toBe('4');
      const log = await serverLog(set.tools);
      expect(log.calls).toEqual([{ name: 'add', args: { a: 2, b: 2 } }]);
      expect(log.sessions).toBe(1);
    });
  }
});

describe('tools/list_changed', () => {
  for (const name of ['stdio', 'http'] as const) {
    it(`${name}: the list is refreshed; machines created afterwards get the new tool, the old array is left as it was`, async () => {
      const source = name === 'stdio' ? stdioSource() : (await httpServer()).source;
      const set = await openSet(source, { prefix: 'srv_' });
      const before = set.tools;
      const changed = new Promise<ReadonlyArray<unknown>>((resolve) => set.onToolsChanged(resolve));
      const addTool = set.tools.find((tool) => tool.name === 'srv_add_tool')!;
      expect(await addTool.execute({ name: 'double' }, callContext())).toBe('added double');

      const tools = await changed;
      expect(tools).toBe(set.tools);
      expect(set.tools.map((tool) => tool.name)).toContain('srv_double');
      expect(before.map((tool) => tool.name)).not.toContain('srv_double');

      const { output, events } = await runConversation(
        [{ toolCalls: [{ id: 'c1', name: 'srv_double', args: { x: 21 } }] }, { text: '42' }],
        { tools: set.tools },
      );
      expect(output.status).toBe('done');
      expect(results(events)).toEqual(['srv_double: 42']);
      // A refresh that finds the same list keeps the same array: a cached machine stays valid.
      const again = set.tools;
      expect(await set.refresh()).toBe(again);
    });
  }
});

describe('close()', () => {
  /** Resolves once the server has the call: before, close() could outrun the call, not wait for it. */
  const serverHas = (set: McpToolSet, name: string) =>
    eventually(async () => (await serverLog(set.tools)).calls.some((call) => call.name === name), 10_000, `the server to get ${name}`);

  it('a call in flight gets its error result at once, while the server still runs; close() resolves with the server gone; later calls fail', async () => {
    const log = starts();
    const set = await mcpTools(stdioSource({ startLog: log.path }));
    const [pid] = log.starts();
    let closing: Promise<void> | undefined;
    let serverRanAtResult: boolean | undefined;
    const { output, events } = await runConversation([{ toolCalls: [{ id: 'c1', name: 'stubborn', args: {} }] }, { text: 'closed' }], {
      tools: set.tools,
      onStart: (actor) => {
        actor.on('tool.call', () => {
          void serverHas(set, 'stubborn').then(() => {
            closing = set.close();
          });
        });
        actor.on('tool.result', () => {
          serverRanAtResult = isRunning(pid!);
        });
      },
    });
    expect(output.status).toBe('done');
    expect(results(events)).toEqual([
      'stubborn (error): Error: McpToolError: the MCP tool set was closed (close() was called); this tool cannot be called any more',
    ]);
    // The tool never answers and keeps its server from exiting on a closed stdin: the result did
    // not wait for the tool, nor for the server to be stopped.
    expect(serverRanAtResult).toBe(true);
    await closing;
    expect(isRunning(pid!)).toBe(false);
    await set.close();
    const add = set.tools.find((tool) => tool.name === 'add')!;
    await expect(add.execute({ a: 1, b: 1 }, callContext())).rejects.toMatchObject({ kind: 'closed' });
    await expect(set.refresh()).rejects.toMatchObject({ kind: 'closed' });
    expect(log.starts()).toHaveLength(1);
  });

  it('a server that ignores SIGTERM is killed: close() resolves once it is gone', async () => {
    const log = starts();
    const set = await mcpTools(stdioSource({ startLog: log.path, flags: ['--ignore-sigterm'] }));
    const [pid] = log.starts();
    const stubborn = set.tools.find((tool) => tool.name === 'stubborn')!;
    const call = Promise.resolve(stubborn.execute({}, callContext())).catch((error: unknown) => error);
    await serverHas(set, 'stubborn');
    await set.close();
    // Gone when close() resolves, not merely signalled.
    expect(isRunning(pid!)).toBe(false);
    expect(await call).toMatchObject({ kind: 'closed' });
  });

  it('during a reconnect to a server that never answers: close() does not wait for it; the waiting call gets its error result; the server is stopped', async () => {
    const log = starts();
    const mute = `${log.path}.mute`;
    const errors: Error[] = [];
    // A connect timeout close() must not sit out.
    const set = await mcpTools(stdioSource({ startLog: log.path, flags: [`--mute-if=${mute}`] }), {
      connectTimeoutMs: 600_000,
      onError: (error) => errors.push(error),
    });
    const [first] = log.starts();
    writeFileSync(mute, '');
    process.kill(first!, 'SIGKILL');
    await eventually(() => errors.length > 0, 5_000, 'the lost connection to be noticed');
    const add = set.tools.find((tool) => tool.name === 'add')!;
    const call = Promise.resolve(add.execute({ a: 1, b: 1 }, callContext())).catch((error: unknown) => error);
    await eventually(() => log.starts().length === 2, 10_000, 'the server to be started again');
    const second = log.starts()[1]!;
    await set.close();
    expect(await call).toMatchObject({ kind: 'closed' });
    expect(isRunning(second)).toBe(false);
  });

  it('ends an HTTP session (the server forgets it)', async () => {
    const server = await httpServer();
    const set = await mcpTools(server.source);
    const other = await openSet(server.source);
    await set.close();
    // The server closed the session: a second set on the same server still works, and saw 2 sessions.
    expect((await serverLog(other.tools)).sessions).toBe(2);
  });
});

describe('timeouts say what was waited for', () => {
  it('a stdio server that never answers initialize: mcpTools rejects naming the request and the option; the server is stopped', async () => {
    const log = starts();
    // Long enough for the server to have started (and logged its pid) when the wait ends: it imports nothing.
    const error = await mcpTools(muteStdioSource(log.path), { connectTimeoutMs: 2_000 }).catch((caught: unknown) => caught);
    expect(McpToolError.isInstance(error) && error.kind).toBe('connection');
    expect((error as Error).message).toBe(
      'could not connect to the stdio server "node": it did not answer initialize within 2000 ms (connectTimeoutMs)',
    );
    const pids = log.starts();
    expect(pids).toHaveLength(1);
    expect(isRunning(pids[0]!)).toBe(false);
  });
});

describe("a stdio server's environment", () => {
  /** Sets variables of this process for the test (a stdio server is started from them). */
  function withEnv(values: Record<string, string>) {
    const saved = Object.fromEntries(Object.keys(values).map((name) => [name, process.env[name]]));
    Object.assign(process.env, values);
    cleanups.push(() => {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    });
  }

  const serverEnv = async (set: McpToolSet) =>
    JSON.parse(String(await set.tools.find((tool) => tool.name === 'env')!.execute({}, callContext()))) as Record<string, string>;

  /** Proxy and CA variables; the CA file exists (empty) so that the Node server loads it without a warning. */
  function networkEnv() {
    const ca = `${starts().path}.ca.pem`;
    writeFileSync(ca, '');
    return {
      HTTPS_PROXY: 'http://proxy.example:3128',
      http_proxy: 'http://proxy.example:3128',
      no_proxy: 'localhost,127.0.0.1',
      NODE_EXTRA_CA_CERTS: ca,
      SSL_CERT_DIR: '/etc/ssl/certs',
    };
  }

  it('gets the SDK default, the proxy and CA variables of this process, and env on top (env wins); nothing else', async () => {
    const network = networkEnv();
    withEnv({ ...network, NODE_OPTIONS: '--no-deprecation', ACTORLOOP_TEST_SECRET: 'not for servers' });
    const set = await openSet(stdioSource({ flags: ['--env-tool'], env: { MCP_TEST_GIVEN: 'given', SSL_CERT_DIR: '/srv/certs' } }));
    const env = await serverEnv(set);
    expect(env).toMatchObject({ ...network, SSL_CERT_DIR: '/srv/certs', MCP_TEST_GIVEN: 'given', PATH: process.env.PATH });
    expect(env.ACTORLOOP_TEST_SECRET).toBeUndefined();
    expect(env.NODE_OPTIONS).toBeUndefined();
  });

  it('inheritNetworkEnv: false leaves the server only the SDK default and env', async () => {
    const network = networkEnv();
    withEnv(network);
    const set = await openSet(stdioSource({ flags: ['--env-tool'], env: { MCP_TEST_GIVEN: 'given' }, inheritNetworkEnv: false }));
    const env = await serverEnv(set);
    expect(env).toMatchObject({ MCP_TEST_GIVEN: 'given', PATH: process.env.PATH });
    for (const name of Object.keys(network)) expect(env[name], name).toBeUndefined();
  });
});

describe('bad input', () => {
  it('include naming a tool the server does not offer: InvalidOptionsError listing what it offers, and the server is stopped', async () => {
    const log = starts();
    const error = await mcpTools(stdioSource({ startLog: log.path }), { include: ['add', 'ad'] }).catch((caught: unknown) => caught);
    expect(InvalidOptionsError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /Invalid option include: expected names of tools the server offers \(add, fail, hang.*\), got "ad"/,
    );
    const [pid] = log.starts();
    await eventually(() => !isRunning(pid!), 10_000, 'the server process to exit');
  });
});
