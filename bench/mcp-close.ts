/**
 * MCP close(): how long `McpToolSet.close()` takes on a stdio server, and when a call in flight gets
 * its error result. Run alone: `npx tsx bench/mcp-close.ts [--runs N]`.
 *
 * Against the test MCP server (test/support/mcp-server.ts) spawned by actorloop, per scenario:
 * - `idle`: no call in flight (the server exits on its closed stdin);
 * - `hang`: a call in flight of a tool that stops when cancelled;
 * - `stubborn`: a call in flight of a tool that ignores cancellation and keeps the server from
 *   exiting on its closed stdin (it needs SIGTERM);
 * - `no SIGTERM`: the same, on a server that ignores SIGTERM (it needs SIGKILL).
 * Wall ms, median of the runs: close() to resolved, close() to the call's error result; and in how
 * many runs the server process was gone when close() resolved.
 */
import { mcpTools } from '../src/tools/mcp/index.js';
import { isRunning, serverLog, startLog, stdioSource } from '../test/support/mcp-servers.js';
import { callContext } from '../test/support/call-context.js';
import { fmt, median } from './stats.js';

const argv = process.argv.slice(2);
const runs = Number(argv[argv.indexOf('--runs') + 1] || 5);

type Scenario = { name: string; tool?: string; flags?: string[] };
const scenarios: Scenario[] = [
  { name: 'idle' },
  { name: 'hang', tool: 'hang' },
  { name: 'stubborn', tool: 'stubborn' },
  { name: 'no SIGTERM', tool: 'stubborn', flags: ['--ignore-sigterm'] },
];

async function once(scenario: Scenario): Promise<{ closeMs: number; callMs: number | undefined; gone: boolean }> {
  const log = startLog();
  try {
    const set = await mcpTools(stdioSource({ startLog: log.path, ...(scenario.flags ? { flags: scenario.flags } : {}) }));
    const [pid] = log.starts();
    let started = 0;
    let callMs: number | undefined;
    let call: Promise<unknown> = Promise.resolve();
    if (scenario.tool) {
      const tool = set.tools.find((candidate) => candidate.name === scenario.tool);
      if (!tool) throw new Error(`no tool ${scenario.tool}`);
      call = Promise.resolve(tool.execute({}, callContext())).catch(() => {
        callMs = performance.now() - started;
      });
      // Until the server runs it: closing before would measure a call that never reached it.
      while (!(await serverLog(set.tools)).calls.some((seen) => seen.name === scenario.tool)) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    started = performance.now();
    await set.close();
    const closeMs = performance.now() - started;
    const gone = pid === undefined || !isRunning(pid);
    await call;
    return { closeMs, callMs, gone };
  } finally {
    log.remove();
  }
}

console.log(`### MCP close() on a stdio server — median of ${runs} runs\n`);
console.log('| scenario | close() wall ms | call in flight: error result after ms | server gone at close() |');
console.log('| --- | --- | --- | --- |');
for (const scenario of scenarios) {
  const samples = [];
  for (let run = 0; run < runs; run++) samples.push(await once(scenario));
  const calls = samples.flatMap((sample) => (sample.callMs === undefined ? [] : [sample.callMs]));
  console.log(
    `| ${scenario.name} | ${fmt(median(samples.map((sample) => sample.closeMs)), 0)} | ${calls.length ? fmt(median(calls), 0) : '—'} | ${samples.filter((sample) => sample.gone).length}/${runs} |`,
  );
}
