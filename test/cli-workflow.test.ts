/**
 * Your own machine from the terminal (DESIGN §18): `actorloop start`, `send` and `serve --machine`
 * as processes, in a project of the user's own — `actorloop` (this build), `xstate` and `tsx` in its
 * node_modules, and a TypeScript workflow module (test/fixtures/cli-workflow/order-workflow.ts,
 * its model scripted: no network). What a terminal adds — approvals asked y/N, an event typed,
 * Ctrl-C at a question — is driven in this process through the same follower.
 */
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { followMachineRun, waitingExitCode } from '../src/cli/follow-machine-run.js';
import type { CliEnvironment } from '../src/cli/run-command.js';
import { createConversationHost, memoryStore } from '../src/index.js';
import orderWorkflow from './fixtures/cli-workflow/order-workflow.js';
import { builtTree } from './support/built-tree.js';
import { actorloop, actorloopInterrupted, type CliResult, root, startListening } from './support/cli-process.js';

/** A user's project: its package.json, actorloop (this build), xstate and tsx installed, the workflow module, two plain JS modules. */
function userProject(): string {
  const project = mkdtempSync(join(tmpdir(), 'actorloop-project-'));
  const modules = join(project, 'node_modules');
  mkdirSync(join(modules, 'actorloop'), { recursive: true });
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'shop', private: true, type: 'module' }));
  // The built package as an install has it: one copy of actorloop in the process, the command's and the module's.
  writeFileSync(
    join(modules, 'actorloop', 'package.json'),
    JSON.stringify({ name: 'actorloop', type: 'module', exports: { '.': './src/index.js' } }),
  );
  symlinkSync(join(builtTree(), 'src'), join(modules, 'actorloop', 'src'));
  for (const name of ['xstate', 'tsx']) symlinkSync(join(root, 'node_modules', name), join(modules, name));
  copyFileSync(join(root, 'test/fixtures/cli-workflow/order-workflow.ts'), join(project, 'order-workflow.ts'));
  writeFileSync(
    join(project, 'greeting.mjs'),
    [
      "import { assign, setup } from 'xstate';",
      'export const VERSION = 1;',
      'export const greeting = setup({}).createMachine({',
      "  id: 'greeting', context: ({ input }) => ({ name: input.name }), initial: 'greeting',",
      "  states: { greeting: { always: 'done' }, done: { type: 'final' } },",
      "  output: ({ context }) => ({ status: 'done', greeting: 'hello ' + context.name }),",
      '});',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(project, 'two.mjs'),
    [
      "import { createMachine } from 'xstate';",
      "export const left = createMachine({ id: 'left' });",
      "export const right = createMachine({ id: 'right' });",
      'export function makeOne(kind) { return kind; }',
      '',
    ].join('\n'),
  );
  return project;
}

let project: string;
const at = () => ({ cwd: project });
/** A test of several processes one after another (about a second each when the machine is idle) gets the time they take on a busy one. */
const severalProcesses = 60_000;
const machine = './order-workflow.ts';

beforeAll(() => {
  project = userProject();
}, 120_000);

const running: Array<{ child: ChildProcess; done: Promise<CliResult> }> = [];
afterAll(async () => {
  for (const { child, done } of running.splice(0)) {
    child.kill('SIGTERM');
    await done;
  }
  // The links into node_modules go, not what they point at.
  rmSync(project, { recursive: true, force: true });
});

describe('actorloop start and send: a workflow of your own', () => {
  it('start runs it to the end: each conversation text by its path, the workflow events, the output as JSON; exit 0', async () => {
    const { code, stdout, stderr } = await actorloop(
      ['start', 'o1', '--machine', machine, '--input', '{"item":"lamp"}', '--db', 'runs.db'],
      {},
      undefined,
      at(),
    );
    expect(stderr).toContain('starting o1, a run of machine "order" (./order-workflow.ts), stored in runs.db');
    expect(stderr).toContain('[researcher] tool lookup started');
    expect(stdout.split('\n')).toEqual([
      '[researcher] lamp: 3 in stock',
      '[o1] order.found {"item":"lamp","found":"lamp: 3 in stock"}',
      JSON.stringify({ status: 'done', item: 'lamp', found: 'lamp: 3 in stock', payment: '' }),
      '',
    ]);
    expect(code).toBe(0);
  });

  it(
    'an approval with no terminal: start stores it waiting and says how to answer (exit 4); send approves, then sends the workflow event; list, show and history read it',
    async () => {
      const db = ['--db', 'approvals.db'];
      const started = await actorloop(
        ['start', 'o2', '--machine', machine, '--input', '{"item":"lamp","cents":8900}', ...db],
        {},
        undefined,
        at(),
      );
      expect(started.code).toBe(waitingExitCode);
      expect(started.stdout).not.toContain('"status"');
      const approve = `actorloop send o2 --db approvals.db --machine ./order-workflow.ts --event '{"type":"tool.approve","toolCallId":"charge-1"}'`;
      expect(started.stderr).toContain('o2 waits for approval of [payer] charge({"cents":8900}); it is stored in approvals.db');
      expect(started.stderr).toContain(`approve charge with: ${approve}`);

      const [shown, unread] = await Promise.all([
        actorloop(['show', 'o2', ...db, '--machine', machine], {}, undefined, at()),
        actorloop(['show', 'o2', ...db], {}, undefined, at()),
      ]);
      expect(shown.stdout).toContain('conversation [payer]: awaitingApproval');
      expect(shown.stdout).toContain('waiting for approval: [payer] charge({"cents":8900}) [charge-1]');
      // Without the module the CLI cannot read the run, and says what to add.
      expect(unread.code).toBe(1);
      expect(unread.stderr.split('\n')[0]).toBe(
        `actorloop: "o2" in approvals.db is a run of machine "order", not of the CLI's conversation machine: show it with --machine <module>[#export], the module that makes that machine`,
      );

      const approved = await actorloop(
        ['send', 'o2', ...db, '--machine', machine, '--event', '{"type":"tool.approve","toolCallId":"charge-1"}'],
        {},
        undefined,
        at(),
      );
      expect(approved.stdout).toBe('[payer] paid 89.00\n');
      expect(approved.stderr).toContain('[payer] tool charge started');
      expect(approved.stderr).toContain(
        `o2 waits for an event in state confirming (order.confirm); it is stored in approvals.db, and no terminal here can answer.`,
      );
      expect(approved.stderr).toContain(
        `send it one with: actorloop send o2 --db approvals.db --machine ./order-workflow.ts --event '{"type":"order.confirm"}'`,
      );
      expect(approved.code).toBe(waitingExitCode);

      const confirmed = await actorloop(
        ['send', 'o2', ...db, '--machine', machine, '--event', '{"type":"order.confirm"}'],
        {},
        undefined,
        at(),
      );
      expect(JSON.parse(confirmed.stdout)).toEqual({ status: 'done', item: 'lamp', found: 'lamp: 3 in stock', payment: 'paid 89.00' });
      expect(confirmed.code).toBe(0);
      const [again, history, list] = await Promise.all([
        actorloop(['send', 'o2', ...db, '--machine', machine, '--event', '{"type":"order.confirm"}'], {}, undefined, at()),
        actorloop(['history', 'o2', ...db], {}, undefined, at()),
        actorloop(['list', ...db], {}, undefined, at()),
      ]);
      // The run ended: another event is refused, nothing changed.
      expect(again.code).toBe(3);
      expect(again.stderr).toContain('"o2" is done: its run ended, there is nothing to send');
      const rows = history.stdout.trim().split('\n');
      expect(rows[0]).toBe('seq\tturn\ttime\tstatus\tstate');
      expect(rows.some((row) => /^\d+\t-\t\S+\tawaitingApproval\tpaying$/.test(row))).toBe(true);
      expect(rows.at(-1)).toMatch(/^\d+\t-\t\S+\tdone\tdone$/);
      expect(list.stdout).toMatch(/^o2\tdone\t/);
    },
    severalProcesses,
  );

  it(
    'cancel --machine ends a stored run that waits: halted, every conversation in it stopped; run --id refuses a run of another machine',
    async () => {
      const db = ['--db', 'cancelled.db'];
      const started = await actorloop(
        ['start', 'o4', '--machine', machine, '--input', '{"item":"lamp","cents":100}', ...db],
        {},
        undefined,
        at(),
      );
      expect(started.code).toBe(waitingExitCode);
      const [cancelled, run] = await Promise.all([
        actorloop(['cancel', 'o4', ...db, '--machine', machine, '--reason', 'out of stock'], {}, undefined, at()),
        actorloop(['run', ...db, '--id', 'o4', 'hi'], {}, undefined, at()),
      ]);
      expect(cancelled.stderr).toBe('actorloop: cancelled o4 (was awaitingApproval; now halted in paying)\n');
      expect(cancelled.code).toBe(0);
      expect(run.stderr).toContain('"o4" in cancelled.db is a run of machine "order", not a conversation of the CLI');
      expect(run.code).toBe(3);
      const shown = await actorloop(['show', 'o4', ...db, '--machine', machine], {}, undefined, at());
      expect(shown.stdout).toContain('output: {"status":"halted","reason":"cancelled","message":"out of stock"}');
    },
    severalProcesses,
  );

  it('Ctrl-C cancels the run: every conversation in it stopped, the workflow halted, its output printed; exit 130', async () => {
    const { sent, result } = await actorloopInterrupted(
      ['start', 'o3', '--machine', machine, '--input', '{"item":"slow"}'],
      {},
      'tool lookup started',
      at(),
    );
    expect(sent).toBe(true);
    expect(JSON.parse(result.stdout)).toEqual({ status: 'halted', reason: 'cancelled', message: 'interrupted (Ctrl-C)' });
    expect(result.stderr).toContain('o3 ended halted: cancelled: interrupted (Ctrl-C)');
    expect(result.code).toBe(130);
  });

  it('a plain JS module: its only machine export is taken; its input comes from --input', async () => {
    const { code, stdout } = await actorloop(
      ['start', 'g1', '--machine', 'greeting.mjs', '--input', '{"name":"Ada"}'],
      {},
      undefined,
      at(),
    );
    expect(stdout).toBe('{"status":"done","greeting":"hello Ada"}\n');
    expect(code).toBe(0);
  });
});

describe('actorloop serve --machine', () => {
  it('serves your machine: POST /start over a real socket starts a run, stored in --db; GET shows it done with its output', async () => {
    const token = 'local-token-0123456789';
    const { printed, child, done } = await startListening<{ url: string }>(
      ['serve', '--port', '0', '--machine', `${machine}#order`, '--db', 'served.db', '--token', token],
      {},
      at(),
    );
    running.push({ child, done });
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const started = await fetch(`${printed.url}/conversations/s1/start`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ input: { item: 'desk' } }),
    });
    expect(started.status).toBe(201);
    // Answered once its first state is stored; on a busy machine the run may be further on by then.
    expect(await started.json()).toMatchObject({ id: 's1', status: expect.stringMatching(/^(running|done)$/) });
    let view: { status?: string; output?: unknown } = {};
    for (const until = Date.now() + 10_000; Date.now() < until && view.status !== 'done'; ) {
      view = (await (await fetch(`${printed.url}/conversations/s1`, { headers })).json()) as typeof view;
      if (view.status !== 'done') await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(view).toMatchObject({ status: 'done', output: { status: 'done', item: 'desk', found: 'desk: 3 in stock' } });
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
    const list = await actorloop(['list', '--db', 'served.db'], {}, undefined, at());
    expect(list.stdout).toMatch(/^s1\tdone\t/);
  });
});

describe.concurrent('actorloop start: what is wrong on the command line is one line naming the flag (exit 1, as every usage error)', () => {
  for (const [args, first] of [
    [
      ['--machine', './nowhere.ts'],
      `--machine ./nowhere.ts: no such file (${'PROJECT'}/nowhere.ts); the path is relative to the current directory`,
    ],
    [
      ['--machine', `${machine}#nope`],
      '--machine ./order-workflow.ts#nope: no export "nope" (it exports default (a function), order (a machine))',
    ],
    [
      ['--machine', machine, '--input', '{item:lamp}'],
      `--input needs JSON, e.g. --input '{"topic":"Lumen"}' (the machine's input); "{item:lamp}" is not JSON`,
    ],
    [
      ['--machine', 'two.mjs'],
      '--machine two.mjs: no default export and several exported machines (it exports left (a machine), makeOne (a function), right (a machine)); name one of its machines (left, right) with two.mjs#<export>',
    ],
    [
      ['--machine', 'two.mjs#makeOne'],
      '--machine two.mjs#makeOne: export "makeOne" is a function of 1 argument; export a machine, or a function of no arguments that returns one',
    ],
  ] as const) {
    it(`start w1 ${args.join(' ')}`, async () => {
      const { code, stdout, stderr } = await actorloop(['start', 'w1', ...args], {}, undefined, at());
      const lines = stderr.split('\n');
      expect(lines[0]).toContain(`actorloop: ${first.replace('PROJECT', project)}`);
      expect(lines.slice(1)).toEqual([
        'usage: actorloop start <id> --machine <module>[#export] [--input <json>] [--session-data <json>] [--db <file>]',
        'actorloop --help lists every command and option',
        '',
      ]);
      expect(stdout).toBe('');
      expect(code).toBe(1);
    });
  }
});

describe('at a terminal (the follower in this process, answers typed by the test)', () => {
  function terminal(answers: string[]) {
    const out = { stdout: '', stderr: '', questions: [] as string[] };
    let interrupt: (() => void) | undefined;
    const environment: CliEnvironment = {
      env: {},
      stdout: { write: (text: string) => (out.stdout += text) },
      stderr: { write: (text: string) => (out.stderr += text) },
      onInterrupt(handler) {
        interrupt = handler;
        return () => undefined;
      },
      ask(question, signal) {
        out.questions.push(question);
        const answer = answers.shift();
        if (answer !== undefined) return Promise.resolve(answer);
        // No answer left: Ctrl-C while the question is open, which closes it.
        queueMicrotask(() => interrupt?.());
        return new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(new Error('closed')), { once: true }));
      },
    };
    return { out, environment };
  }
  const loaded = () => {
    const made = orderWorkflow();
    return { machine: made, spec: { module: machine, exportName: undefined }, label: machine };
  };

  it('asks each approval y/N and, once it waits for its own event, asks for one; the run ends done', async () => {
    const { out, environment } = terminal(['y', 'order.confirm']);
    const run = loaded();
    const host = createConversationHost({ machine: run.machine, store: memoryStore() });
    const { code, output } = await followMachineRun(
      host,
      't1',
      { db: undefined, loaded: run, start: async () => void (await host.start('t1', { input: { item: 'lamp', cents: 8900 } })) },
      environment,
    );
    await host.close();
    expect(out.questions).toEqual([
      '[payer] charge({"cents":8900}) needs approval. Approve? [y/N] ',
      't1 waits in confirming for order.confirm. Event to send (JSON, or its type; empty to stop here): ',
    ]);
    expect(output).toEqual({ status: 'done', item: 'lamp', found: 'lamp: 3 in stock', payment: 'paid 89.00' });
    expect(out.stdout).toContain('[payer] paid 89.00\n');
    expect(code).toBe(0);
  });

  it('a denied call is denied; Ctrl-C at the next question cancels the run (exit 130)', async () => {
    const { out, environment } = terminal(['n']);
    const run = loaded();
    const host = createConversationHost({ machine: run.machine, store: memoryStore() });
    const { code, output } = await followMachineRun(
      host,
      't2',
      { db: undefined, loaded: run, start: async () => void (await host.start('t2', { input: { item: 'lamp', cents: 8900 } })) },
      environment,
    );
    await host.close();
    expect(out.questions).toHaveLength(2);
    expect(out.questions[1]).toContain('t2 waits in confirming for order.confirm');
    expect(out.stdout).toContain('[payer] ');
    expect(out.stdout).not.toContain('paid 89.00');
    expect(output).toMatchObject({ status: 'halted', reason: 'cancelled' });
    expect(code).toBe(130);
  });

  it('an empty answer stops at the event; a run in memory only says nothing keeps it (exit 1)', async () => {
    const { out, environment } = terminal(['y', '']);
    const run = loaded();
    const host = createConversationHost({ machine: run.machine, store: memoryStore() });
    const { code } = await followMachineRun(
      host,
      't3',
      { db: undefined, loaded: run, start: async () => void (await host.start('t3', { input: { item: 'lamp', cents: 100 } })) },
      environment,
    );
    await host.close();
    expect(out.stderr).toContain(
      't3 waits for an event in state confirming (order.confirm): it was in memory only (no --db), so it ends here',
    );
    expect(code).toBe(1);
  });
});
