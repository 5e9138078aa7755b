/**
 * The root, `actorloop/http`, `actorloop/ai-sdk` and the memory store on every runtime the package
 * claims: Node (the one running the suite), Bun, Deno and Cloudflare workerd, each from its npm
 * package (`bun`, `deno`, `workerd`: binaries inside the packages, nothing fetched elsewhere).
 *
 * Each runtime serves test/support/runtime-app.ts with its own server (`Bun.serve`, `Deno.serve`,
 * `node:http`, workerd's socket — the worker bundled by esbuild as a Workers user's build does, and
 * run without `nodejs_compat`, so no Node built-in is reached) on a real socket, and this file is
 * its client: a conversation with a tool through the AI SDK UI stream (`POST …/chat`), read to its
 * end, once with the scripted model and once with the real `@ai-sdk/openai-compatible` package
 * calling a local OpenAI-compatible server; a call the tool's JSON Schema refuses, with the very
 * message Node's ajv gives (workerd refuses code generation: the interpreter answers there); the
 * stored conversation; and `actorloop/sqlite`, Node-only, refusing by name.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtTree, supportScript } from './support/built-tree.js';
import { root } from './support/cli-process.js';
import { runtimeToken } from './support/runtime-app.js';
import { runtimeBinary } from './support/runtime-binaries.js';

type Runtime = 'node' | 'bun' | 'deno' | 'workerd';

const binaries = { bun: runtimeBinary('bun'), deno: runtimeBinary('deno'), workerd: runtimeBinary('workerd') };

/** An OpenAI Chat Completions server scripted as runtime-app's handler model is: `add a b` → a call of `add`, then an answer quoting the tool. */
function startModelServer(): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const server = createServer(async (request, response) => {
    requests += 1;
    const body = JSON.parse(await readBody(request)) as { messages: Array<{ role: string; content?: unknown }> };
    const last = body.messages.at(-1);
    const chunk = (delta: object, finish: string | null) =>
      `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 0, model: 'local-model', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    if (last?.role === 'tool') {
      response.write(chunk({ role: 'assistant', content: 'The tool said: ' }, null));
      response.write(chunk({ content: String(last.content) }, null));
      response.write(chunk({}, 'stop'));
    } else {
      const [, a = '0', b = '0'] = String(last?.content ?? '').split(' ');
      const call = {
        index: 0,
        id: 'call_1',
        type: 'function',
        function: { name: 'add', arguments: JSON.stringify({ a: Number(a), b: Number(b) }) },
      };
      response.write(chunk({ role: 'assistant', tool_calls: [call] }, null));
      response.write(chunk({}, 'tool_calls'));
    }
    response.end('data: [DONE]\n\n');
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        requests: () => requests,
        close: () => closeServer(server),
      }),
    ),
  );
}

async function readBody(request: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of request) text += String(chunk);
  return text;
}

const closeServer = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** A port free a moment ago: workerd takes its sockets from its config, not from port 0. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await closeServer(server);
  return port;
}

type Served = { url: string; child: ChildProcess; output: () => string };

/** Starts `command` and waits for `{"listening": url}` on its stdout (or, for workerd, for its socket to answer). */
function serve(command: string, args: string[], options: { cwd?: string; url?: string } = {}): Promise<Served> {
  const child = spawn(command, args, {
    cwd: options.cwd ?? root,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  let output = '';
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    output += text;
  });
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const failed = (why: string) => reject(new Error(`${command} ${args.join(' ')}: ${why}\n${output}`));
    child.on('exit', (code) => failed(`exited with ${code} before serving`));
    // A binary missing from its package (an install that did not finish) is named, not a crash.
    child.on('error', (error) => failed(`could not start (${error.message}): reinstall with npm ci`));
    child.stdout?.on('data', (text: string) => {
      output += text;
      const listening = /\{"listening":"([^"]+)"\}/.exec(output)?.[1];
      if (listening) resolve({ url: listening, child, output: () => output });
    });
    if (options.url) {
      const url = options.url;
      const poll = async () => {
        try {
          await fetch(`${url}/runtime`);
          resolve({ url, child, output: () => output });
        } catch {
          if (Date.now() - started > 20_000) failed('no answer in 20 s');
          else setTimeout(poll, 100);
        }
      };
      void poll();
    }
  });
}

/** Bundles the worker as a Workers build does (ESM, neutral platform, the `workerd` and `worker` conditions) and writes workerd's config beside it. */
async function workerdConfig(folder: string, port: number, modelUrl: string): Promise<string> {
  await build({
    entryPoints: [supportScript('runtime-worker.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['workerd', 'worker', 'browser', 'import'],
    // Node's modules stay imports, as a Workers build leaves them; none may be reached (checked
    // below). better-sqlite3 is imported only by the sqlite probe, which fails by name before.
    external: ['node:*', 'better-sqlite3'],
    outfile: join(folder, 'worker.mjs'),
    logLevel: 'silent',
  });
  // Without nodejs_compat a static import of a Node module fails the whole worker: there is none.
  const bundle = readFileSync(join(folder, 'worker.mjs'), 'utf8');
  expect(bundle.match(/^import .*"node:[^"]+";$/gm) ?? []).toEqual([]);
  const config = join(folder, 'config.capnp');
  writeFileSync(
    config,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker), (name = "loopback", network = (allow = ["local", "private"])) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker.mjs", esModule = embed "worker.mjs") ],
  compatibilityDate = "2025-09-01",
  bindings = [ (name = "MODEL_URL", text = ${JSON.stringify(modelUrl)}) ],
  globalOutbound = "loopback",
);
`,
  );
  return config;
}

/** The optional peers: a Workers app that installed none of them must still build. */
const optionalPeers = [
  'openai',
  '@anthropic-ai/sdk',
  '@modelcontextprotocol/sdk',
  'pg',
  'better-sqlite3',
  'elkjs',
  '@statelyai/inspect',
  'rxjs',
  '@opentelemetry/api',
];

describe('a Workers build of the root, actorloop/http and actorloop/ai-sdk', () => {
  it('bundles with none of the optional peers installed and imports no Node module', async () => {
    const entry = join(folder, 'everything.mjs');
    const tree = builtTree();
    writeFileSync(
      entry,
      ['src/index.js', 'src/http/index.js', 'src/providers/ai-sdk/index.js']
        .map((file) => `export * from ${JSON.stringify(join(tree, file))};`)
        .join('\n'),
    );
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      conditions: ['workerd', 'worker', 'browser', 'import'],
      external: ['node:*'],
      // Resolved nowhere, as in a project that never installed them.
      alias: Object.fromEntries(optionalPeers.map((name) => [name, `/not-installed/${name}`])),
      write: false,
      logLevel: 'silent',
    });
    const bundle = result.outputFiles[0]?.text ?? '';
    expect(bundle.length).toBeGreaterThan(100_000);
    expect(bundle.match(/^import .*"node:[^"]+";$/gm) ?? []).toEqual([]);
  });
});

type UiPart = { type: string; [key: string]: unknown };

/** `POST {base}/chat` as `useChat` sends it; the UI message stream read to `[DONE]`. */
async function chat(base: string, id: string, text: string): Promise<UiPart[]> {
  const response = await fetch(`${base}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${runtimeToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id, trigger: 'submit-message', messages: [{ id: `${id}-m1`, role: 'user', parts: [{ type: 'text', text }] }] }),
  });
  expect(response.status, await response.clone().text()).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/event-stream');
  const body = await response.text();
  const events = body
    .split('\n\n')
    .map((block) => block.replace(/^data: /, '').trim())
    .filter((data) => data !== '');
  expect(events.at(-1), 'the stream ends with [DONE]').toBe('[DONE]');
  return events.slice(0, -1).map((data) => JSON.parse(data) as UiPart);
}

const textOf = (parts: UiPart[]) =>
  parts
    .filter((part) => part.type === 'text-delta')
    .map((part) => part.delta)
    .join('');

const runtimes: Runtime[] = ['node', 'bun', 'deno', 'workerd'];
const folder = mkdtempSync(join(tmpdir(), 'actorloop-runtimes-'));
let model: Awaited<ReturnType<typeof startModelServer>>;
const served = new Map<Runtime, Served>();

beforeAll(async () => {
  model = await startModelServer();
  builtTree();
}, 120_000);

afterAll(async () => {
  for (const { child } of served.values()) child.kill('SIGKILL');
  await model?.close();
  rmSync(folder, { recursive: true, force: true });
});

async function start(runtime: Runtime): Promise<Served> {
  const script = supportScript('runtime-serve.ts');
  switch (runtime) {
    case 'node':
      return serve(process.execPath, [script, model.url]);
    case 'bun':
      return serve(binaries.bun, [script, model.url]);
    case 'deno':
      return serve(binaries.deno, ['run', '--allow-all', '--no-prompt', script, model.url]);
    case 'workerd': {
      const port = await freePort();
      const config = await workerdConfig(folder, port, model.url);
      return serve(binaries.workerd, ['serve', config, '--verbose'], { cwd: folder, url: `http://127.0.0.1:${port}` });
    }
  }
}

describe.each(runtimes)('on %s', (runtime) => {
  let url: string;
  beforeAll(async () => {
    const server = await start(runtime);
    served.set(runtime, server);
    url = server.url;
  }, 60_000);

  afterAll(() => {
    const server = served.get(runtime);
    server?.child.kill('SIGTERM');
    // Whatever the runtime printed: never an uncaught error or an unhandled rejection.
    expect(server?.output() ?? '').not.toMatch(/uncaught|unhandled/i);
  });

  it('is the runtime it claims; actorloop/sqlite refuses by name everywhere but Node', async () => {
    const answer = (await (await fetch(`${url}/runtime`)).json()) as { runtime: string; sqlite: string };
    expect(answer.runtime).toBe(runtime);
    if (runtime === 'node') expect(answer.sqlite).toBe('imported');
    else {
      const label = { bun: 'Bun', deno: 'Deno', workerd: 'Cloudflare workerd' }[runtime];
      expect(answer.sqlite).toBe(
        `UnsupportedRuntimeError: actorloop/sqlite needs Node.js (≥ 20.19) and cannot run on ${label}: use memoryStore() from actorloop, a ConversationStore of your own, or actorloop/postgres from a Node.js process`,
      );
    }
  });

  describe.each(['handler', 'ai-sdk'] as const)('with the %s model', (kind) => {
    const base = () => `${url}/${kind}`;

    it('a conversation with a tool, streamed to its end and stored', async () => {
      const before = model.requests();
      const parts = await chat(base(), 'sum', 'add 2 3');
      expect(parts.map((part) => part.type)).toEqual(
        expect.arrayContaining(['start', 'tool-input-available', 'tool-output-available', 'text-delta', 'finish']),
      );
      expect(parts.find((part) => part.type === 'tool-input-available')).toMatchObject({ toolName: 'add', input: { a: 2, b: 3 } });
      expect(parts.find((part) => part.type === 'tool-output-available')).toMatchObject({ output: '5' });
      expect(textOf(parts)).toBe('The tool said: 5');
      expect(parts.at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
      // Two rounds through the package for the adapter; none for the scripted model.
      expect(model.requests() - before).toBe(kind === 'ai-sdk' ? 2 : 0);

      const stored = await fetch(`${base()}/conversations/sum`, { headers: { authorization: `Bearer ${runtimeToken}` } });
      expect(stored.status).toBe(200);
      expect(await stored.json()).toMatchObject({ id: 'sum', status: 'done' });
    });

    it("a call the tool's JSON Schema refuses: the model reads the same message as on Node", async () => {
      const parts = await chat(base(), 'refused', 'add 2 -3');
      expect(parts.find((part) => part.type === 'tool-output-error')).toMatchObject({
        errorText: 'Error: invalid arguments for tool "add": arguments.b must be >= 0',
      });
      expect(textOf(parts)).toBe('The tool said: Error: invalid arguments for tool "add": arguments.b must be >= 0');
    });
  });
});
