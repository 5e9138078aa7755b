/**
 * The big property run: `npm run test:soak -- --runs 10000 [--tree-runs T] [--controls-runs C] [--workflow-runs W] [--hosted-workflows] [--seed S] [--concurrency K] [--verbose]`;
 * `--seed S --only N` replays run #N of that sample alone. After the single-conversation runs come
 * `--tree-runs` agent trees (default a quarter of `--runs`; test/support/agent-tree-run.ts), checked
 * at every level of the tree, then `--controls-runs` runs of the long-conversation controls (default a
 * quarter of `--runs`; test/support/controls-run.ts: context window, budgets, guardrails, steering,
 * interrupts, fallback chains), then `--workflow-runs` workflows (default a quarter of `--runs`;
 * test/support/workflow-run.ts: user machines of conversations — sequences, parallel states, nested
 * workflows, capped maps — under faults, cancels and kill/restore), checked at every level, with the
 * same drain and escape checks between chunks.
 * Cases come from the same arbitrary as `test/properties.test.ts` (fast-check, seeded; the first provider on
 * one of the wires `openai`, `anthropic`, `responses`, and `ai-sdk-compatible` / `ai-sdk-openai` — aiSdkProvider over
 * `@ai-sdk/openai-compatible`'s or `@ai-sdk/openai`'s chat model; about half draw
 * the long-conversation `controls` of DESIGN §12: guardrails, budgets, steering, interrupts, fallback), run several
 * at a time in one process against their own fault servers; after each chunk the process must
 * drain back to the handles it had before. Prints runs, final states by status and reason, faults
 * injected by kind, violations and wall time; exits 1 on any violation, printing the failing cases
 * as JSON so each can be replayed with `runCase`.
 */
import fc from 'fast-check';
import { runTreeCase, type TreeCase, treeCaseArb } from './support/agent-tree-run.js';
import { type ControlsCase, controlsCaseArb, runControlsCase } from './support/controls-run.js';
import { runWorkflowCase, type WorkflowCase, workflowCaseArb } from './support/workflow-run.js';
import { activeResources, runCase, runCaseArb, takeEscapes, waitForDrain, type RunCase, type RunReport } from './support/property-run.js';

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  if (index >= 0) return process.argv[index + 1];
  const inline = process.argv.find((value) => value.startsWith(`--${name}=`));
  return inline?.slice(name.length + 3);
}

const runs = Number(argument('runs') ?? 1_000);
const treeRuns = Number(argument('tree-runs') ?? Math.floor(runs / 4));
const controlsRuns = Number(argument('controls-runs') ?? Math.floor(runs / 4));
const workflowRuns = Number(argument('workflow-runs') ?? Math.floor(runs / 4));
const seed = Number(argument('seed') ?? Date.now() % 2 ** 31);
const concurrency = Number(argument('concurrency') ?? 8);
const chunkSize = Number(argument('chunk') ?? 200);
const verbose = process.argv.includes('--verbose');
/** The workflows run in a host: a kill is a crash, recovered from the last stored step by a new host. */
const hostedWorkflows = process.argv.includes('--hosted-workflows');
/** Replays one run of the sample (its index as printed with a violation). */
const only = argument('only') === undefined ? undefined : Number(argument('only'));
if (!Number.isInteger(runs) || runs < 1 || !Number.isInteger(seed) || !Number.isInteger(concurrency) || concurrency < 1) {
  console.error(
    'usage: npm run test:soak -- --runs N [--tree-runs T] [--controls-runs C] [--workflow-runs W] [--hosted-workflows] [--seed S] [--concurrency K] [--chunk N] [--verbose]',
  );
  process.exit(2);
}

console.log(`soak: ${runs} runs, seed ${seed}, concurrency ${concurrency} (replay: npm run test:soak -- --runs ${runs} --seed ${seed})`);
const started = Date.now();
const sample = fc.sample(runCaseArb, { seed, numRuns: only === undefined ? runs : only + 1 });
const cases = only === undefined ? sample : sample.slice(only);
if (only !== undefined) console.log(`replaying run #${only}: ${JSON.stringify(cases[0])}`);

const byStatus = new Map<string, number>();
const byFault = new Map<string, number>();
const byWire = new Map<string, number>();
/** The wires of the providers after the first in fallback lists (`ai-sdk-…`: aiSdkProvider). */
const byFallbackWire = new Map<string, number>();
const errorCauses = new Map<string, number>();
const knownBugs = new Map<string, number>();
const byControl = new Map<string, number>();
const byNote = new Map<string, number>();
const failures: Array<{ index: number; testCase: RunCase; report: RunReport }> = [];
const globalViolations: string[] = [];
let requests = 0;
let executions = 0;
const bump = (map: Map<string, number>, key: string, by = 1) => map.set(key, (map.get(key) ?? 0) + by);

const baseline = activeResources();
let done = 0;
for (let chunkStart = 0; chunkStart < cases.length; chunkStart += chunkSize) {
  const chunk = cases.slice(chunkStart, chunkStart + chunkSize);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const position = next++;
      const testCase = chunk[position];
      if (testCase === undefined) return;
      const index = chunkStart + position;
      const report = await runCase(testCase, { checkResources: false });
      done++;
      const status = report.output
        ? `${report.output.status}${report.output.reason ? `/${report.output.reason}` : ''}${report.output.error ? ` (${report.output.error.code ?? report.output.error.name})` : ''}`
        : 'no output';
      bump(byStatus, status);
      bump(byWire, `${testCase.wire}${testCase.stream ? '' : ' (not streamed)'}`);
      for (const kind of report.injected) bump(byFault, kind);
      bump(byControl, testCase.controls ? 'runs with controls' : 'runs without controls');
      for (const key of Object.keys(testCase.controls ?? {})) bump(byControl, key);
      if (testCase.controls?.steering === 'queue') bump(byControl, "steering 'queue'");
      if (testCase.controls?.fallback) bump(byControl, `fallback list of ${testCase.controls.fallback.length + 1}`);
      for (const entry of testCase.controls?.fallback ?? []) bump(byFallbackWire, entry.wire);
      for (const note of report.notes) bump(byNote, note);
      for (const bug of report.knownBugs) bump(knownBugs, bug);
      if (report.output?.status === 'error') {
        bump(
          errorCauses,
          `${testCase.wire}${testCase.stream ? '' : ' (not streamed)'}: ${report.output.error?.code ?? '?'} (retryable ${String(report.output.error?.retryable)}) after [${report.lastInjected.join(', ') || 'no request'}]`,
        );
      }
      requests += report.requests;
      executions += report.executions;
      if (report.violations.length > 0) {
        failures.push({ index, testCase, report });
        console.log(`\nVIOLATION in run #${index}: ${report.violations.join(' | ')}\n  case: ${JSON.stringify(testCase)}`);
      } else if (verbose) console.log(`#${index} ${status} ${report.durationMs.toFixed(0)} ms`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  // The whole process must drain between chunks: no timer, socket or server of any run left.
  const growth = await waitForDrain(baseline, 3_000);
  if (growth.length > 0) {
    globalViolations.push(`after runs ${chunkStart}–${chunkStart + chunk.length - 1}: resources left behind: ${growth.join(', ')}`);
    console.log(`\nVIOLATION: ${globalViolations.at(-1)}`);
  }
  const escaped = takeEscapes();
  if (escaped.length > 0) {
    globalViolations.push(`between chunks: escaped: ${escaped.map(String).join('; ')}`);
    console.log(`\nVIOLATION: ${globalViolations.at(-1)}`);
  }
  process.stdout.write(`\r${done}/${cases.length} runs, ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

// Agent trees: the same process, the same drain and escape checks between chunks.
const treeCases = only === undefined ? fc.sample(treeCaseArb, { seed, numRuns: Math.max(0, treeRuns) }) : [];
const treeStatus = new Map<string, number>();
const treeFailures: Array<{ index: number; treeCase: TreeCase; violations: string[] }> = [];
let treeAgents = 0;
let treeDepth = 0;
let treeDone = 0;
for (let chunkStart = 0; chunkStart < treeCases.length; chunkStart += chunkSize) {
  const chunk = treeCases.slice(chunkStart, chunkStart + chunkSize);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const position = next++;
      const treeCase = chunk[position];
      if (treeCase === undefined) return;
      const report = await runTreeCase(treeCase);
      treeDone++;
      treeAgents += report.agents;
      treeDepth = Math.max(treeDepth, report.depth);
      bump(treeStatus, report.output ? `${report.output.status}${report.output.reason ? `/${report.output.reason}` : ''}` : 'no output');
      if (report.violations.length > 0) {
        treeFailures.push({ index: chunkStart + position, treeCase, violations: report.violations });
        console.log(`\nVIOLATION in tree #${chunkStart + position}: ${report.violations.join(' | ')}\n  case: ${JSON.stringify(treeCase)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const growth = await waitForDrain(baseline, 3_000);
  if (growth.length > 0)
    globalViolations.push(`after trees ${chunkStart}–${chunkStart + chunk.length - 1}: resources left behind: ${growth.join(', ')}`);
  const escaped = takeEscapes();
  if (escaped.length > 0) globalViolations.push(`between tree chunks: escaped: ${escaped.map(String).join('; ')}`);
  process.stdout.write(`\r${treeDone}/${treeCases.length} agent trees, ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

// Long-conversation controls: the same process, the same drain and escape checks between chunks.
const controlsCases = only === undefined ? fc.sample(controlsCaseArb, { seed, numRuns: Math.max(0, controlsRuns) }) : [];
const controlsStatus = new Map<string, number>();
const controlsFailures: Array<{ index: number; controlsCase: ControlsCase; violations: string[] }> = [];
let controlsDone = 0;
for (let chunkStart = 0; chunkStart < controlsCases.length; chunkStart += chunkSize) {
  const chunk = controlsCases.slice(chunkStart, chunkStart + chunkSize);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const position = next++;
      const controlsCase = chunk[position];
      if (controlsCase === undefined) return;
      const report = await runControlsCase(controlsCase);
      controlsDone++;
      const output = report.output;
      bump(
        controlsStatus,
        output
          ? `${output.status}${output.reason ? `/${output.reason}` : ''}${output.error?.code ? ` (${output.error.code})` : ''}`
          : 'no output',
      );
      if (report.violations.length > 0) {
        controlsFailures.push({ index: chunkStart + position, controlsCase, violations: report.violations });
        console.log(
          `\nVIOLATION in controls run #${chunkStart + position}: ${report.violations.join(' | ')}\n  case: ${JSON.stringify(controlsCase)}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const growth = await waitForDrain(baseline, 3_000);
  if (growth.length > 0)
    globalViolations.push(
      `after controls runs ${chunkStart}–${chunkStart + chunk.length - 1}: resources left behind: ${growth.join(', ')}`,
    );
  const escaped = takeEscapes();
  if (escaped.length > 0) globalViolations.push(`between controls chunks: escaped: ${escaped.map(String).join('; ')}`);
  process.stdout.write(`\r${controlsDone}/${controlsCases.length} controls runs, ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

// Workflows of conversations: the same process, the same drain and escape checks between chunks.
const workflowCases = only === undefined ? fc.sample(workflowCaseArb, { seed, numRuns: Math.max(0, workflowRuns) }) : [];
const workflowStatus = new Map<string, number>();
const workflowOutcomes = new Map<string, number>();
const workflowFaults = new Map<string, number>();
const workflowEvents = new Map<string, number>();
const workflowFailures: Array<{ index: number; workflowCase: WorkflowCase; violations: string[] }> = [];
let workflowConversations = 0;
let workflowDone = 0;
for (let chunkStart = 0; chunkStart < workflowCases.length; chunkStart += chunkSize) {
  const chunk = workflowCases.slice(chunkStart, chunkStart + chunkSize);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const position = next++;
      const workflowCase = chunk[position];
      if (workflowCase === undefined) return;
      const report = await runWorkflowCase(workflowCase, { hosted: hostedWorkflows });
      workflowDone++;
      const { counts } = report;
      workflowConversations += counts.conversations;
      bump(workflowStatus, report.outcome ?? 'no final state');
      for (const [key, value] of Object.entries(counts.outcomes)) bump(workflowOutcomes, key, value);
      for (const [key, value] of Object.entries(counts.faults)) bump(workflowFaults, key, value);
      bump(
        workflowEvents,
        hostedWorkflows
          ? 'crashes (each recovered by a new host from the last stored step)'
          : 'kills (each restored from its persisted snapshot)',
        counts.kills,
      );
      bump(workflowEvents, 'restores', counts.restores);
      bump(workflowEvents, 'conversations running at a kill', counts.conversationsRestored);
      bump(workflowEvents, 'cancels', counts.cancels);
      bump(workflowEvents, 'tool calls executed', counts.executions);
      bump(workflowEvents, 'idempotent calls run again after a kill', counts.reruns);
      bump(workflowEvents, "calls answered 'interrupted' after a kill", counts.interrupted);
      if (counts.kills > 0) bump(workflowEvents, 'workflows killed at least once', 1);
      if (report.violations.length > 0) {
        workflowFailures.push({ index: chunkStart + position, workflowCase, violations: report.violations });
        console.log(
          `\nVIOLATION in workflow #${chunkStart + position}: ${report.violations.join(' | ')}\n  case: ${JSON.stringify(workflowCase)}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const growth = await waitForDrain(baseline, 3_000);
  if (growth.length > 0)
    globalViolations.push(`after workflows ${chunkStart}–${chunkStart + chunk.length - 1}: resources left behind: ${growth.join(', ')}`);
  const escaped = takeEscapes();
  if (escaped.length > 0) globalViolations.push(`between workflow chunks: escaped: ${escaped.map(String).join('; ')}`);
  process.stdout.write(`\r${workflowDone}/${workflowCases.length} workflows, ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

const sorted = (map: Map<string, number>) => [...map.entries()].sort((a, b) => b[1] - a[1]);
const violations =
  failures.reduce((sum, failure) => sum + failure.report.violations.length, 0) +
  treeFailures.reduce((sum, failure) => sum + failure.violations.length, 0) +
  controlsFailures.reduce((sum, failure) => sum + failure.violations.length, 0) +
  workflowFailures.reduce((sum, failure) => sum + failure.violations.length, 0) +
  globalViolations.length;
console.log(`\n\nruns: ${cases.length}  (seed ${seed}, concurrency ${concurrency})`);
console.log(
  `wires: ${sorted(byWire)
    .map(([key, value]) => `${key} ${value}`)
    .join(', ')}`,
);
console.log(
  `fallback providers by wire: ${
    sorted(byFallbackWire)
      .map(([key, value]) => `${key} ${value}`)
      .join(', ') || 'none'
  }`,
);
console.log(`HTTP requests: ${requests}; tool executions: ${executions}`);
console.log('final states:');
for (const [key, value] of sorted(byStatus)) console.log(`  ${String(value).padStart(6)}  ${key}`);
console.log('faults and responses injected:');
for (const [key, value] of sorted(byFault)) console.log(`  ${String(value).padStart(6)}  ${key}`);
console.log('controls drawn (DESIGN §12), runs:');
for (const [key, value] of sorted(byControl)) console.log(`  ${String(value).padStart(6)}  ${key}`);
console.log('what the controls made happen, times:');
for (const [key, value] of sorted(byNote)) console.log(`  ${String(value).padStart(6)}  ${key}`);
console.log('runs ending in error, by wire, error code and the last answer the server gave:');
for (const [key, value] of sorted(errorCauses)) console.log(`  ${String(value).padStart(6)}  ${key}`);
console.log(`known engine bugs (it.fails in test/property-regressions.test.ts), runs hitting each:${knownBugs.size === 0 ? ' none' : ''}`);
for (const [key, value] of sorted(knownBugs)) console.log(`  ${String(value).padStart(6)}  ${key}`);
console.log(`agent trees: ${treeCases.length}, ${treeAgents} agent calls, deepest ${treeDepth}; final states:`);
for (const [key, value] of sorted(treeStatus)) console.log(`  ${String(value).padStart(6)}  ${key}`);
console.log(`long-conversation controls runs: ${controlsCases.length}; final states:`);
for (const [key, value] of sorted(controlsStatus)) console.log(`  ${String(value).padStart(6)}  ${key}`);
console.log(`workflows: ${workflowCases.length}, ${workflowConversations} conversations; final states:`);
for (const [key, value] of sorted(workflowStatus)) console.log(`  ${String(value).padStart(6)}  ${key}`);
console.log("workflows' conversations, ends:");
for (const [key, value] of sorted(workflowOutcomes)) console.log(`  ${String(value).padStart(6)}  ${key}`);
console.log("workflows' faults and responses injected:");
for (const [key, value] of sorted(workflowFaults)) console.log(`  ${String(value).padStart(6)}  ${key}`);
console.log('workflows: kills, restores, cancels:');
for (const [key, value] of workflowEvents) console.log(`  ${String(value).padStart(6)}  ${key}`);
console.log(
  `violations: ${violations} (in ${failures.length} runs, ${treeFailures.length} trees, ${controlsFailures.length} controls runs, ${workflowFailures.length} workflows${globalViolations.length ? `, plus ${globalViolations.length} process-level` : ''})`,
);
console.log(`wall time: ${((Date.now() - started) / 1000).toFixed(1)} s`);
process.exit(violations > 0 ? 1 : 0);
