/**
 * A process of the cross-process approval test. `start`: starts the conversations given, which
 * stop at an approval, and reports once both are stored waiting. `approve`: approves one waiting
 * call and reports the run's output. The test runs the other side in its own process.
 *
 * argv: <database path> start <id>... | approve <id> <toolCallId>
 */
import { createConversationHost } from '../../src/index.js';
import { sqliteStore } from '../../src/stores/sqlite/index.js';
import { approvalMachine } from './approval-scenario.js';

const [path, mode, ...rest] = process.argv.slice(2);
if (!path || (mode !== 'start' && mode !== 'approve'))
  throw new Error('usage: approval-worker.ts <database> start <id>... | approve <id> <toolCallId>');
const executions: string[] = [];
const host = createConversationHost({ machine: approvalMachine(executions), store: sqliteStore({ path }), hostId: `worker-${mode}` });
if (mode === 'start') {
  for (const id of rest) await host.send(id, { type: 'user.message', content: `${id}: pay the invoice` });
  // Waiting as the store has it, not as this host's memory does: the parent kills this process
  // once told, and a run the host has not written yet would be lost with it.
  const stored = sqliteStore({ path });
  for (;;) {
    const records = await Promise.all(rest.map((id) => stored.load(id)));
    if (records.every((record) => record?.status === 'awaitingApproval')) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await stored.close();
  process.send?.({ type: 'waiting', executions });
  // The parent kills this process: nothing of the waiting runs may live only in its memory.
  await new Promise(() => undefined);
} else {
  const [id, toolCallId] = rest;
  if (!id || !toolCallId) throw new Error('approve needs <id> <toolCallId>');
  await host.send(id, { type: 'tool.approve', toolCallId });
  const output = await host.result(id);
  process.send?.({ type: 'done', output, executions }, () => process.exit(0));
}
