/**
 * Every example in examples/ runs as a process, offline (no key or base URL in its environment),
 * and prints what its header promises: a scripted model on a local replay server or in-process,
 * real tools, real SDKs where the example is about a wire. A new example must get a case here.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };

const root = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'actorloop-examples-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The environment without anything that would make an example go live. */
const offline: NodeJS.ProcessEnv = Object.fromEntries(
  Object.entries(process.env).filter(([name]) => !/^(OPENAI|ANTHROPIC)_(API_KEY|BASE_URL|MODEL)$/.test(name)),
);

async function run(file: string, args: string[] = []): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', file, ...args], {
    cwd: root,
    env: offline,
    timeout: 60_000,
  });
  return stdout;
}

/** Cases by example name; the last test checks that every example has one. */
const covered = new Set(['demo']); // test/demo.test.ts

function example(name: string, check: (stdout: string) => void | Promise<void>, args: string[] = []) {
  covered.add(name);
  it(`examples/${name}.ts`, async () => {
    const stdout = await run(`examples/${name}.ts`, args);
    expect(stdout.split('\n')[0]).toMatch(new RegExp(`^actorloop example "${name}" — OFFLINE: a SCRIPTED model`));
    await check(stdout);
  });
}

describe('examples run offline', { timeout: 90_000 }, () => {
  example('openai', (stdout) => {
    expect(stdout).toContain('on the local replay server http://127.0.0.1:');
    expect(stdout).toContain('[tool.call] get_time({"timeZone":"Asia/Tokyo"})');
    expect(stdout).toContain('[tool.call] get_time({"timeZone":"Europe/Lisbon"})');
    // The real tool ran: a formatted local time, not a scripted string.
    expect(stdout).toMatch(/\[tool\.result\] get_time → \d{1,2} \w{3,4} \d{4}, \d{2}:\d{2}\n/);
    expect(stdout).toMatch(/\[answer\] In Tokyo it is \d.+; in Lisbon it is \d.+\.\n/);
    expect(stdout).toContain('[output] status=done iterations=1');
  });

  example('anthropic', (stdout) => {
    expect(stdout).toContain('on the local replay server http://127.0.0.1:');
    expect(stdout).toContain('[thinking] Two dates; the tool counts the days exactly.\nLet me count.\n');
    expect(stdout).toContain('[tool.result] days_between → {"from":"1969-07-20","to":"1998-11-20","days":10715}');
    expect(stdout).toContain('[answer] 10715 days passed between the two.');
    expect(stdout).toContain('[history] 1 thinking block(s), signed: true');
  });

  example('openai-compatible', (stdout) => {
    // The model was found through GET /models, as with Ollama or vLLM.
    expect(stdout).toContain('a SCRIPTED model "scripted-model" on the local replay server');
    expect(stdout).toContain('[tool.call] package_field({"field":"peerDependencies"})');
    expect(stdout).toContain(`[answer] actorloop accepts xstate ${pkg.peerDependencies.xstate}.`);
  });

  example('agents-supervisor', (stdout) => {
    // Both researchers start before either answers: the two agent calls of the round run at once.
    const lines = stdout.split('\n');
    const started = lines.filter((line) => line.startsWith('[agent.started]'));
    expect(started).toEqual(['[agent.started] ask_historian (call_0_0)', '[agent.started] ask_scientist (call_0_1)']);
    expect(lines.findIndex((line) => line.startsWith('[agent.started] ask_scientist'))).toBeLessThan(
      lines.findIndex((line) => line.startsWith('[agent.finished] ask_historian')),
    );
    // The children's own tool calls, seen by the writer with their path; the real tool ran.
    expect(stdout).toContain('  [call_0_0] tool.result look_up → The Pharos of Alexandria');
    expect(stdout).toContain('  [call_0_1] tool.result look_up → A Fresnel lens');
    expect(stdout).toContain('[tool.result] ask_scientist → A Fresnel lens, introduced in 1823');
    expect(stdout).toContain('[output] status=done iterations=1');
    const usage = lines.filter((line) => line.startsWith('[usage]'));
    expect(usage.map((line) => line.replace(/\d+ tokens/, 'N tokens'))).toEqual([
      '[usage] (root) writer: N tokens',
      '[usage] call_0_0 ask_historian: N tokens',
      '[usage] call_0_1 ask_scientist: N tokens',
    ]);
    const total = Number(/tokens=(\d+)/.exec(stdout)?.[1]);
    const shares = usage.map((line) => Number(/(\d+) tokens/.exec(line)?.[1]));
    expect(shares.reduce((sum, share) => sum + share, 0)).toBe(total);
  });

  example('agents-handoff', (stdout) => {
    const handoffs = stdout.split('\n').filter((line) => line.startsWith('[agent.handoff]'));
    expect(handoffs).toEqual(['[agent.handoff] triage → billing', '[agent.handoff] billing → triage']);
    expect(stdout).toContain('[tool.result] refund_duplicate_charge → refunded €80 for order B-7');
    expect(stdout).toContain('[output] status=done iterations=3');
    expect(stdout).toContain('[agent] the conversation ended with triage');
  });

  example('budget', (stdout) => {
    expect(stdout).toContain('[tool.result] read_page → not executed: the run reached its budget (maxTotalTokens) (error)');
    expect(stdout).toMatch(/\[tokens\] status=halted reason=budget iterations=\d+ tokens=\d+/);
    expect(stdout).toMatch(/\[tokens\] budget maxTotalTokens: used \d+ of 3000/);
    expect(stdout).toMatch(/\[cost\] budget maxCostUsd: used \$0\.000\d+ of \$0\.000500/);
  });

  example('guardrails', (stdout) => {
    expect(stdout).toContain('[guardrail.checked] output moderation: passed');
    expect(stdout).toContain('[output] status=done');
    expect(stdout).toContain('[output] status=halted reason=guardrail guardrail=no-card-numbers');
    expect(stdout).toContain('[guardrail.checked] output moderation: tripped (UNSAFE: leaks a credential)');
    expect(stdout).toContain('[output] status=halted reason=guardrail guardrail=moderation');
  });

  example('steering', (stdout) => {
    expect(stdout).toContain('[user.message.queued] I do not eat meat. (1 waiting)');
    expect(stdout).toContain('[request.interrupted] in executingTools');
    expect(stdout).toContain('[tool.result] search_flights → cancelled: the user interrupted the run (error)');
    expect(stdout).toContain('[history] user → assistant → tool → user → user → assistant → tool → assistant');
    expect(stdout).toContain('[output] status=done iterations=2');
  });

  example('compaction', (stdout) => {
    expect(stdout).toMatch(/\[context\.compacted\] \d+ messages → summary; \d+ → \d+ tokens \(kept 4\)/);
    for (const orderId of ['A-1', 'A-2', 'A-3', 'A-4']) expect(stdout).toContain(`[turn ${orderId}] done: Order ${orderId} is on its way`);
  });

  example('fallback', (stdout) => {
    expect(stdout.match(/\[provider\.fallback\] openai:scripted-model → anthropic:scripted-model after: 503/g)).toHaveLength(2);
    expect(stdout).toContain('[tool.result] tide_times → Porto 11:42 and 23:58');
    expect(stdout).toContain('High tide: Porto 11:42 and 23:58.');
    expect(stdout).toContain('[output] status=done iterations=1');
  });

  example('approvals', (stdout) => {
    const approvalRequests = stdout.split('\n').filter((line) => line.startsWith('[tool.approval.requested]'));
    expect(approvalRequests).toEqual([
      '[tool.approval.requested] issue_refund({"orderId":"B-7"})',
      '[tool.approval.requested] issue_refund({"orderId":"C-3"})',
    ]);
    expect(stdout).toContain('[tool.approve] call_0_1');
    expect(stdout).toContain('[tool.deny] call_0_2: over €100');
    expect(stdout).toContain('[tool.result] issue_refund → refunded order A-1: €20\n');
    expect(stdout).toContain('[tool.result] issue_refund → refunded order B-7: €80\n');
    expect(stdout).toContain(
      '[tool.result] issue_refund → denied by user: over €100, which needs a person, and no one is at a terminal (error)',
    );
    expect(stdout).toContain('[output] status=done iterations=1');
  });

  example('custom-provider', (stdout) => {
    expect(stdout).toMatch(/\[request\.retry\] attempt 2 in 200 ms after: http:\/\/127\.0\.0\.1:\d+\/v1 answered 503/);
    expect(stdout).toContain('[tool.result] convert_temperature → {"value":232.8,"unit":"C"}');
    expect(stdout).toContain('[answer] 451 °F is 232.8 °C, so it is hotter than 200 °C.');
  });

  example('session-data', (stdout) => {
    expect(stdout).toContain('[ada] [tool.result] list_orders → ["analytical engine manual","punched cards ×500"]');
    expect(stdout).toContain('[linus] [tool.result] list_orders → ["mechanical keyboard"]');
    expect(stdout).toContain('[linus] [answer] Your orders: mechanical keyboard.');
    expect(stdout).toContain('[pool in sessionData] status=error: input.sessionData.db must be plain JSON');
  });

  // Run as a process, its page followed in Chromium, by test/live-viewer.test.ts.
  covered.add('live-viewer');

  example('mcp-server', (stdout) => {
    expect(stdout).toMatch(/\[mcp\] serving ask_support on http:\/\/127\.0\.0\.1:\d+\/mcp\n/);
    expect(stdout).toContain(
      '[progress 2] calling tool lookup_order\n[progress 3] tool lookup_order answered\n[progress 4] round 2: asking the model\n',
    );
    expect(stdout).toContain('[answer] Done: order A-1: desk lamp, €20, shipped.\n');
    expect(stdout).toContain('[elicitation] The agent wants to call the tool "refund" with {"orderId":"B-7"}');
    expect(stdout).toContain('[elicitation] answered approve=true\n[progress 3] calling tool refund\n');
    expect(stdout).toContain('[answer] Done: refunded order B-7: €80.\n');
    // The second call of the session continued its conversation: five replies came before it.
    expect(stdout).toContain('[answer] You are Ana — this conversation has 5 earlier replies.\n');
    expect(stdout).toMatch(/\[error\] the run waits for approval of "refund" \(call call_0_0, arguments \{"orderId":"C-3"\}\)/);
    expect(stdout).toContain('[host] the run ended: Done: denied by user: over the limit.\n');
    expect(stdout).toContain('\n[mcp] closed\n');
  });

  example('a2a-server', (stdout) => {
    expect(stdout).toMatch(/\[card\] Order desk 1\.0\.0: JSONRPC http:\/\/127\.0\.0\.1:\d+\/a2a\n/);
    expect(stdout).toContain('[task] working\n[status] completed\n[answer] Order B-7 left the warehouse this morning.\n');
    expect(stdout).toContain('[task] same task, completed: It should arrive on Thursday.\n');
    expect(stdout).toContain('[task] input-required: Approval needed for issue_refund({"orderId":"B-7"}) [call_2_0]\n');
    expect(stdout).toContain('[task] completed: Done: refunded order B-7.\n');
    expect(stdout).toContain('[history] 6 messages, 3 answers\n');
    expect(stdout).toMatch(/\[auth\] refused: forbidden: not allowed to use task [0-9a-f-]{36}\n/);
  });

  example('mcp', (stdout) => {
    expect(stdout).toContain('[mcp] tools: notes_add_note, notes_delete_note, notes_chart_notes, notes_enable_export\n');
    // An image result: it goes to the model as an image part; its text names it by a label.
    expect(stdout).toContain('[tool.result] notes_chart_notes → Chart of 1 note:\n[image image/png, 68 B]');
    expect(stdout).toContain('[answer] Done: Saved "shopping" (1 note). | Chart of 1 note:\n[image image/png, 68 B]');
    expect(stdout).toContain('[tool.approval.requested] notes_delete_note({"title":"shopping"})\n[tool.approve] call_2_0\n');
    expect(stdout).toContain('[tool.result] notes_delete_note → Deleted "shopping".');
    expect(stdout).toContain(
      "[mcp] the server's tool list changed: notes_add_note, notes_delete_note, notes_chart_notes, notes_enable_export, notes_export_notes",
    );
    expect(stdout).toContain('[tool.result] notes_export_notes → # meeting\nTuesday 10:00');
    expect(stdout.match(/\[output\] status=done iterations=1/g)).toHaveLength(4);
    expect(stdout).toContain('[mcp] closed: the server process has ended.');
  });

  example('workflow-review', (stdout) => {
    // Each conversation and each decision in turn: a rejection sends the draft back to the writer, then it is published.
    const lines = stdout.split('\n').slice(1, -1);
    expect(lines.map((line) => /^\[[\w.]+\]/.exec(line)?.[0])).toEqual([
      '[writer]',
      '[reviewer]',
      '[person]',
      '[writer]',
      '[reviewer]',
      '[person]',
      '[output]',
      '[published]',
    ]);
    expect(lines[2]).toBe('[person] review.reject: Say what it costs and when it ships.');
    // The second draft answers the note: the writer got it.
    expect(lines[3]).toBe('[writer] Lumen, our desk lamp, ships on 3 March for €89. Warm light, one touch, no app.');
    expect(lines[5]).toBe('[person] review.approve: Good to go.');
    expect(lines[6]).toBe('[output] published after 1 revision(s)');
    expect(lines[7]).toBe(`[published] ${lines[3]?.slice('[writer] '.length)}`);
  });

  example('workflow-map-reduce', (stdout) => {
    // How many summarizers ran at once, from their events as printed (a request is all a summarizer does).
    const running = new Set<string>();
    let most = 0;
    const started: string[] = [];
    for (const [, id, what] of stdout.matchAll(/^\[(summary-\d)\] request\.(started|finished)/gm)) {
      if (what === 'started') started.push(id!);
      if (what === 'started') running.add(id!);
      else running.delete(id!);
      most = Math.max(most, running.size);
    }
    expect(most).toBe(4);
    expect(started.sort()).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `summary-${i}`));
    expect(running.size).toBe(0);
    // The reducer starts once every summarizer is done.
    const summarizersDone = Math.max(...[...stdout.matchAll(/^\[summary-\d\] request\.finished/gm)].map(({ index }) => index));
    expect(stdout.indexOf('[reduce] request.started')).toBeGreaterThan(summarizersDone);
    expect(stdout).toContain('[output] done: 7 of 7 summaries reduced, at most 4 at once\n');
    const summary = /^\[summary\] (.*)$/m.exec(stdout)?.[1] ?? '';
    expect(summary).toMatch(/^7 facts: /);
    for (const fact of ['Otters hold hands', 'The Pharos of Alexandria', 'Honey found', 'three hearts', 'Venus', 'Bananas', 'Eiffel Tower'])
      expect(summary).toContain(fact);
  });

  example('fault-soak', (stdout) => {
    // The soak finds the planted bug (a workflow stuck waiting for a review nobody asked for), replays it, and passes the fix.
    expect(stdout).toMatch(/^actorloop example "fault-soak" — OFFLINE: a SCRIPTED model/);
    expect(stdout).toMatch(/\[violation\] seed \d+ \(run \d+\): did not end within 250 ms of its last fault: stuck in "awaitingReview"/);
    expect(stdout).toMatch(/\[reproduction\] faultSoak\(machine, \{ runs: 1, seed: \d+, plan: \{.+\} \}\)/);
    expect(stdout).toMatch(/\[replayed\] seed \d+: did not end within 250 ms of its last fault: stuck in "awaitingReview"/);
    expect(stdout).toMatch(/\[fixed\] 20 runs in \d+ ms, .*, 0 violation\(s\)/);
  });

  example('workflow-router', (stdout) => {
    const routes = stdout.split('\n').filter((line) => line.startsWith('[routed]'));
    expect(routes).toEqual([
      '[routed] "billing" → billing: answered',
      '[routed] "Technical." → technical: answered',
      '[routed] "other" → general: answered',
      '[routed] "shipping" → fallback: answered',
    ]);
    // The specialists' own events, by their paths: each question reached the one it was routed to, and only that one.
    const specialists = [...stdout.matchAll(/^ {2}\[(\w+)\] request\.started/gm)]
      .map(([, path]) => path)
      .filter((path) => path !== 'classifier');
    expect(specialists).toEqual(['billing', 'billing', 'technical', 'general', 'fallback']);
    expect(stdout).toContain(
      '  [billing] tool.call find_invoice({"invoiceId":"INV-1042"})\n  [billing] tool.result find_invoice → INV-1042: €49, charged 2 time(s)\n',
    );
    expect(stdout).toContain('[answer] I checked INV-1042: €49, charged 2 time(s). The second charge is refunded within five days.');
    expect(stdout).toContain('[answer] Is this about an order you placed, or one you are about to place?');
  });

  example('workflow-agent-tree', (stdout) => {
    // The agent tree's events with their whole path: the workflow's invoke id, then the agent call's id.
    const paths = new Set([...stdout.matchAll(/^\[([\w/]+)\] /gm)].map(([, path]) => path));
    expect(paths).toEqual(new Set(['research', 'research/call_0_0', 'research/call_0_1', 'format', 'output']));
    expect(stdout).toContain('[research] agent.started ask_researcher (call_0_0)\n[research] agent.started ask_researcher (call_0_1)\n');
    expect(stdout).toContain(
      '[research/call_0_0] tool.result look_up → The Pharos of Alexandria, finished around 280 BC, stood for about 1,500 years.',
    );
    expect(stdout).toContain('[research/call_0_1] tool.result look_up → A Fresnel lens, introduced in 1823, lets a lighthouse beam reach');
    // The second step starts once the first has ended.
    expect(stdout.indexOf('[format] request.started')).toBeGreaterThan(stdout.lastIndexOf('[research'));
    expect(stdout).toContain(
      '[output] done\n[list]\n- The Pharos of Alexandria, finished around 280 BC, stood for about 1,500 years.\n- A Fresnel lens, introduced in 1823, lets a lighthouse beam reach more than 30 km.\n',
    );
  });

  covered.add('save-and-restore');
  it('examples/save-and-restore.ts: saved by one process, finished by another', async () => {
    const file = join(work, 'run.json');
    const saved = await run('examples/save-and-restore.ts', ['save', file]);
    expect(saved.split('\n')[0]).toMatch(/OFFLINE: a SCRIPTED model/);
    expect(saved).toContain('[tool.approval.requested] publish_post({"title":"Hello, actors"})');
    expect(saved).toContain(`[save] waiting for approval; run saved to ${file}`);
    const snapshot = JSON.parse(readFileSync(file, 'utf8')) as { value: unknown; context: { sessionData: unknown } };
    expect(snapshot.value).toBe('awaitingApproval');
    expect(snapshot.context.sessionData).toEqual({ author: 'ada' });

    const restored = await run('examples/save-and-restore.ts', ['restore', file]);
    expect(restored).toContain(`[restore] from ${file}: state "awaitingApproval", 2 messages`);
    expect(restored).toContain('[tool.result] publish_post → published "Hello, actors" by ada');
    expect(restored).toContain('[output] status=done iterations=1');
    expect(existsSync(file)).toBe(false);
  });

  it('npm run example -- <name> runs an example with its arguments, and lists them when the name is unknown', async () => {
    const file = join(work, 'via-runner.json');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'scripts/example.ts', 'save-and-restore', 'save', file],
      {
        cwd: root,
        env: offline,
        timeout: 60_000,
      },
    );
    expect(stdout).toContain(`run saved to ${file}`);
    const unknown = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/example.ts', 'nope'], {
      cwd: root,
      env: offline,
    }).then(
      () => expect.fail('an unknown example must fail'),
      (error: { code: number; stderr: string }) => error,
    );
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('No example "nope"');
    expect(unknown.stderr).toMatch(/Examples: .*approvals.*save-and-restore/);
  });

  it('every example has a case here', () => {
    const examples = readdirSync(join(root, 'examples'))
      .filter((file) => file.endsWith('.ts'))
      .map((file) => file.slice(0, -3));
    expect(examples.filter((name) => !covered.has(name))).toEqual([]);
  });

  it('every example that is a folder (examples/<name>/main.ts) has its own test, test/<name>.test.ts', () => {
    const folders = readdirSync(join(root, 'examples'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && existsSync(join(root, 'examples', entry.name, 'main.ts')))
      .map((entry) => entry.name);
    expect(folders).toContain('http-service');
    expect(folders.filter((name) => !existsSync(join(root, 'test', `${name}.test.ts`)))).toEqual([]);
  });
});
