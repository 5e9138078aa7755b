/**
 * A real MCP server for the tests, written with the SDK's own server classes, run as a child process:
 *
 *   node --import tsx test/support/mcp-server.ts stdio          # MCP over stdin/stdout
 *   node --import tsx test/support/mcp-server.ts http           # streamable HTTP on 127.0.0.1, free port
 *   … --paged                                                   # a low-level `Server` that pages its list
 *   … --no-get-stream                                           # http without the standalone SSE stream (405 to GET)
 *   … --port=N                                                  # http on that port (to restart a server in place)
 *   … --env-tool                                                # also a tool `env` answering this process's environment
 *   … --mute-if=FILE                                            # never answers (initialize times out) when FILE exists at start (a restart that hangs); runs until killed
 *   … --ignore-sigterm                                          # only SIGKILL stops it
 *
 * In http mode it prints `listening <port>` on stdout once it accepts connections. Every start is
 * appended (pid and transport) to the file named by MCP_TEST_START_LOG, so a test can count spawns.
 * The `server_log` tool returns what this process saw (calls, cancellations, sessions), so a test
 * can assert what reached the server — including that a call did *not* reach it.
 */
import { randomUUID } from 'node:crypto';
import { appendFileSync, existsSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const mode = process.argv[2] === 'http' ? 'http' : 'stdio';
const paged = process.argv.includes('--paged');
const noGetStream = process.argv.includes('--no-get-stream');
const port = Number(process.argv.find((arg) => arg.startsWith('--port='))?.slice('--port='.length) ?? 0);
const envTool = process.argv.includes('--env-tool');
const muteIf = process.argv.find((arg) => arg.startsWith('--mute-if='))?.slice('--mute-if='.length);
const mute = muteIf !== undefined && existsSync(muteIf);

/** What this process saw, across every session. */
const log = {
  pid: process.pid,
  sessions: 0,
  calls: [] as Array<{ name: string; args: unknown }>,
  cancellations: [] as Array<{ name: string; reason: string }>,
  /** Values of the x-actorloop-test header seen on HTTP requests (to check a source's headers arrive). */
  headers: [] as string[],
  /** How the last client introduced itself (initialize's clientInfo). */
  client: undefined as unknown,
};

if (process.env.MCP_TEST_START_LOG) appendFileSync(process.env.MCP_TEST_START_LOG, `${process.pid} ${mode}\n`);
if (process.argv.includes('--ignore-sigterm')) process.on('SIGTERM', () => undefined);

/** A 1×1 transparent PNG. */
const pixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/** Waits until the request is cancelled (or `ms` pass), recording a cancellation. */
function waitForCancel(name: string, signal: AbortSignal, ms = 600_000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        log.cancellations.push({ name, reason: String(signal.reason) });
        resolve();
      },
      { once: true },
    );
  });
}

function createToolServer(): McpServer {
  const server = new McpServer({ name: 'actorloop-test', version: '1.0.0' });
  server.server.oninitialized = () => {
    log.client = server.server.getClientVersion();
  };
  const record = (name: string, args: unknown) => log.calls.push({ name, args });

  server.registerTool(
    'add',
    { description: 'Add two numbers', inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } },
    ({ a, b }) => {
      record('add', { a, b });
      return { content: [{ type: 'text', text: String(a + b) }] };
    },
  );
  server.registerTool('fail', { description: 'Always fails', inputSchema: { why: z.string().optional() } }, ({ why }) => {
    record('fail', { why });
    throw new Error(`the disk is full${why ? ` (${why})` : ''}`);
  });
  server.registerTool(
    'hang',
    { description: 'Never answers until cancelled', inputSchema: { label: z.string().optional() } },
    async ({ label }, extra) => {
      record('hang', { label });
      await waitForCancel(label ?? 'hang', extra.signal);
      return { content: [{ type: 'text', text: 'too late' }] };
    },
  );
  server.registerTool('picture', { description: 'Draws a picture' }, () => {
    record('picture', {});
    return {
      content: [
        { type: 'text', text: 'Here is the chart.' },
        { type: 'image', data: pixel, mimeType: 'image/png' },
      ],
    };
  });
  server.registerTool('readme', { description: 'Returns a document' }, () => {
    record('readme', {});
    return {
      content: [
        { type: 'resource', resource: { uri: 'file:///srv/readme.md', mimeType: 'text/markdown', text: '# Hello' } },
        { type: 'resource', resource: { uri: 'file:///srv/logo.bin', mimeType: 'application/octet-stream', blob: 'AAEC' } },
        { type: 'resource_link', uri: 'file:///srv/guide.md', name: 'guide', mimeType: 'text/markdown', description: 'The guide' },
      ],
    };
  });
  server.registerTool(
    'weather',
    {
      description: 'Structured weather',
      inputSchema: { city: z.string() },
      outputSchema: { city: z.string(), celsius: z.number() },
    },
    ({ city }) => {
      record('weather', { city });
      const structuredContent = { city, celsius: 21 };
      return { content: [], structuredContent };
    },
  );
  server.registerTool(
    'add_tool',
    { description: 'Offers one more tool (the server then sends notifications/tools/list_changed)', inputSchema: { name: z.string() } },
    ({ name }) => {
      record('add_tool', { name });
      server.registerTool(name, { description: `Added at run time: ${name}`, inputSchema: { x: z.number() } }, ({ x }) => {
        record(name, { x });
        return { content: [{ type: 'text', text: String(x * 2) }] };
      });
      return { content: [{ type: 'text', text: `added ${name}` }] };
    },
  );
  server.registerTool(
    'stubborn',
    { description: 'Ignores cancellation and never answers: only the end of the process ends it' },
    async () => {
      record('stubborn', {});
      await new Promise(() => setInterval(() => undefined, 60_000));
      return { content: [] };
    },
  );
  server.registerTool('server_log', { description: 'What this server process saw (for tests)' }, () => ({
    content: [{ type: 'text', text: JSON.stringify(log) }],
  }));
  if (envTool) {
    server.registerTool('env', { description: "This process's environment (for tests)" }, () => ({
      content: [{ type: 'text', text: JSON.stringify(process.env) }],
    }));
  }
  return server;
}

/** A low-level `Server` that lists 25 tools over pages of 10 and answers `rpc_error` with a JSON-RPC error. */
function createPagedServer(): Server {
  const server = new Server({ name: 'actorloop-paged', version: '1.0.0' }, { capabilities: { tools: {} } });
  const tools: Tool[] = Array.from({ length: 25 }, (_, index) => ({
    name: `tool_${String(index).padStart(2, '0')}`,
    description: `Tool number ${index}`,
    inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  }));
  tools.push({ name: 'rpc_error', description: 'Answers with a JSON-RPC error', inputSchema: { type: 'object' } });
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const start = request.params?.cursor === undefined ? 0 : Number(request.params.cursor);
    const page = tools.slice(start, start + 10);
    return start + 10 < tools.length ? { tools: page, nextCursor: String(start + 10) } : { tools: page };
  });
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    log.calls.push({ name: request.params.name, args: request.params.arguments });
    if (request.params.name === 'rpc_error') throw new McpError(ErrorCode.InternalError, 'the database is on fire');
    if (request.params.name === 'server_log') return { content: [{ type: 'text', text: JSON.stringify(log) }] };
    return { content: [{ type: 'text', text: `${request.params.name}(${JSON.stringify(request.params.arguments)})` }] };
  });
  return server;
}

function connect(transport: Transport): Promise<void> {
  log.sessions++;
  return paged ? createPagedServer().connect(transport) : createToolServer().connect(transport);
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}

async function serveHttp(): Promise<void> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const handle = async (request: IncomingMessage, response: ServerResponse) => {
    if (noGetStream && request.method === 'GET') {
      response.writeHead(405, { allow: 'POST, DELETE' }).end();
      return;
    }
    const header = request.headers['x-actorloop-test'];
    if (typeof header === 'string' && !log.headers.includes(header)) log.headers.push(header);
    const body = request.method === 'POST' ? await readBody(request) : undefined;
    const sessionId = request.headers['mcp-session-id'];
    let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId !== undefined) {
        response
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          sessions.set(id, created);
        },
      });
      created.onclose = () => {
        if (created.sessionId) sessions.delete(created.sessionId);
      };
      await connect(created);
      transport = created;
    }
    await transport.handleRequest(request, response, body);
  };
  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
}

if (mute) setInterval(() => undefined, 60_000);
else if (mode === 'http') await serveHttp();
else await connect(new StdioServerTransport());
