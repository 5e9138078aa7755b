/**
 * MCP tools through the engine, against a real MCP server written with the SDK's own server
 * classes: spawned by actorloop over stdio, and as a separate process over streamable HTTP on
 * 127.0.0.1. The model is scripted; the machine, the SDK client and server, and the process or
 * socket between them are real.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import pkg from '../package.json' with { type: 'json' };
import { createConversationMachine, handlerProvider, type ToolResultEvent } from '../src/index.js';
import { type McpSource, type McpToolSet, mcpTools } from '../src/tools/mcp/index.js';
import { callContext } from './support/call-context.js';
import { eventually, type HttpServer, serverLog, startHttpServer, startLog, stdioSource } from './support/mcp-servers.js';
import { eventsOf, expectValidHistory, runConversation } from './support/run-conversation.js';
import { scriptedModel } from './support/scripted-model.js';

type Transport = { name: 'stdio' | 'http'; source(): McpSource; starts(): number };

const transports: Array<() => Transport & { setUp(): Promise<void>; tearDown(): Promise<void> }> = [
  () => {
    const log = startLog();
    return {
      name: 'stdio',
      source: () => stdioSource({ startLog: log.path }),
      starts: () => log.starts().length,
      setUp: async () => undefined,
      tearDown: async () => log.remove(),
    };
  },
  () => {
    const log = startLog();
    let server: HttpServer | undefined;
    return {
      name: 'http',
      source: () => ({ ...server!.source, headers: { 'x-actorloop-test': 'sent-by-the-source' } }),
      starts: () => log.starts().length,
      setUp: async () => {
        server = await startHttpServer({ startLog: log.path });
      },
      tearDown: async () => {
        await server?.stop();
        log.remove();
      },
    };
  },
];

/** The tool.result events of a run, as `name: result` lines (error results marked). */
const resultLines = (events: Parameters<typeof eventsOf>[0]) =>
  eventsOf(events, 'tool.result').map((event: ToolResultEvent) => `${event.name}${event.isError ? ' (error)' : ''}: ${event.result}`);

describe.each(transports)('MCP tools over %#', (makeTransport) => {
  const transport = makeTransport();
  let set: McpToolSet;

  beforeAll(async () => {
    await transport.setUp();
    set = await mcpTools(transport.source(), { exclude: ['add_tool'] });
  }, 30_000);
  afterAll(async () => {
    await set?.close();
    await transport.tearDown();
  });

  it(`${transport.name}: lists the server's tools with their JSON Schemas and runs a tool loop end to end`, async () => {
    expect(set.tools.map((tool) => tool.name)).toEqual(['add', 'fail', 'hang', 'picture', 'readme', 'weather', 'stubborn', 'server_log']);
    const add = set.tools[0]!;
    expect(add.description).toBe('Add two numbers');
    expect(add.inputSchema).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    });
    expect(add.definition.annotations).toEqual({ readOnlyHint: true });

    const { output, events, requests } = await runConversation(
      [{ toolCalls: [{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }] }, { text: 'It is 5.' }],
      { tools: set.tools, content: 'What is 2+3?' },
    );
    expect(output).toMatchObject({ status: 'done', text: 'It is 5.', iterations: 1 });
    expect(resultLines(events)).toEqual(['add: 5']);
    // The model was offered the server's tools, with the server's schema.
    const offered = requests[0]!.tools!.find((tool) => tool.function.name === 'add');
    expect(offered?.function.parameters).toMatchObject({ properties: { a: { type: 'number' } } });
    expect(requests[1]!.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'c1', content: '5' });
    expectValidHistory(output.messages);
    const log = await serverLog(set.tools);
    expect(log.calls).toContainEqual({ name: 'add', args: { a: 2, b: 3 } });
    // The source's headers go with every HTTP request.
    expect(log.headers).toEqual(transport.name === 'http' ? ['sent-by-the-source'] : []);
    expect(log.client).toEqual({ name: 'actorloop', version: pkg.version });
  });

  it(`${transport.name}: an isError answer is an error result the model reads, and the run goes on`, async () => {
    const { output, events } = await runConversation(
      [{ toolCalls: [{ id: 'c1', name: 'fail', args: { why: 'quota' } }] }, { text: 'Sorry.' }],
      { tools: set.tools },
    );
    expect(output.status).toBe('done');
    expect(resultLines(events)).toEqual(['fail (error): Error: McpToolError: the disk is full (quota)']);
  });

  it(`${transport.name}: a schema-invalid call is answered with an error result and never reaches the server`, async () => {
    const before = (await serverLog(set.tools)).calls.length;
    const { output, events } = await runConversation(
      [{ toolCalls: [{ id: 'c1', name: 'add', args: { a: 'two', b: 3 } }] }, { text: 'Oops.' }],
      { tools: set.tools },
    );
    expect(output.status).toBe('done');
    expect(resultLines(events)).toEqual(['add (error): Error: invalid arguments for tool "add": arguments.a must be number']);
    const log = await serverLog(set.tools);
    expect(log.calls.slice(before)).toEqual([]);
  });

  it(`${transport.name}: a hanging tool is timed out by the machine, and the server is told to cancel it`, async () => {
    const { output, events } = await runConversation(
      [{ toolCalls: [{ id: 'c1', name: 'hang', args: { label: `timeout-${transport.name}` } }] }, { text: 'It hung.' }],
      { tools: set.tools, toolTimeoutMs: 300 },
    );
    expect(output.status).toBe('done');
    expect(resultLines(events)).toEqual(['hang (error): tool "hang" timed out after 300 ms']);
    await eventually(
      async () => (await serverLog(set.tools)).cancellations.some((entry) => entry.name === `timeout-${transport.name}`),
      5_000,
      'the server to see notifications/cancelled',
    );
  });

  it(`${transport.name}: cancelling the run cancels the MCP request on the server`, async () => {
    const { output, events } = await runConversation(
      [{ toolCalls: [{ id: 'c1', name: 'hang', args: { label: `cancel-${transport.name}` } }] }],
      {
        tools: set.tools,
        onStart: (actor) => actor.on('tool.call', () => setTimeout(() => actor.send({ type: 'cancel', reason: 'user left' }), 100)),
      },
    );
    expect(output).toMatchObject({ status: 'halted', reason: 'cancelled' });
    expect(resultLines(events)).toEqual(['hang (error): cancelled: user left']);
    await eventually(
      async () => (await serverLog(set.tools)).cancellations.some((entry) => entry.name === `cancel-${transport.name}`),
      5_000,
      'the server to see notifications/cancelled',
    );
    expectValidHistory(output.messages);
  });

  it(`${transport.name}: an image reaches the model as an image part; text, resources and structured content as text`, async () => {
    const { events, output } = await runConversation(
      [
        {
          toolCalls: [
            { id: 'c1', name: 'picture', args: {} },
            { id: 'c2', name: 'readme', args: {} },
            { id: 'c3', name: 'weather', args: { city: 'Oslo' } },
          ],
        },
        { text: 'Done.' },
      ],
      { tools: set.tools },
    );
    expect(resultLines(events).sort()).toEqual(
      [
        'picture: Here is the chart.\n[image image/png, 68 B]',
        'readme: [resource file:///srv/readme.md (text/markdown)]\n# Hello\n' +
          '[resource file:///srv/logo.bin (application/octet-stream), 3 bytes of binary data; not shown to the model]\n' +
          '[resource link: guide <file:///srv/guide.md> (text/markdown: The guide)]',
        'weather: {"city":"Oslo","celsius":21}',
      ].sort(),
    );
    const pictureParts = [
      { type: 'text', text: 'Here is the chart.' },
      { type: 'image', data: expect.stringMatching(/^iVBORw0KGgo/) as unknown, mediaType: 'image/png' },
    ];
    expect(eventsOf(events, 'tool.result').find((event) => event.name === 'picture')?.content).toEqual(pictureParts);
    const results = output.messages.flatMap((message) => (message.role === 'tool' ? message.content : []));
    expect(results.find((result) => result.toolName === 'picture')?.content).toEqual(pictureParts);
    // The octet-stream blob is nothing a model reads: it stays a placeholder, and the result stays text.
    expect(results.find((result) => result.toolName === 'readme')?.content).toBeUndefined();
  });

  it(`${transport.name}: one connection, opened once, is shared by concurrent conversations on different machines`, async () => {
    const makeMachine = () => {
      const model = scriptedModel([{ toolCalls: [{ id: 'c1', name: 'add', args: { a: 1, b: 1 } }] }, { text: 'two' }]);
      return createConversationMachine({ provider: handlerProvider(model.handler), tools: set.tools });
    };
    const actors = [makeMachine(), makeMachine(), makeMachine()].map((machine) => createActor(machine, { input: {} }).start());
    for (const actor of actors) actor.send({ type: 'user.message', content: 'one plus one' });
    const outputs = await Promise.all(actors.map((actor) => toPromise(actor)));
    expect(outputs.map((output) => output.status)).toEqual(['done', 'done', 'done']);
    expect(transport.starts()).toBe(1);
    expect((await serverLog(set.tools)).sessions).toBe(1);
  });
});

describe('a tools/list answer in pages', () => {
  let http: HttpServer;
  beforeAll(async () => {
    http = await startHttpServer({ paged: true });
  }, 30_000);
  afterAll(() => http?.stop());

  for (const [name, source] of [
    ['stdio', () => stdioSource({ paged: true })],
    ['http', () => http.source],
  ] as const) {
    it(`${name}: every page is listed (nextCursor followed), then filtered and prefixed`, async () => {
      const all = await mcpTools(source());
      try {
        expect(all.tools).toHaveLength(26);
        expect(all.tools.map((tool) => tool.name).slice(0, 3)).toEqual(['tool_00', 'tool_01', 'tool_02']);
        expect(all.tools.at(-1)?.name).toBe('rpc_error');
      } finally {
        await all.close();
      }
      const some = await mcpTools(source(), { prefix: 'db_', include: ['tool_03', 'tool_24', 'rpc_error'], exclude: ['tool_03'] });
      try {
        expect(some.tools.map((tool) => tool.name)).toEqual(['db_tool_24', 'db_rpc_error']);
        expect(String(await some.tools[0]!.execute({ n: 7 }, callContext()))).toBe('tool_24({"n":7})');
      } finally {
        await some.close();
      }
    });

    it(`${name}: a JSON-RPC error answer is an error result naming the code and the server's message`, async () => {
      const set = await mcpTools(source(), { include: ['rpc_error', 'tool_00'] });
      try {
        const { output, events } = await runConversation(
          [
            { toolCalls: [{ id: 'c1', name: 'rpc_error', args: {} }] },
            { toolCalls: [{ id: 'c2', name: 'tool_00', args: { n: 1 } }] },
            { text: 'ok' },
          ],
          { tools: set.tools },
        );
        expect(output.status).toBe('done');
        expect(resultLines(events)).toEqual([
          'rpc_error (error): Error: McpToolError: the MCP server answered with error -32603: the database is on fire',
          'tool_00: tool_00({"n":1})',
        ]);
      } finally {
        await set.close();
      }
    });
  }
});
