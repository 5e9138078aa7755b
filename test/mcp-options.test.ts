/**
 * mcpTools' options, names, result text and bad input, against real SDK servers linked to a Client
 * in this process (the SDK's InMemoryTransport) — the path of a Client the user connected.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InvalidOptionsError, type ToolResultEvent } from '../src/index.js';
import { McpToolError, mcpResultContent, mcpResultText, mcpTools } from '../src/tools/mcp/index.js';
import { isToolContent } from '../src/index.js';
import { modelToolNames } from '../src/tools/mcp/tool-names.js';
import { callContext } from './support/call-context.js';
import { eventsOf, runConversation } from './support/run-conversation.js';

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

/** A Client connected in memory to `server`, as a user would hand it over. */
async function connected(server: McpServer | Server): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

function fileServer(): McpServer {
  const server = new McpServer({ name: 'files', version: '1.0.0' });
  server.registerTool(
    'read_file',
    { description: 'Read a file', inputSchema: { path: z.string() }, annotations: { readOnlyHint: true } },
    ({ path }) => ({ content: [{ type: 'text', text: `contents of ${path}` }] }),
  );
  server.registerTool(
    'write_file',
    { description: 'Write a file', inputSchema: { path: z.string(), text: z.string() }, annotations: { destructiveHint: true } },
    ({ path }) => ({ content: [{ type: 'text', text: `wrote ${path}` }], structuredContent: undefined }),
  );
  server.registerTool('files.search', { title: 'Search files', inputSchema: { query: z.string() } }, ({ query }) => ({
    content: [{ type: 'text', text: `found ${query}` }],
  }));
  return server;
}

/** A low-level server answering tools/list with `list` (or a function of the cursor). */
function listServer(list: (cursor: string | undefined) => ListToolsResult | Promise<ListToolsResult>): Server {
  const server = new Server({ name: 'listing', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, (request) => list(request.params?.cursor));
  server.setRequestHandler(CallToolRequestSchema, (request) => ({ content: [{ type: 'text', text: `ran ${request.params.name}` }] }));
  return server;
}

const results = (events: Parameters<typeof eventsOf>[0]) =>
  eventsOf(events, 'tool.result').map((event: ToolResultEvent) => `${event.name}${event.isError ? ' (error)' : ''}: ${event.result}`);

describe('a Client the user connected', () => {
  it('is used as it is; close() stops using it but leaves it open', async () => {
    const client = await connected(fileServer());
    const set = await mcpTools(client);
    expect(set.tools.map((tool) => tool.name)).toEqual(['read_file', 'write_file', 'files_search']);
    expect(await set.tools[0]!.execute({ path: 'a.txt' }, callContext())).toBe('contents of a.txt');
    await set.close();
    await expect(set.tools[0]!.execute({ path: 'a.txt' }, callContext())).rejects.toMatchObject({ kind: 'closed' });
    expect((await client.listTools()).tools).toHaveLength(3);
  });

  it('close() gives a call in flight its error result at once, while the tool still runs on the server', async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let running: () => void = () => undefined;
    const started = new Promise<void>((resolve) => {
      running = resolve;
    });
    const server = new McpServer({ name: 'slow', version: '1.0.0' });
    server.registerTool('slow', { description: 'Answers when the test says so' }, async () => {
      running();
      await released;
      return { content: [{ type: 'text', text: 'too late' }] };
    });
    const set = await mcpTools(await connected(server));
    let outcome: unknown = 'pending';
    const call = Promise.resolve(set.tools[0]!.execute({}, callContext())).then(
      (value: unknown) => {
        outcome = value;
      },
      (error: unknown) => {
        outcome = error;
      },
    );
    await started;
    await set.close();
    await new Promise((resolve) => setImmediate(resolve));
    expect(outcome).toMatchObject({ kind: 'closed' });
    release();
    await call;
  });

  it('a Client that is not connected is refused with InvalidOptionsError', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' });
    await expect(mcpTools(client)).rejects.toThrow(
      'Invalid option source: expected a connected Client (await client.connect(transport) first)',
    );
  });
});

describe('per-tool options', () => {
  it('needsApproval by name list, and as a predicate of the definition and the arguments', async () => {
    const byName = await mcpTools(await connected(fileServer()), { needsApproval: ['write_file'] });
    expect(byName.tools.map((tool) => tool.needsApproval({}))).toEqual([false, true, false]);

    const byPredicate = await mcpTools(await connected(fileServer()), {
      needsApproval: (tool, args) => tool.annotations?.destructiveHint === true && String(args.path).startsWith('/etc'),
    });
    const write = byPredicate.tools.find((tool) => tool.name === 'write_file')!;
    expect([write.needsApproval({ path: '/etc/passwd', text: '' }), write.needsApproval({ path: 'notes.txt', text: '' })]).toEqual([
      true,
      false,
    ]);

    const all = await mcpTools(await connected(fileServer()), { needsApproval: true });
    expect(all.tools.every((tool) => tool.needsApproval({}))).toBe(true);
  });

  it('an approval run: the call waits for tool.approve, then reaches the server', async () => {
    const set = await mcpTools(await connected(fileServer()), { needsApproval: ['write_file'] });
    const { output, events } = await runConversation(
      [{ toolCalls: [{ id: 'c1', name: 'write_file', args: { path: 'a.txt', text: 'hi' } }] }, { text: 'Written.' }],
      {
        tools: set.tools,
        onStart: (actor) => actor.on('tool.approval.requested', ({ toolCallId }) => actor.send({ type: 'tool.approve', toolCallId })),
      },
    );
    expect(output.status).toBe('done');
    expect(results(events)).toEqual(['write_file: wrote a.txt']);
  });

  it('idempotent and timeoutMs: one value, per tool name, or from a function', async () => {
    const client = await connected(fileServer());
    const fixed = await mcpTools(client, { idempotent: true, timeoutMs: 5_000 });
    expect(fixed.tools.map((tool) => [tool.idempotent, tool.timeoutMs])).toEqual([
      [true, 5_000],
      [true, 5_000],
      [true, 5_000],
    ]);
    await fixed.close();
    const perTool = await mcpTools(client, {
      idempotent: (tool) => tool.annotations?.readOnlyHint === true,
      timeoutMs: { write_file: 100 },
    });
    expect(perTool.tools.map((tool) => [tool.name, tool.idempotent, tool.timeoutMs])).toEqual([
      ['read_file', true, undefined],
      ['write_file', false, 100],
      ['files_search', false, undefined],
    ]);
    await perTool.close();
    const fromFunction = await mcpTools(client, {
      idempotent: ['read_file'],
      timeoutMs: (tool) => (tool.name === 'read_file' ? 7 : undefined),
    });
    expect(fromFunction.tools.map((tool) => [tool.idempotent, tool.timeoutMs])).toEqual([
      [true, 7],
      [false, undefined],
      [false, undefined],
    ]);
  });

  it('mapResult shapes what the model reads; one that throws gives an error result', async () => {
    const set = await mcpTools(await connected(fileServer()), {
      mapResult: (result, tool) => {
        if (tool.name === 'write_file') throw new Error('cannot map this');
        return { tool: tool.name, text: mcpResultText(result) };
      },
    });
    const { events } = await runConversation(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'read_file', args: { path: 'a' } },
            { id: 'c2', name: 'write_file', args: { path: 'b', text: '' } },
          ],
        },
        { text: 'ok' },
      ],
      { tools: set.tools },
    );
    expect(results(events)).toEqual([
      'read_file: {"tool":"read_file","text":"contents of a"}',
      'write_file (error): Error: cannot map this',
    ]);
  });
});

describe('names', () => {
  it('characters the providers refuse become "_", long names are cut, clashes are told apart, all stable', () => {
    expect(modelToolNames(['read.file', 'read_file', 'a/b'], 'fs_')).toEqual([
      'fs_read_file',
      expect.stringMatching(/^fs_read_file_[0-9a-f]{8}$/),
      'fs_a_b',
    ]);
    const long = 'x'.repeat(100);
    const [name] = modelToolNames([long], 'p_');
    expect(name).toHaveLength(64);
    expect(modelToolNames([long], 'p_')).toEqual([name]);
    expect(modelToolNames([''], '')[0]).toMatch(/^_[0-9a-f]{8}$/);
  });

  it('the machine accepts every name the set makes, and the call reaches the server under its own name', async () => {
    const set = await mcpTools(await connected(fileServer()), { prefix: 'files-' });
    const { events } = await runConversation(
      [{ toolCalls: [{ id: 'c1', name: 'files-files_search', args: { query: 'x' } }] }, { text: 'ok' }],
      { tools: set.tools },
    );
    expect(results(events)).toEqual(['files-files_search: found x']);
    expect(set.tools[2]!.description).toBe('Search files');
  });
});

describe('mcpResultText', () => {
  it('structured content alone is its JSON; nothing is ""; audio and unknown parts are named', () => {
    expect(mcpResultText({ structuredContent: { a: 1 } })).toBe('{"a":1}');
    expect(mcpResultText({ content: [] })).toBe('');
    expect(mcpResultText({ content: [{ type: 'audio', data: 'AAAA', mimeType: 'audio/wav' }] })).toBe(
      '[audio: audio/wav, 3 bytes; not shown to the model]',
    );
    expect(mcpResultText({ content: [{ type: 'video', url: 'x' } as never] })).toBe('{"type":"video","url":"x"}');
  });
});

describe('mcpResultContent (the default mapResult)', () => {
  const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
  it('images, audio and readable blobs become parts in order; the text around them stays', () => {
    const content = mcpResultContent({
      content: [
        { type: 'text', text: 'Report:' },
        { type: 'image', data: png, mimeType: 'image/png' },
        { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///srv/q3.pdf', mimeType: 'application/pdf', blob: 'JVBERi0x' } },
        { type: 'resource', resource: { uri: 'file:///srv/notes.md', mimeType: 'text/markdown', text: '# Notes' } },
      ],
    });
    expect(isToolContent(content)).toBe(true);
    expect(isToolContent(content) && content.parts).toEqual([
      { type: 'text', text: 'Report:' },
      { type: 'image', data: png, mediaType: 'image/png' },
      { type: 'file', data: 'UklGRg==', mediaType: 'audio/wav' },
      { type: 'text', text: '[resource file:///srv/q3.pdf]' },
      { type: 'file', data: 'JVBERi0x', mediaType: 'application/pdf', filename: 'q3.pdf' },
      { type: 'text', text: '[resource file:///srv/notes.md (text/markdown)]\n# Notes' },
    ]);
  });

  it('no media, a blob no model reads, or data that is not base64: the text of mcpResultText, placeholders included', () => {
    expect(mcpResultContent({ content: [{ type: 'text', text: 'hi' }] })).toBe('hi');
    const zip = {
      content: [{ type: 'resource' as const, resource: { uri: 'file:///a.zip', mimeType: 'application/zip', blob: 'UEsDBA==' } }],
    };
    expect(mcpResultContent(zip)).toBe(mcpResultText(zip));
    const broken = { content: [{ type: 'image' as const, data: 'not base64!', mimeType: 'image/png' }] };
    expect(mcpResultContent(broken)).toBe(mcpResultText(broken));
    expect(mcpResultContent({ structuredContent: { a: 1 } })).toBe('{"a":1}');
  });
});

describe('bad input', () => {
  it('options and sources that are wrong are refused with InvalidOptionsError naming the option', async () => {
    const client = await connected(fileServer());
    const cases: Array<[unknown, unknown, string]> = [
      [client, { prefixx: 'a' }, 'Invalid option prefixx: expected a known option'],
      [client, { prefix: 'has space' }, 'Invalid option prefix: expected at most 48 letters, digits, "_" or "-", got "has space"'],
      [
        client,
        { include: 'read_file' },
        'Invalid option include: expected an array of tool names (the server’s names, without prefix) or a function',
      ],
      [client, { exclude: [1] }, 'Invalid option exclude: expected an array of tool names'],
      [client, { needsApproval: 'yes' }, 'Invalid option needsApproval: expected a boolean, an array of tool names or a function'],
      [client, { timeoutMs: -1 }, 'Invalid option timeoutMs: expected a number of milliseconds between 1 and 2147483647, got -1'],
      [client, { timeoutMs: { read_file: 'soon' } }, 'Invalid option timeoutMs.read_file: expected a number of milliseconds'],
      [client, { mapResult: 'text' }, 'Invalid option mapResult: expected a function'],
      [client, 'fs_', 'Invalid option options: expected an object { prefix?, include?, exclude?, … }, got "fs_"'],
      [
        client,
        { idempotent: ['read_file', 2] },
        'Invalid option idempotent: expected an array of tool names (the server’s names, without prefix)',
      ],
      [
        client,
        { timeoutMs: 'soon' },
        'Invalid option timeoutMs: expected milliseconds, an object of milliseconds per tool name, or a function, got "soon"',
      ],
      [
        client,
        { connectTimeoutMs: 0 },
        'Invalid option connectTimeoutMs: expected a number of milliseconds between 1 and 2147483647, got 0',
      ],
      [client, { onError: true }, 'Invalid option onError: expected a function (error) => void, got true'],
      [
        client,
        { clientInfo: { name: 'app' } },
        'Invalid option clientInfo: expected an object { name, version } of strings, got an object',
      ],
      [
        client,
        { timeoutMs: () => -5 },
        'Invalid option timeoutMs("read_file"): expected a number of milliseconds between 1 and 2147483647, got -5',
      ],
      [42, {}, 'Invalid option source: expected a connected MCP SDK Client, { command, args?, env?, inheritNetworkEnv?, cwd?, stderr? }'],
      [{ command: '' }, {}, 'Invalid option source.command: expected a non-empty string'],
      [{ command: 'node', args: 'server.js' }, {}, 'Invalid option source.args: expected an array of strings'],
      [{ command: 'node', env: { PORT: 80 } }, {}, 'Invalid option source.env: expected an object of string values'],
      [{ command: 'node', inheritNetworkEnv: 'yes' }, {}, 'Invalid option source.inheritNetworkEnv: expected a boolean, got "yes"'],
      [{ command: 'node', cwd: 1 }, {}, 'Invalid option source.cwd: expected a directory path, got 1'],
      [{ command: 'node', stderr: 'pipe' }, {}, 'Invalid option source.stderr: expected "inherit" or "ignore", got "pipe"'],
      [{ url: 'not a url' }, {}, 'Invalid option source.url: expected an http(s) URL, got "not a url"'],
      [{ headers: {} }, {}, 'Invalid option source: expected a connected MCP SDK Client'],
      [{ url: 'ftp://example.com' }, {}, 'Invalid option source.url: expected an http(s) URL'],
      [{ url: 'http://x', headers: { a: 1 } }, {}, 'Invalid option source.headers: expected an object of string values'],
      [
        { command: 'node', argz: ['x'] },
        {},
        'Invalid option source.argz: expected one of command, args, env, inheritNetworkEnv, cwd, stderr (a stdio source), got "an unknown key"',
      ],
      [
        { url: 'http://x', header: {} },
        {},
        'Invalid option source.header: expected one of url, headers (a streamable HTTP source), got "an unknown key"',
      ],
    ];
    for (const [source, options, message] of cases) {
      const error = await mcpTools(source as never, options as never).catch((caught: unknown) => caught);
      expect(InvalidOptionsError.isInstance(error), String(error)).toBe(true);
      expect((error as Error).message).toContain(message);
    }
    const set = await mcpTools(client);
    expect(() => set.onToolsChanged('listener' as never)).toThrow('Invalid option listener: expected a function');
  });

  it('a list naming a tool the server does not offer is refused (a typo in needsApproval would leave the tool unguarded)', async () => {
    const client = await connected(fileServer());
    for (const [option, value] of [
      ['needsApproval', ['write_fille']],
      ['idempotent', ['read']],
      ['timeoutMs', { write: 5 }],
      ['include', ['read_file', 'delete_file']],
    ] as const) {
      const error = await mcpTools(client, { [option]: value }).catch((caught: unknown) => caught);
      expect(InvalidOptionsError.isInstance(error), String(error)).toBe(true);
      expect((error as Error).message).toMatch(
        new RegExp(
          `^Invalid option ${option}: expected names of tools the server offers \\(read_file, write_file, files.search; for tools that come and go, use a function\\), got "`,
        ),
      );
    }
    // exclude may name tools the server does not (or no longer) offer: leaving out is the safe side.
    const set = await mcpTools(client, { exclude: ['delete_file', 'write_file'] });
    expect(set.tools.map((tool) => tool.name)).toEqual(['read_file', 'files_search']);
  });

  it('include and exclude as functions of the tool', async () => {
    const client = await connected(fileServer());
    const readOnly = await mcpTools(client, { include: (tool) => tool.annotations?.readOnlyHint === true });
    expect(readOnly.tools.map((tool) => tool.name)).toEqual(['read_file']);
    const safe = await mcpTools(client, { exclude: (tool) => tool.annotations?.destructiveHint === true });
    expect(safe.tools.map((tool) => tool.name)).toEqual(['read_file', 'files_search']);
  });

  it('a tool whose input schema cannot be compiled: mcpTools says which and how to leave it out', async () => {
    const broken = () =>
      listServer(() => ({
        tools: [
          { name: 'good', inputSchema: { type: 'object' } },
          { name: 'broken', inputSchema: { type: 'object', properties: { a: { type: 'no-such-type' } } } },
        ],
      }));
    const error = await mcpTools(await connected(broken())).catch((caught: unknown) => caught);
    expect(McpToolError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(
      /offers the tool "broken", which cannot be used \(.*\); leave it out with exclude: \["broken"\]/,
    );
    const set = await mcpTools(await connected(broken()), { exclude: ['broken'] });
    expect(set.tools.map((tool) => tool.name)).toEqual(['good']);
  });

  it('a tool the server runs only as an MCP task (it cannot be called with tools/call) is not offered', async () => {
    const tasks = listServer(() => ({
      tools: [
        { name: 'quick', inputSchema: { type: 'object' } },
        { name: 'long_job', inputSchema: { type: 'object' }, execution: { taskSupport: 'required' } },
        { name: 'either', inputSchema: { type: 'object' }, execution: { taskSupport: 'optional' } },
      ],
    }));
    const set = await mcpTools(await connected(tasks));
    expect(set.tools.map((tool) => tool.name)).toEqual(['quick', 'either']);
  });

  it('schemas with an $id work in any number of sets; a refresh keeps the tools that did not change', async () => {
    const tools: ListToolsResult['tools'] = [
      { name: 'a', inputSchema: { type: 'object', $id: 'https://example.com/args/a', properties: { n: { type: 'integer' } } } },
      { name: 'b', inputSchema: { type: 'object' } },
    ];
    const server = () => listServer(() => ({ tools }));
    const first = await mcpTools(await connected(server()));
    const second = await mcpTools(await connected(server()));
    for (const set of [first, second]) {
      expect(set.tools[0]!.validate({ n: 1.5 })).toEqual({ success: false, error: 'arguments.n must be integer' });
    }
    const [a, b] = first.tools;
    tools[1] = { name: 'b', description: 'now described', inputSchema: { type: 'object' } };
    const refreshed = await first.refresh();
    expect(refreshed[0]).toBe(a);
    expect(refreshed[1]).not.toBe(b);
    expect(refreshed[1]!.description).toBe('now described');
  });

  it('a list whose cursor repeats is refused instead of read forever', async () => {
    const looping = listServer(() => ({ tools: [{ name: 'a', inputSchema: { type: 'object' } }], nextCursor: 'same' }));
    await expect(mcpTools(await connected(looping))).rejects.toThrow(
      `the server's tools/list sent the cursor "same" twice; its list never ends`,
    );
  });

  it('a server that never answers tools/list: mcpTools rejects after connectTimeoutMs', async () => {
    const silent = listServer(() => new Promise<ListToolsResult>(() => undefined));
    const started = Date.now();
    await expect(mcpTools(await connected(silent), { connectTimeoutMs: 200 })).rejects.toThrow(
      'could not list the tools of the server of the MCP client: it did not answer tools/list within 200 ms (connectTimeoutMs)',
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    const stopsAtPage2 = listServer((cursor) =>
      cursor === undefined ? { tools: [{ name: 'a', inputSchema: { type: 'object' } }], nextCursor: '2' } : new Promise(() => undefined),
    );
    await expect(mcpTools(await connected(stopsAtPage2), { connectTimeoutMs: 200 })).rejects.toThrow(
      'it did not answer tools/list (page 2) within 200 ms (connectTimeoutMs)',
    );
  });
});
