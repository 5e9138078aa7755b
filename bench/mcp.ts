/**
 * MCP: what actorloop adds to a call of an MCP server's tool. Run alone: `npx tsx bench/mcp.ts [--calls N]`.
 *
 * Against the test MCP server (test/support/mcp-server.ts, SDK `McpServer`) over stdio and over
 * streamable HTTP on 127.0.0.1, both in their own process, interleaved per batch:
 * - `sdk`: the floor — `client.callTool({ name: 'add' })` on a connected SDK `Client`;
 * - `tool`: the actorloop tool's `execute` (argument object in, result text out) on its shared connection;
 * - `run`: one conversation × 20 rounds through the engine (scripted zero-latency model), each round
 *   one call of the MCP `add`, against the same conversation with a local `defineTool` add: the
 *   difference is what a round pays for going to the server.
 * Wall µs per call (median of batches) and this process's CPU µs per call. Compare ratios within a run.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine, defineTool, handlerProvider, type Tool } from '../src/index.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { type McpSource, mcpTools } from '../src/tools/mcp/index.js';
import { startHttpServer, stdioSource } from '../test/support/mcp-servers.js';
import { cpuNowUs, fmt, median } from './stats.js';

const argv = process.argv.slice(2);
const calls = Number(argv[argv.indexOf('--calls') + 1] || 400);
const batches = 8;
const rounds = 20;

type Sample = { wallUs: number; cpuUs: number };

async function measure(count: number, once: (index: number) => Promise<unknown>): Promise<Sample> {
  const wall = performance.now();
  const cpu = cpuNowUs();
  for (let index = 0; index < count; index++) await once(index);
  return { wallUs: ((performance.now() - wall) * 1000) / count, cpuUs: (cpuNowUs() - cpu) / count };
}

const chunk = (delta: Record<string, unknown>, finish: string | null = null): OpenAIChatCompletionChunk => ({
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** A conversation of `rounds` rounds, each one call of `add`, on a zero-latency scripted model. */
async function conversation(tools: ReadonlyArray<Tool<never, unknown>>): Promise<void> {
  let request = 0;
  const machine = createConversationMachine({
    provider: handlerProvider(async function* () {
      request++;
      if (request > rounds) {
        yield chunk({ content: 'done' }, 'stop');
        return;
      }
      const call = { index: 0, id: `c${request}`, type: 'function', function: { name: 'add', arguments: `{"a":${request},"b":1}` } };
      yield chunk({ tool_calls: [call] }, 'tool_calls');
    }),
    tools,
    maxToolIterations: rounds,
    doomLoop: false,
  });
  const actor = createActor(machine, { input: {} }).start();
  actor.send({ type: 'user.message', content: 'add' });
  const output = await toPromise(actor);
  if (output.status !== 'done' || output.iterations !== rounds) throw new Error(`bench run ended ${output.status}/${output.reason}`);
}

const localAdd = defineTool({
  name: 'add',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: ({ a, b }) => String(Number(a) + Number(b)),
});

async function bench(name: string, source: McpSource, connectSdk: () => Promise<Client>) {
  const client = await connectSdk();
  const set = await mcpTools(source, { include: ['add'] });
  const add = set.tools[0]!;
  // Each call gets its own signal, as the machine gives each execution one.
  const context = () => ({ signal: new AbortController().signal, toolCallId: 'bench', messages: [], sessionData: undefined });
  const sides: Record<string, (index: number) => Promise<unknown>> = {
    sdk: (index) => client.callTool({ name: 'add', arguments: { a: index, b: 1 } }),
    tool: async (index) => add.execute({ a: index, b: 1 }, context()),
  };
  for (const once of Object.values(sides)) await measure(50, once);
  const samples: Record<string, Sample[]> = { sdk: [], tool: [], runMcp: [], runLocal: [] };
  for (let batch = 0; batch < batches; batch++) {
    for (const [side, once] of batch % 2 ? Object.entries(sides).reverse() : Object.entries(sides)) {
      samples[side]!.push(await measure(calls / batches, once));
    }
    const runs = Math.max(1, Math.round(calls / batches / rounds));
    const perRound = (sample: Sample): Sample => ({ wallUs: sample.wallUs / rounds, cpuUs: sample.cpuUs / rounds });
    samples.runMcp!.push(perRound(await measure(runs, () => conversation(set.tools))));
    samples.runLocal!.push(perRound(await measure(runs, () => conversation([localAdd]))));
  }
  await set.close();
  await client.close();
  const med = (side: string, key: keyof Sample) => median(samples[side]!.map((sample) => sample[key]));
  return {
    name,
    sdk: { wallUs: med('sdk', 'wallUs'), cpuUs: med('sdk', 'cpuUs') },
    tool: { wallUs: med('tool', 'wallUs'), cpuUs: med('tool', 'cpuUs') },
    runMcp: { wallUs: med('runMcp', 'wallUs'), cpuUs: med('runMcp', 'cpuUs') },
    runLocal: { wallUs: med('runLocal', 'wallUs'), cpuUs: med('runLocal', 'cpuUs') },
  };
}

const http = await startHttpServer();
try {
  const results = [
    await bench('stdio', stdioSource(), async () => {
      const client = new Client({ name: 'bench', version: '0' });
      const { command, args, cwd } = stdioSource();
      await client.connect(new StdioClientTransport({ command, args: [...(args ?? [])], ...(cwd ? { cwd } : {}) }));
      return client;
    }),
    await bench('http', http.source, async () => {
      const client = new Client({ name: 'bench', version: '0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(String(http.source.url))));
      return client;
    }),
  ];
  console.log(
    `### MCP — ${calls} calls per side, ${batches} interleaved batches; runs of ${rounds} rounds; medians per call / per round\n`,
  );
  console.log(
    '| transport | sdk callTool wall µs | actorloop tool wall µs | ratio | sdk CPU µs | tool CPU µs | ratio | round, MCP add, wall µs | round, local add, wall µs | MCP share µs |',
  );
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const r of results) {
    console.log(
      `| ${r.name} | ${fmt(r.sdk.wallUs, 0)} | ${fmt(r.tool.wallUs, 0)} | ${fmt(r.tool.wallUs / r.sdk.wallUs, 2)} | ${fmt(r.sdk.cpuUs, 0)} | ${fmt(r.tool.cpuUs, 0)} | ${fmt(r.tool.cpuUs / r.sdk.cpuUs, 2)} | ${fmt(r.runMcp.wallUs, 0)} | ${fmt(r.runLocal.wallUs, 0)} | ${fmt(r.runMcp.wallUs - r.runLocal.wallUs, 0)} |`,
    );
  }
} finally {
  await http.stop();
}
