import { execFile } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { WebSocketServer } from 'ws';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { createConversationMachine, defineTool, handlerProvider, InvalidOptionsError } from '../src/index.js';
import { createStatelyInspector, redactContent, type StatelyInspector } from '../src/observe/inspect/index.js';
import { supportScript } from './support/built-tree.js';
import { scriptedModel } from './support/scripted-model.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** A real WebSocket server on 127.0.0.1 (a free port) that records what inspectors send. */
async function recordingServer() {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const messages: string[] = [];
  let connections = 0;
  let closed = 0;
  server.on('connection', (socket) => {
    connections++;
    socket.on('message', (data) => messages.push(data.toString()));
    socket.on('close', () => closed++);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `ws://127.0.0.1:${port}`,
    messages,
    parsed: () => messages.map((message) => JSON.parse(message) as Record<string, unknown> & { type: string }),
    stats: () => ({ connections, closed }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const client of server.clients) client.terminate();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function until(check: () => boolean, what: string, timeoutMs = 5000) {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const secret = {
  question: 'SECRET-QUESTION what is 2+3',
  argument: 'SECRET-ARGUMENT',
  result: 'SECRET-RESULT',
  answer: 'SECRET-ANSWER five',
  session: 'SECRET-SESSION',
};

/** One tool round whose every piece of content carries a marker the sanitizer must drop. */
async function inspectedRun(inspector: StatelyInspector) {
  const model = scriptedModel([{ toolCalls: [{ id: 'c1', name: 'echo', args: { note: secret.argument } }] }, { text: secret.answer }]);
  const echo = defineTool({
    name: 'echo',
    description: 'echo',
    parameters: z.object({ note: z.string() }),
    execute: async () => secret.result,
  });
  const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [echo] });
  const actor = createActor(machine, {
    input: { messages: [], sessionData: { note: secret.session } },
    inspect: inspector.inspect,
  }).start();
  actor.send({ type: 'user.message', content: secret.question });
  return toPromise(actor);
}

const servers: Array<{ close: () => Promise<void> }> = [];
const inspectors: StatelyInspector[] = [];
afterEach(async () => {
  for (const inspector of inspectors.splice(0)) await inspector.stop();
  for (const server of servers.splice(0)) await server.close();
});

async function setup(options: Parameters<typeof createStatelyInspector>[0] = {}) {
  const server = await recordingServer();
  servers.push(server);
  const inspector = await createStatelyInspector({ url: server.url, ...options });
  inspectors.push(inspector);
  return { server, inspector };
}

/** The state values the inspector reported for the conversation actor, in order, without repeats. */
function reportedPath(events: Array<Record<string, unknown>>, sessionId: string): string[] {
  const values = events
    .filter((event) => event.type === '@xstate.snapshot' && event.sessionId === sessionId)
    .map((event) => JSON.stringify((event.snapshot as { value: unknown }).value));
  return values.filter((value, index) => value !== values[index - 1]);
}

describe('the Stately inspector over a real WebSocket server', () => {
  it('streams the machine, the events it receives and each snapshot, in the @statelyai/inspect format', async () => {
    const { server, inspector } = await setup();
    const output = await inspectedRun(inspector);
    expect(output.status).toBe('done');
    await until(
      () => server.parsed().some((event) => event.type === '@xstate.snapshot' && JSON.stringify(event).includes('"value":"done"')),
      'the final snapshot',
    );
    const events = server.parsed();
    const conversation = events.find((event) => event.type === '@xstate.actor' && event.name === 'conversation');
    expect(conversation).toMatchObject({ _version: expect.any(String), sessionId: expect.any(String) });
    expect(JSON.parse(conversation?.definition as string)).toMatchObject({ id: 'conversation', initial: 'idle' });
    const sessionId = conversation?.sessionId as string;
    expect(reportedPath(events, sessionId)).toEqual([
      '"idle"',
      '{"requesting":"waiting"}',
      '{"executingTools":"running"}',
      '{"requesting":"waiting"}',
      '"done"',
    ]);
    const received = events
      .filter((event) => event.type === '@xstate.event' && event.sessionId === sessionId)
      .map((event) => (event.event as { type: string }).type);
    expect(received).toContain('user.message');
    expect(received).toContain('xstate.done.actor.providerCall');
    // The child actors (provider calls, tool executions) are reported too.
    expect(events.filter((event) => event.type === '@xstate.actor').map((event) => event.name)).toEqual(
      expect.arrayContaining(['conversation', 'providerCall', 'toolCall-1-0']),
    );
  });

  it('drops message content, tool arguments and results and sessionData by default, keeping the shape', async () => {
    const { server, inspector } = await setup();
    await inspectedRun(inspector);
    await until(() => server.messages.some((message) => message.includes('"value":"done"')), 'the final snapshot');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const all = server.messages.join('\n');
    for (const marker of Object.values(secret)) expect(all).not.toContain(marker.split(' ')[0]);
    expect(all).toContain('[redacted]');
    // What is left still tells the story: roles, tool names, state values, usage.
    expect(all).toContain('"role":"user"');
    expect(all).toContain('"toolName":"echo"');
    expect(all).toContain('"totalTokens"');
  });

  it('sends everything with sanitize: false', async () => {
    const { server, inspector } = await setup({ sanitize: false });
    await inspectedRun(inspector);
    await until(() => server.messages.some((message) => message.includes('"value":"done"')), 'the final snapshot');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const all = server.messages.join('\n');
    for (const marker of Object.values(secret)) expect(all).toContain(marker);
  });

  it('takes a sanitizer of your own; one that throws drops that event and reports it, the run goes on', async () => {
    const errors: Error[] = [];
    let calls = 0;
    const { server, inspector } = await setup({
      onError: (error) => errors.push(error),
      sanitize: (event) => {
        calls++;
        if (calls === 2) throw new Error('sanitizer bug');
        return redactContent(event);
      },
    });
    const output = await inspectedRun(inspector);
    expect(output.status).toBe('done');
    await until(() => server.messages.some((message) => message.includes('"value":"done"')), 'the final snapshot');
    expect(errors.map((error) => error.message)).toEqual(['sanitizer bug']);
  });

  it('keeps events while no server listens and sends them once one does', async () => {
    const port = await closedPort();
    const errors: Error[] = [];
    const inspector = await createStatelyInspector({
      url: `ws://127.0.0.1:${port}`,
      reconnectDelayMs: 20,
      onError: (error) => errors.push(error),
    });
    inspectors.push(inspector);
    const output = await inspectedRun(inspector);
    expect(output.status).toBe('done');
    await until(() => errors.length > 0, 'a connection error');
    expect(errors[0]?.message).toMatch(/ECONNREFUSED/);
    const server = new WebSocketServer({ host: '127.0.0.1', port });
    const messages: string[] = [];
    server.on('connection', (socket) => socket.on('message', (data) => messages.push(data.toString())));
    servers.push({ close: () => new Promise((resolve) => server.close(() => resolve())) });
    await until(() => messages.some((message) => message.includes('"value":"done"')), 'the buffered events', 10_000);
    expect(messages.some((message) => message.includes('"type":"@xstate.actor"'))).toBe(true);
  });

  it('stop() closes the connection', async () => {
    const { server, inspector } = await setup();
    await inspectedRun(inspector);
    await until(() => server.stats().connections === 1, 'the connection');
    await inspector.stop();
    await until(() => server.stats().closed === 1, 'the close');
  });

  it('names a wrong option', async () => {
    await expect(createStatelyInspector({ url: 'http://localhost:8080' })).rejects.toThrow(InvalidOptionsError);
    await expect(createStatelyInspector({ url: 'http://localhost:8080' })).rejects.toThrow(
      /url: expected a ws:\/\/ or wss:\/\/ URL, got "http/,
    );
    // @ts-expect-error: not a transport
    await expect(createStatelyInspector({ transport: 'carrier-pigeon' })).rejects.toThrow(/transport: expected "websocket" or "browser"/);
    await expect(createStatelyInspector({ maxBufferedEvents: -1 })).rejects.toThrow(/maxBufferedEvents/);
    const cases: Array<[unknown, string, string]> = [
      [null, 'options', 'Invalid option options: expected an object, got null'],
      [{ sanitize: 'yes' }, 'sanitize', 'Invalid option sanitize: expected true, false or a function (event) => event, got "yes"'],
      [{ maxBufferedEvents: 1.5 }, 'maxBufferedEvents', 'Invalid option maxBufferedEvents: expected an integer ≥ 0, got 1.5'],
      [{ reconnectDelayMs: 0 }, 'reconnectDelayMs', 'Invalid option reconnectDelayMs: expected a number of milliseconds ≥ 1, got 0'],
      [{ onError: 'log' }, 'onError', 'Invalid option onError: expected a function, got "log"'],
    ];
    for (const [options, option, message] of cases) {
      await expect(createStatelyInspector(options as never)).rejects.toMatchObject({ option, message });
    }
  });
});

describe('the Node pitfalls', () => {
  it('the browser transport is a no-op in Node: no window opened, nothing logged, the run unaffected', async () => {
    const logged = vi.spyOn(console, 'error');
    const inspector = await createStatelyInspector({ transport: 'browser' });
    expect(inspector.active).toBe(false);
    const output = await inspectedRun(inspector);
    expect(output.status).toBe('done');
    await inspector.stop();
    expect(logged).not.toHaveBeenCalled();
    logged.mockRestore();
  });

  it('a process streaming to a WebSocket inspector with no server exits on its own, without an error', async () => {
    const port = await closedPort();
    const started = Date.now();
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [supportScript('inspector-child.ts'), `ws://127.0.0.1:${port}`],
      {
        cwd: root,
        timeout: 20_000,
      },
    );
    expect(JSON.parse(stdout)).toMatchObject({ status: 'done' });
    expect(JSON.parse(stdout).errors).toBeGreaterThan(0);
    expect(stderr).toBe('');
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 30_000);

  it('a process connected to a live inspector exits on its own too, without calling stop()', async () => {
    const server = await recordingServer();
    servers.push(server);
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [supportScript('inspector-child.ts'), server.url], {
      cwd: root,
      timeout: 20_000,
    });
    expect(JSON.parse(stdout)).toEqual({ status: 'done', errors: 0 });
    expect(stderr).toBe('');
    expect(server.messages.some((message) => message.includes('"value":"done"'))).toBe(true);
  }, 30_000);
});
