/**
 * Where a side's allocation goes: V8's sampling heap profiler (counting objects the GC already
 * collected) over `--conversations` S1 conversations of one side, summed by allocating function.
 *
 * ```sh
 * npx tsx bench/alloc-sites.ts --side actorloop --mode stream --top 40
 * ```
 */
import { allocationProfile } from './allocation-profile.js';
import { createBenchClient } from './client.js';
import type { LoopOptions } from './raw-loop.js';
import { sideLoop } from './side-loop.js';
import { isLoopSide, loopSides } from './worker-process.js';
import { startWireServerProcess } from './wire.js';
import { flag } from './flag.js';

const side = flag('--side', 'actorloop');
if (!isLoopSide(side)) throw new Error(`--side: expected one of ${loopSides.join(', ')}, got ${side}`);
const mode = flag('--mode', 'stream');
const rounds = Number(flag('--rounds', '20'));
const conversations = Number(flag('--conversations', '40'));
const top = Number(flag('--top', '40'));

const server = await startWireServerProcess();
await server.configure({ latencyMs: 0, rounds });
const options: LoopOptions = { model: 'bench-model', stream: mode === 'stream', maxRounds: rounds };
const { client, close } = await createBenchClient(server.baseURL, { connections: 4 });
const run = sideLoop(side, client, options);
for (let index = 0; index < 30; index++) await run('Add the numbers, round after round.');

const profile = await allocationProfile(() => run('Add the numbers, round after round.'), conversations, 256);

type Node = (typeof profile)['head'];
const bySite = new Map<string, number>();
const byFile = new Map<string, number>();
let total = 0;
const shortUrl = (url: string) => url.replace(/^.*\/node_modules\//, '').replace(/^.*\/(src|bench)\//, '$1/');
const walk = (node: Node, parent: string) => {
  const frame = node.callFrame;
  const site = `${frame.functionName || '(anonymous)'} ${shortUrl(frame.url)}:${frame.lineNumber + 1}`;
  total += node.selfSize;
  if (node.selfSize > 0) {
    const key = `${site}  <- ${parent}`;
    bySite.set(key, (bySite.get(key) ?? 0) + node.selfSize);
    const file = shortUrl(frame.url) || '(native)';
    byFile.set(file, (byFile.get(file) ?? 0) + node.selfSize);
  }
  for (const child of node.children) walk(child, site);
};
walk(profile.head, '');
const perRound = (bytes: number) => (bytes / conversations / rounds).toFixed(0).padStart(7);
console.log(`${side} ${mode}: ${perRound(total)} bytes allocated per round\n\nby file:`);
for (const [file, bytes] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`${perRound(bytes)}  ${file}`);
console.log('\nby function (<- caller):');
for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${perRound(bytes)}  ${site}`);
await close();
await server.close();
process.exit(0);
