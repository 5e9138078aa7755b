/**
 * `actorloop eval <module>` (DESIGN §19, docs/cli.md "eval:", docs/testing.md "Evals") as a process,
 * in a project of the user's own: `actorloop` (this build, with `actorloop/testing`), `xstate` and
 * `tsx` in its node_modules, a TypeScript eval module whose provider answers from a table (no
 * network), JSONL datasets. The progress bar, the table, `results.json`, `--json`, the exit codes
 * (1 below the threshold; 2 when nothing ran — a bad line, a bad flag, the module's mistakes, each
 * named; 130 on Ctrl-C), and `report.html` in headless Chromium.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliFailure } from '../src/cli/cli-failure.js';
import { CliUsageError } from '../src/cli/cli-usage-error.js';
import { evalProgress, evalProgressLine } from '../src/cli/eval-progress.js';
import { escapeHtml } from '../src/cli/eval-report-html.js';
import { evalTable } from '../src/cli/eval-table.js';
import { parseArguments, usageLineOf } from '../src/cli/parse-arguments.js';
import { emptyUsage } from '../src/index.js';
import type { EvalReport } from '../src/testing/index.js';
import { builtTree } from './support/built-tree.js';
import { launchChromium, resultsDir } from './support/chromium.js';
import { actorloop, actorloopInterrupted, root } from './support/cli-process.js';

const capitalsModule = `import { createConversationMachine, emptyUsage, type Provider } from 'actorloop';
import { scorers as score } from 'actorloop/testing';

const answers: Record<string, string> = {
  'Capital of France?': 'Paris.',
  'Capital of Italy?': 'Rome, of course.',
  'Capital of Spain?': 'Lisbon.',
};

/** Answers from the table, a little slower for a longer question (so the latency chart has a shape). */
const table: Provider = {
  name: 'table',
  model: 'table-1',
  async *stream({ messages }) {
    const last = messages.at(-1);
    const asked = last && typeof last.content === 'string' ? last.content : '';
    await new Promise((resolve) => setTimeout(resolve, asked.length * 2));
    const text = answers[asked] ?? \`no idea about \${asked}\`;
    const usage = { ...emptyUsage(), inputTokens: 10 * asked.length, outputTokens: 5, totalTokens: 10 * asked.length + 5 };
    yield { type: 'text.delta', delta: text };
    yield { type: 'finish', content: [{ type: 'text', text }], finishReason: 'stop', usage };
  },
};

export const machine = createConversationMachine({ provider: table, prices: { 'table-1': { input: 1, output: 2 } } });
export const dataset = 'capitals.jsonl';
export const scorers = [score.exact(), score.includes({ caseSensitive: false })];
`;

const capitalItems = [
  { id: 'fr', input: 'Capital of France?', expected: 'Paris.' },
  { id: 'it', input: 'Capital of Italy?', expected: 'Rome' },
  { id: 'es', input: 'Capital of Spain?', expected: 'Madrid' },
  { id: '<script>alert(1)</script>', input: 'Capital of Mars?', expected: 'none' },
  // No `expected`: both scorers throw, so the item gets an error (counted 0).
  { id: 'no-expected', input: 'Capital of Peru?' },
];

/** A plain JS module of `imports` and `body`, importing from the project's actorloop. */
const jsModule = (body: string) =>
  [
    "import { createConversationMachine, emptyUsage } from 'actorloop';",
    "import { scorers } from 'actorloop/testing';",
    'const echo = {',
    "  name: 'echo', model: 'echo-1',",
    '  async *stream({ messages, signal }) {',
    '    const asked = messages.at(-1).content;',
    "    if (asked === 'slow')",
    '      await new Promise((resolve, reject) => {',
    '        const timer = setTimeout(resolve, 30_000);',
    "        signal.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason); }, { once: true });",
    '      });',
    '    const usage = { ...emptyUsage(), inputTokens: 3, outputTokens: 2, totalTokens: 5 };',
    "    yield { type: 'text.delta', delta: asked };",
    "    yield { type: 'finish', content: [{ type: 'text', text: asked }], finishReason: 'stop', usage };",
    '  },',
    '};',
    'const machine = createConversationMachine({ provider: echo });',
    body,
    '',
  ].join('\n');

/** A user's project: actorloop (this build) with its testing subpath, xstate and tsx installed; eval modules and datasets. */
function userProject(): string {
  const project = mkdtempSync(join(tmpdir(), 'actorloop-eval-'));
  const modules = join(project, 'node_modules');
  mkdirSync(join(modules, 'actorloop'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'evals', private: true, type: 'module' }));
  writeFileSync(
    join(modules, 'actorloop', 'package.json'),
    JSON.stringify({ name: 'actorloop', type: 'module', exports: { '.': './src/index.js', './testing': './src/testing/index.js' } }),
  );
  // One copy of actorloop in the process: the command's and the module's.
  symlinkSync(join(builtTree(), 'src'), join(modules, 'actorloop', 'src'));
  for (const name of ['xstate', 'tsx']) symlinkSync(join(root, 'node_modules', name), join(modules, name));
  // The module in a folder of its own: its `dataset` path is relative to it.
  mkdirSync(join(project, 'evals'));
  writeFileSync(join(project, 'evals', 'capitals.ts'), capitalsModule);
  writeFileSync(join(project, 'evals', 'capitals.jsonl'), `${capitalItems.map((item) => JSON.stringify(item)).join('\n')}\n`);
  writeFileSync(join(project, 'bad.jsonl'), '{"id":"a","input":"x"}\n// a comment\n{"id":"b","input": oops}\n');
  const files: Record<string, string> = {
    'default-object.mjs': jsModule(
      "export default { machine, dataset: [{ id: 'hi', input: 'hi', expected: 'hi' }, { input: 'yo', expected: 'hey' }], scorers: [scorers.exact()] };",
    ),
    'interrupted.mjs': jsModule(
      [
        'export default async () => ({',
        '  machine,',
        "  dataset: [{ id: 'quick', input: 'quick', expected: 'quick' }, { id: 'slow', input: 'slow', expected: 'slow' }, { id: 'later', input: 'later', expected: 'later' }],",
        '  scorers: [scorers.includes()],',
        '});',
      ].join('\n'),
    ),
    'nothing.mjs': 'export const VERSION = 1;\n',
    'throws.mjs': "throw new Error('no API key in this environment');\n",
    'no-scorers.mjs': jsModule("export { machine };\nexport const dataset = [{ input: 'hi' }];"),
    'nameless.mjs': jsModule("export default { machine, dataset: [{ input: 'hi' }], scorers: [scorers.exact(), { score: () => 1 }] };"),
    'not-a-machine.mjs': jsModule(
      "export default () => ({ machine: () => machine, dataset: [{ input: 'hi' }], scorers: [scorers.exact()] });",
    ),
    'no-dataset.mjs': jsModule('export default { machine, scorers: [scorers.exact()] };'),
    'bad-item.mjs': jsModule(
      "export default { machine, dataset: [{ input: 'hi' }, { expected: 'no input' }], scorers: [scorers.exact()] };",
    ),
  };
  for (const [name, text] of Object.entries(files)) writeFileSync(join(project, name), text);
  return project;
}

let project: string;
const at = () => ({ cwd: project });
const evalUsage = 'usage: actorloop eval <module>[#export] [options]';

beforeAll(() => {
  project = userProject();
}, 120_000);
afterAll(() => {
  rmSync(project, { recursive: true, force: true });
});

type Results = EvalReport & { module: string; dataset: string | null; threshold: number; passed: boolean; startedAt: string; node: string };
const resultsOf = (out: string): Results => JSON.parse(readFileSync(join(project, out, 'results.json'), 'utf8')) as Results;

describe.concurrent('actorloop eval', () => {
  it('a TypeScript module with a JSONL dataset beside it: progress on stderr, the table on stdout, results.json; exit 0', async () => {
    const { code, stdout, stderr } = await actorloop(['eval', 'evals/capitals.ts', '--out', 'out/table'], {}, undefined, at());
    expect(code).toBe(0);
    // A pipe: a plain line each tenth, no control characters.
    expect(stderr.replace(/\n/g, '')).not.toMatch(/\p{Cc}/u);
    const lines = stderr.split('\n');
    expect(lines[0]).toBe('evaluating 5 items of evals/capitals.jsonl with exact, includes, 4 at a time');
    expect(lines.filter((line) => line.startsWith('[actorloop] ['))).toHaveLength(5);
    expect(stderr).toContain('[actorloop] [####################] 5/5 · mean 0.30 · 1 error\n');
    expect(stderr).toContain(`wrote ${join('out', 'table', 'results.json')} and ${join('out', 'table', 'report.html')}\n`);

    const table = stdout.trimEnd().split('\n');
    expect(table[0]).toMatch(/^id\s+exact\s+includes\s+mean\s+status\s+tokens\s+cost\s+ms\s+error$/);
    const row = (id: string) => table.find((line) => line.startsWith(`${id} `)) ?? '';
    expect(row('fr')).toMatch(/^fr\s+1\.00\s+1\.00\s+1\.00\s+done\s+185\s+\$0\.000190\s+\d+$/);
    expect(row('it')).toMatch(/^it\s+0\.00\s+1\.00\s+0\.50\s+done /);
    // The error is what gives way to fit 100 columns (the default of a pipe).
    expect(row('no-expected')).toMatch(/^no-expected\s+-\s+-\s+0\.00\s+done\s+165\s+\$0\.000170\s+\d+\s+exact: Invalid\S*…$/);
    // So does the id, as much as the error: the same width each.
    expect(table.find((line) => line.startsWith('<script>'))).toMatch(/^<script>alert\(1\)<\/s\S*…\s+0\.00\s+0\.00\s+0\.00\s+done/);
    expect(table.at(-1)).toMatch(/^mean\s+0\.25\s+0\.50\s+0\.30\s+\d+\s+\$0\.\d+\s+\d+\s+1 error$/);
    for (const line of table) expect(Array.from(line).length).toBeLessThanOrEqual(100);

    const results = resultsOf('out/table');
    expect(results).toMatchObject({
      module: 'evals/capitals.ts',
      dataset: 'evals/capitals.jsonl',
      threshold: 0,
      passed: true,
      node: process.version,
      scorers: { exact: { mean: 0.25, scored: 4 }, includes: { mean: 0.5, scored: 4 } },
      usage: { totalTokens: 5 * 5 + 10 * capitalItems.reduce((sum, item) => sum + item.input.length, 0) },
    });
    expect(results.mean).toBeCloseTo(0.3);
    expect(new Date(results.startedAt).toString()).not.toBe('Invalid Date');
    expect(results.items.map((item) => item.id)).toEqual(capitalItems.map((item) => item.id));
    expect(results.items[0]).toMatchObject({ scores: { exact: 1, includes: 1 }, status: 'done', text: 'Paris.', costUsd: 0.00019 });
    expect(results.items[4]?.error).toMatch(/^exact: InvalidOptionsError: .*; includes: InvalidOptionsError: /);
    expect(results.costUsd).toBeGreaterThan(0);
  });

  it('--threshold: a mean below it exits 1 and says so on stderr; the results are written all the same', async () => {
    const { code, stdout, stderr } = await actorloop(
      ['eval', 'evals/capitals.ts', '--out', 'out/threshold', '--threshold', '0.9'],
      {},
      undefined,
      at(),
    );
    expect(stderr.trimEnd().split('\n').at(-1)).toBe('mean 0.30 < threshold 0.9');
    expect(stdout).toContain('mean ');
    expect(resultsOf('out/threshold')).toMatchObject({ threshold: 0.9, passed: false });
    expect(code).toBe(1);
    const reached = await actorloop(['eval', 'evals/capitals.ts', '--out', 'out/reached', '--threshold', '0.3'], {}, undefined, at());
    expect(reached.code).toBe(0);
  });

  it('a bad dataset line: exit 2, the file and the line named, nothing run or written', async () => {
    const { code, stdout, stderr } = await actorloop(
      ['eval', 'evals/capitals.ts', '--dataset', 'bad.jsonl', '--out', 'out/bad'],
      {},
      undefined,
      at(),
    );
    expect(stderr).toMatch(/^actorloop: bad\.jsonl line 3: not JSON \(.+\)\n$/);
    expect(stdout).toBe('');
    expect(existsSync(join(project, 'out/bad'))).toBe(false);
    expect(code).toBe(2);
    const item = await actorloop(['eval', 'bad-item.mjs', '--out', 'out/bad-item'], {}, undefined, at());
    expect(item.stderr).toBe(
      'actorloop: eval bad-item.mjs: "dataset": dataset[1]: expected an "input" (the prompt or the messages), got none\n',
    );
    expect(item.code).toBe(2);
  });

  it('--json: the results on stdout instead of the table, as results.json has them; a default export object with an array', async () => {
    const { code, stdout } = await actorloop(['eval', 'default-object.mjs', '--json', '--out', 'out/json'], {}, undefined, at());
    expect(code).toBe(0);
    const printed = JSON.parse(stdout) as Results;
    expect(printed).toEqual(resultsOf('out/json'));
    expect(printed).toMatchObject({
      module: 'default-object.mjs',
      dataset: null,
      mean: 0.5,
      items: [
        { id: 'hi', scores: { exact: 1 }, text: 'hi' },
        { id: 'item-2', scores: { exact: 0 }, text: 'yo' },
      ],
      usage: { totalTokens: 10 },
    });
  });

  it('Ctrl-C: the running item is cancelled, none starts, what finished is written; exit 130', async () => {
    const { sent, result } = await actorloopInterrupted(
      ['eval', 'interrupted.mjs', '--concurrency', '1', '--out', 'out/interrupted'],
      {},
      '1/3',
      at(),
    );
    expect(sent).toBe(true);
    expect(result.stderr).toContain('interrupted (Ctrl-C): 1 of 3 items not run (each counts 0); the results hold the rest\n');
    const results = resultsOf('out/interrupted');
    expect(results.stopped).toBe('aborted');
    expect(results.items.map(({ id, status, error }) => ({ id, status, error }))).toEqual([
      { id: 'quick', status: 'done', error: undefined },
      { id: 'slow', status: 'halted', error: 'stopped: the eval was aborted during this run' },
      { id: 'later', status: undefined, error: 'not run: the eval was aborted' },
    ]);
    expect(existsSync(join(project, 'out/interrupted/report.html'))).toBe(true);
    expect(result.code).toBe(130);
  });
});

describe.concurrent('actorloop eval: what is wrong with the module is one line naming it (exit 2: nothing ran; 1 is below the threshold)', () => {
  const expected = 'expected { machine, dataset, scorers }: named exports, a default export object with those keys';
  for (const [module, message] of [
    ['nothing.mjs', `eval nothing.mjs: it exports VERSION, no machine, dataset or scorers; ${expected}`],
    ['evals/capitals.ts#nope', 'eval evals/capitals.ts#nope: no export "nope" (it exports dataset, machine (a machine), scorers)'],
    ['no-scorers.mjs', 'eval no-scorers.mjs: no "scorers"; expected a non-empty array of scorers, e.g. [scorers.includes()'],
    [
      'nameless.mjs',
      "eval nameless.mjs: scorers[1] has no name (a non-empty string: the report's column); expected a scorer { name, score(context) }",
    ],
    ['not-a-machine.mjs', 'eval not-a-machine.mjs: "machine" is a function, not an XState machine (createConversationMachine(...)'],
    ['no-dataset.mjs', 'eval no-dataset.mjs: no "dataset" and no --dataset <file.jsonl>; expected an array of items'],
    ['missing.ts', `eval missing.ts: no such file (PROJECT/missing.ts); the path is relative to the current directory`],
  ] as const) {
    it(`eval ${module}`, async () => {
      const { code, stdout, stderr } = await actorloop(['eval', module], {}, undefined, at());
      const lines = stderr.split('\n');
      expect(lines[0]).toContain(`actorloop: ${message.replace('PROJECT', project)}`);
      expect(lines.slice(1)).toEqual([evalUsage, 'actorloop --help lists every command and option', '']);
      expect(stdout).toBe('');
      expect(code).toBe(2);
    });
  }

  it('a flag eval does not take, and one no command takes: exit 2, the error on its line, then the usage line', async () => {
    for (const [flag, message] of [
      ['--provider', 'eval does not take --provider'],
      ['--bogus', "Unknown option '--bogus'"],
    ] as const) {
      const { code, stdout, stderr } = await actorloop(['eval', 'evals/capitals.ts', flag, 'x', '--out', 'out/flag'], {}, undefined, at());
      expect(stderr.split('\n')).toEqual([`actorloop: ${message}`, evalUsage, 'actorloop --help lists every command and option', '']);
      expect(stdout).toBe('');
      expect(existsSync(join(project, 'out/flag'))).toBe(false);
      expect(code).toBe(2);
    }
  });

  it('a module that throws as it loads, and an --out that cannot be created: exit 2, one line, nothing run', async () => {
    const thrown = await actorloop(['eval', 'throws.mjs'], {}, undefined, at());
    expect(thrown.stderr).toBe('actorloop: eval throws.mjs could not be loaded: no API key in this environment\n');
    expect(thrown.code).toBe(2);
    // A file where the folder would go.
    const out = await actorloop(['eval', 'default-object.mjs', '--out', 'bad.jsonl/results'], {}, undefined, at());
    expect(out.stderr).toBe(
      'actorloop: eval default-object.mjs: cannot create the results folder bad.jsonl/results (ENOTDIR); nothing ran\n',
    );
    expect(out.stdout).toBe('');
    expect(out.code).toBe(2);
  });

  it('a usage error exits 2 for eval only: every other command keeps 1', async () => {
    expect(cliFailure(new CliUsageError('eval does not take --provider'), 'eval').code).toBe(2);
    for (const command of ['run', 'list', 'start', 'fly', undefined]) expect(cliFailure(new CliUsageError('wrong'), command).code).toBe(1);
    const list = await actorloop(['list', '--bogus'], {}, undefined, at());
    expect(list.stderr.split('\n')[0]).toBe("actorloop: Unknown option '--bogus'");
    expect(list.code).toBe(1);
  });

  it('the flags: each checked, naming the flag and what it takes', () => {
    expect(usageLineOf('eval')).toBe(evalUsage.replace('usage: ', ''));
    expect(parseArguments(['eval', './evals.ts#capitals', '--threshold', '0.8', '--concurrency', '8', '--max-cost', '0.5'])).toEqual({
      command: 'eval',
      module: { module: './evals.ts', exportName: 'capitals' },
      label: './evals.ts#capitals',
      dataset: undefined,
      out: undefined,
      threshold: 0.8,
      concurrency: 8,
      maxCostUsd: 0.5,
      maxTokens: undefined,
      itemTimeoutMs: undefined,
      json: false,
    });
    for (const [args, message] of [
      [['eval'], 'eval needs a module that exports { machine, dataset, scorers }, e.g. actorloop eval ./evals.ts'],
      [['eval', 'a.ts', 'b.ts'], 'eval takes one module, got "a.ts", "b.ts"'],
      [['eval', 'a.ts', '--threshold', '80'], '--threshold needs a number from 0 to 1 (the mean to reach, e.g. 0.8), got "80"'],
      [['eval', 'a.ts', '--concurrency', '0'], '--concurrency needs a number of items > 0 (e.g. 8), got "0"'],
      [['eval', 'a.ts', '--item-timeout', 'soon'], '--item-timeout needs a number of milliseconds > 0 (e.g. 30000), got "soon"'],
      [['eval', 'a.ts', '--provider', 'openai'], 'eval does not take --provider'],
      [['eval', 'a.ts#'], 'eval a.ts#: needs an export\'s name after "#", e.g. a.ts#capitals'],
    ] as const) {
      expect(() => parseArguments([...args])).toThrow(expect.objectContaining({ name: 'CliUsageError', message }));
    }
  });
});

describe('the table, the progress bar and the escaping, in this process', () => {
  const report: EvalReport = {
    items: [
      {
        id: 'a-rather-long-item-id-that-does-not-fit-anywhere-near',
        scores: { 'a-scorer-with-a-long-name': 1, short: 0.5 },
        reasons: {},
        mean: 0.75,
        status: 'done',
        usage: { ...emptyUsage(), totalTokens: 1234 },
        costUsd: 0.0123,
        durationMs: 812.4,
      },
      {
        id: 'two\nlines',
        scores: {},
        reasons: {},
        error: 'the machine failed: Error: \u001b[31mred\u001b[0m and a very long explanation of what happened',
        mean: 0,
        durationMs: 3,
      },
    ],
    mean: 0.375,
    scorers: { 'a-scorer-with-a-long-name': { mean: 1, scored: 1 }, short: { mean: 0.5, scored: 1 } },
    usage: { ...emptyUsage(), totalTokens: 1234 },
    scoringUsage: emptyUsage(),
    costUsd: 0.0123,
    durationMs: 900,
  };

  it('fits the width given: the error, then the id, then scorer names cut with …; no control character gets through', () => {
    for (const columns of [60, 80, 100, 200]) {
      const lines = evalTable(report, columns).trimEnd().split('\n');
      for (const line of lines) expect(Array.from(line).length).toBeLessThanOrEqual(columns);
      expect(lines).toHaveLength(6);
      for (const line of lines) expect(line).not.toMatch(/\p{Cc}/u);
    }
    // At 80 columns the id, the long scorer name and the error give way alike.
    const narrow = evalTable(report, 80).split('\n');
    expect(narrow[0]).toMatch(/^id\s+a-scorer-w…\s+short\s+mean\s+status\s+tokens\s+cost\s+ms\s+error$/);
    expect(narrow[2]).toMatch(/^a-rather-l…\s+1\.00\s+0\.50\s+0\.75\s+done\s+1234\s+\$0\.0123\s+812$/);
    expect(narrow[3]).toMatch(/^two lines\s+-\s+-\s+0\.00\s+-\s+-\s+-\s+3\s+the machin…$/);
    expect(narrow[5]).toMatch(/^mean\s+1\.00\s+0\.50\s+0\.38\s+1234\s+\$0\.0123\s+900\s+1 error$/);
    // With room, the colours of an error are gone, its newline a space.
    expect(evalTable(report, 200)).toContain('the machine failed: Error: red and a very long explanation of what happened\n');
  });

  it('the bar: redrawn in place on a terminal; on a pipe a line each tenth', () => {
    expect(evalProgressLine({ done: 12, total: 40, sum: 9.96, errors: 4 })).toBe('[######..............] 12/40 · mean 0.83 · 4 errors');
    const written: string[] = [];
    const pipe = evalProgress({ write: (text: string) => written.push(text) }, 40);
    for (let index = 0; index < 40; index++) pipe.item({ ...report.items[0], mean: 1 } as EvalReport['items'][number]);
    pipe.finish();
    expect(written).toHaveLength(10);
    expect(written[0]).toBe('[actorloop] [##..................] 4/40 · mean 1.00\n');
    const terminal: string[] = [];
    const bar = evalProgress({ write: (text: string) => terminal.push(text), isTTY: true }, 2);
    bar.item(report.items[1] as EvalReport['items'][number]);
    bar.finish();
    expect(terminal).toEqual(['\r\u001b[K[....................] 0/2', '\r\u001b[K[##########..........] 1/2 · mean 0.00 · 1 error', '\n']);
    expect(escapeHtml(`<script>alert("1")</script> & 'x'`)).toBe('&#60;script&#62;alert(&#34;1&#34;)&#60;/script&#62; &#38; &#39;x&#39;');
  });
});

describe('report.html in headless Chromium', () => {
  it('the charts (a bar per scorer, per item), nothing wider than 1000 px, the script id shown as text', { timeout: 60_000 }, async () => {
    const out = 'out/browser';
    const { code } = await actorloop(['eval', 'evals/capitals.ts', '--out', out, '--threshold', '0.5'], {}, undefined, at());
    expect(code).toBe(1);
    const browser = await launchChromium({ width: 1000, height: 800 });
    try {
      const page = await browser.context.newPage();
      const dialogs: string[] = [];
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      const requests: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      const file = pathToFileURL(join(project, out, 'report.html')).href;
      await page.goto(file);
      // Read in the page (a string: the suite's types have no DOM).
      const facts = (await page.evaluate(`(() => {
        const all = (selector) => [...document.querySelectorAll(selector)];
        const width = document.documentElement.clientWidth;
        return {
          scorerBars: all('svg.chart-scorers rect.bar').length,
          costBars: all('svg.chart-cost rect.bar').length,
          latencyBars: all('svg.chart-latency rect.bar').length,
          axisTitles: all('svg .axis-title').map((node) => node.textContent),
          scripts: document.scripts.length,
          scrollWidth: document.documentElement.scrollWidth,
          clientWidth: width,
          wide: all('section, table, svg').filter((node) => node.getBoundingClientRect().right > width).map((node) => node.tagName),
          ids: all('td.id').map((node) => node.textContent),
          verdict: document.querySelector('.verdict')?.textContent,
          mean: document.querySelector('.overall .mean')?.textContent,
          error: document.querySelector('tr.failed .error')?.textContent,
          latencyValues: all('svg.chart-latency rect.bar').map((node) => Number(node.getAttribute('width'))),
        };
      })()`)) as {
        scorerBars: number;
        costBars: number;
        latencyBars: number;
        axisTitles: string[];
        scripts: number;
        scrollWidth: number;
        clientWidth: number;
        wide: string[];
        ids: string[];
        verdict: string;
        mean: string;
        error: string;
        latencyValues: number[];
      };
      expect(facts).toMatchObject({ scorerBars: 2, costBars: capitalItems.length, latencyBars: capitalItems.length, scripts: 0 });
      expect(facts.axisTitles).toEqual(['mean score (0 to 1)', 'cost per item (USD)', 'latency per item (ms)']);
      expect(facts.scrollWidth).toBeLessThanOrEqual(facts.clientWidth);
      expect(facts.wide).toEqual([]);
      expect(facts.ids).toContain('<script>alert(1)</script>');
      expect(facts).toMatchObject({ verdict: 'FAIL', mean: '0.30' });
      expect(facts.error).toContain('exact: InvalidOptionsError');
      // Sorted: the slowest first.
      expect(facts.latencyValues).toEqual([...facts.latencyValues].sort((a, b) => b - a));
      expect(dialogs).toEqual([]);
      expect(requests).toEqual([file]);
      await page.screenshot({ path: join(resultsDir('cli-eval'), 'report.png'), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});
