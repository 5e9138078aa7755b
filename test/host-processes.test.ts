/**
 * Approvals across processes (DESIGN §6): a run waiting for approval is stored; its process is
 * killed; hosts in other processes approve or deny, and the run completes there.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createConversationHost, type RunOutput } from '../src/index.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { supportScript } from './support/built-tree.js';
import { approvalMachine, transferCallId } from './support/approval-scenario.js';
import { expectValidForBothWires } from './support/history.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-approval-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const script = supportScript('approval-worker.ts');

function worker(args: string[]): { child: ChildProcess; message: Promise<Record<string, unknown>>; exit: Promise<string> } {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exit = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(signal ?? `code ${code}`)));
  const message = new Promise<Record<string, unknown>>((resolve, reject) => {
    child.once('message', (value) => resolve(value as Record<string, unknown>));
    void exit.then((how) => reject(new Error(`worker ${args.join(' ')} exited (${how}) before it reported`)));
  });
  return { child, message, exit };
}

describe('approvals across processes', () => {
  it('a run waiting in one process (then killed) is approved in another and denied in a third; both complete', async () => {
    const path = join(work, 'approvals.db');
    const starter = worker([path, 'start', 'pay-a', 'pay-b']);
    expect(await starter.message).toEqual({ type: 'waiting', executions: [] });
    starter.child.kill('SIGKILL');
    expect(await starter.exit).toBe('SIGKILL');

    // This process sees both runs waiting, stored by the dead one.
    const executions: string[] = [];
    const host = createConversationHost({ machine: approvalMachine(executions), store: sqliteStore({ path }), hostId: 'test-process' });
    for (const id of ['pay-a', 'pay-b']) {
      expect(await host.get(id)).toMatchObject({
        status: 'awaitingApproval',
        value: 'awaitingApproval',
        pendingApprovals: [{ toolCallId: transferCallId(id), name: 'transfer', args: { cents: 4200 } }],
      });
    }

    // Another process approves pay-a; the tool runs there and the run completes there.
    const approver = worker([path, 'approve', 'pay-a', transferCallId('pay-a')]);
    const approved = (await approver.message) as { type: string; output: RunOutput; executions: string[] };
    expect(await approver.exit).toBe('code 0');
    expect(approved.executions).toEqual([transferCallId('pay-a')]);
    expect(approved.output).toMatchObject({ status: 'done', text: 'finished pay-a', iterations: 1 });
    expect(approved.output.messages[2]).toMatchObject({
      role: 'tool',
      content: [{ toolCallId: transferCallId('pay-a'), result: `transferred 4200 in process ${approver.child.pid}` }],
    });
    expect(await host.result('pay-a')).toEqual(approved.output);

    // This process denies pay-b.
    await host.send('pay-b', { type: 'tool.deny', toolCallId: transferCallId('pay-b'), reason: 'not this month' });
    const denied = await host.result('pay-b');
    expect(denied).toMatchObject({ status: 'done', text: 'finished pay-b' });
    expect(denied.messages[2]).toMatchObject({
      content: [{ toolCallId: transferCallId('pay-b'), result: 'denied by user: not this month', isError: true }],
    });
    expect(executions).toEqual([]);
    for (const output of [approved.output, denied]) expectValidForBothWires(output.messages);
    // The log shows who decided, in order.
    const store = sqliteStore({ path });
    expect((await store.readLog('pay-b')).map(({ event }) => event.type)).toEqual([
      'user.message',
      'tool.call',
      'tool.deny',
      'tool.result',
      'run.ended',
    ]);
    expect((await store.load('pay-a'))?.owner).toBe('worker-approve');
    await store.close();
    await host.close();
  }, 60_000);
});
