/**
 * MAP CHURN: the hidden classes (V8 maps) made per tool round once everything is warm, by the code
 * that made them. A warm loop should make none: a map made per round is V8's slow path (a property
 * added to a copy made by a spread on Node 20, a getter in an object literal, a `delete`), about
 * 1 µs each and a map, descriptor array and property array per object for as long as it lives.
 *
 * ```sh
 * npx tsx bench/map-churn.ts                 # ENGINE's machine (no network), 20 rounds × 100 after 300 warm-up
 * npx tsx bench/map-churn.ts --top 40 --reps 200
 * npx tsx bench/map-churn.ts --machine agent # AGENTS' parent whose tool is an agent call: maps per parent run
 * ```
 *
 * The loop runs in a child `node --log-maps --log-code` (V8's log of every map it makes, with the
 * code that made it); only the maps made after the warm-up count. Owners: `src` (ours), `xstate`,
 * `node` (Node's own JavaScript), `other`. Node 20 makes about 19 per round, XState's and Node's,
 * and one of ours (the tool context's `signal` getter, kept: see docs/performance.md).
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { flag } from './flag.js';

const rounds = Number(flag('--rounds', '20'));
const reps = Number(flag('--reps', '100'));
const warmup = Number(flag('--warmup', '300'));
const top = Number(flag('--top', '25'));
/** `engine` (ENGINE's machine, per tool round) or one of AGENTS' parents (`plain`, `agent`, `streaming`: per parent run). */
const machine = flag('--machine', 'engine');
const perRun = machine !== 'engine';

/** The loop itself, in the child: prints the V8 log time (µs) at which the measured part starts. */
async function child(): Promise<void> {
  if (perRun) return agentsChild();
  const { createActorloopLoop } = await import('./actorloop-loop.js');
  const { scriptedModel } = await import('./engine.js');
  const model = scriptedModel(rounds);
  const run = createActorloopLoop(model.provider, { model: 'scripted', stream: true, maxRounds: rounds });
  const once = async () => {
    model.reset();
    const result = await run('Add the numbers, round after round.');
    if (!result.ok || result.rounds !== rounds)
      throw new Error(`map churn: the run ended ${result.error ?? 'ok'} after ${result.rounds} rounds`);
  };
  for (let index = 0; index < warmup; index++) await once();
  // The log's clock and performance.now() both start with the process; a few ms apart at most.
  process.stdout.write(`${JSON.stringify({ measuredFromUs: Math.round(performance.now() * 1000) })}\n`);
  for (let index = 0; index < reps; index++) await once();
}

/** One of AGENTS' parents run to its end, again and again. */
async function agentsChild(): Promise<void> {
  const { agentsMachines, runOnce } = await import('./agents.js');
  const machines = agentsMachines(undefined);
  if (!(machine in machines)) throw new Error(`map churn: --machine is engine, plain, agent or streaming, not ${machine}`);
  const parent = machines[machine as keyof typeof machines];
  for (let index = 0; index < warmup; index++) await runOnce(parent);
  process.stdout.write(`${JSON.stringify({ measuredFromUs: Math.round(performance.now() * 1000) })}\n`);
  for (let index = 0; index < reps * rounds; index++) await runOnce(parent);
}

type Code = { start: number; size: number; name: string };

function ownerOf(name: string): string {
  if (/(^|[\s/])src\//.test(name)) return 'src';
  if (name.includes('/xstate/')) return 'xstate';
  if (name.includes('node:')) return 'node';
  return 'other';
}

/** Counts the maps made after `fromUs`, by the function whose code made them (the log runs to hundreds of MB: read as a stream). */
async function churnOf(logFile: string, fromUs: number) {
  const codes: Code[] = [];
  const made: Array<{ pc: number; what: string }> = [];
  for await (const line of createInterface({ input: createReadStream(logFile), crlfDelay: Number.POSITIVE_INFINITY })) {
    if (line.startsWith('code-creation,')) {
      const fields = line.split(',');
      codes.push({ start: Number.parseInt(fields[4] as string, 16), size: Number(fields[5]), name: fields.slice(6).join(',') });
    } else if (line.startsWith('map,')) {
      const [, kind, time, , , pc, lineNumber, column, , ...rest] = line.split(',');
      if (
        Number(time) < fromUs ||
        !['Transition', 'Normalize', 'NormalizeCached', 'ReplaceDescriptors', 'InitialMap'].includes(kind as string)
      )
        continue;
      made.push({
        pc: Number.parseInt(pc as string, 16),
        what: `${kind} ${lineNumber}:${column} ${rest
          .join(',')
          .replace(/x:\d+\..*/, '<delayed event id>')
          .slice(0, 40)}`,
      });
    }
  }
  codes.sort((a, b) => a.start - b.start);
  const functionAt = (pc: number): string => {
    let low = 0;
    let high = codes.length - 1;
    let found: Code | undefined;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const code = codes[middle] as Code;
      if (code.start <= pc) {
        found = code;
        low = middle + 1;
      } else high = middle - 1;
    }
    return found && pc < found.start + found.size
      ? found.name
          .replace(/,0x[0-9a-f]+,.*$/, '')
          .replace(`file://${process.cwd()}/`, '')
          .replace(`${process.cwd()}/`, '')
      : '(unknown code)';
  };
  const bySite = new Map<string, number>();
  for (const { pc, what } of made) {
    const key = `${functionAt(pc)} | ${what}`;
    bySite.set(key, (bySite.get(key) ?? 0) + 1);
  }
  return { total: made.length, bySite };
}

async function main(): Promise<void> {
  if (process.argv.includes('--child')) return child();
  const directory = mkdtempSync(path.join(tmpdir(), 'map-churn-'));
  const logFile = path.join(directory, 'v8.log');
  const script = fileURLToPath(import.meta.url);
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--log-maps',
      '--log-code',
      `--logfile=${logFile}`,
      '--no-logfile-per-isolate',
      script,
      '--child',
      ...process.argv.slice(2),
    ],
    { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (result.status !== 0) throw new Error(`map churn: the child exited ${result.status}`);
  const { measuredFromUs } = JSON.parse(result.stdout.trim().split('\n').pop() as string) as { measuredFromUs: number };
  const { total, bySite } = await churnOf(logFile, measuredFromUs);
  rmSync(directory, { recursive: true, force: true });
  const perRound = (count: number) => (count / (reps * rounds)).toFixed(2);
  const byOwner = new Map<string, number>();
  for (const [site, count] of bySite) byOwner.set(ownerOf(site), (byOwner.get(ownerOf(site)) ?? 0) + count);
  const unit = perRun ? `${machine} parent run` : 'tool round';
  console.log(
    `## maps made per ${unit}, warm (node ${process.version}; ${reps} × ${rounds} ${perRun ? 'runs' : 'rounds'} after ${warmup} warm-up)\n`,
  );
  console.log(`total ${perRound(total)}; ${[...byOwner].map(([owner, count]) => `${owner} ${perRound(count)}`).join(', ')}\n`);
  console.log(`| per ${perRun ? 'run' : 'round'} | owner | made by | map event, line:column, property |\n|---:|---|---|---|`);
  for (const [site, count] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const [where, what] = site.split(' | ');
    console.log(`| ${perRound(count)} | ${ownerOf(site)} | ${where} | ${what} |`);
  }
}

await main();
