/**
 * A worker process of the Restate workflow test: serves the order workflow's object (name
 * `orderKill`) on 127.0.0.1 and tells its parent over IPC when it listens and when a tool starts,
 * so the test can kill it (SIGKILL) while a tool runs or right after one finished.
 *
 * argv: <port> <executions side file> <requests side file> <sides whose lookup holds, comma-separated>
 */
import http2 from 'node:http2';
import * as restate from '@restatedev/restate-sdk';
import { restateConversations } from '../../src/scale/restate/index.js';
import { restateOrderWorkflow } from './restate-workflow.js';

export type RestateWorkflowWorkerMessage = { type: 'listening'; pid: number } | { type: 'tool'; pid: number; tool: string; detail: string };

const [port, executions, requests, hold = ''] = process.argv.slice(2);
if (!port || !executions || !requests) throw new Error('usage: restate-workflow-worker.ts <port> <executions> <requests> [hold]');
const report = (message: RestateWorkflowWorkerMessage) => process.send?.(message);

const { machine } = restateOrderWorkflow({
  executions,
  requests,
  hold: hold.split(',').filter(Boolean),
  onTool: (tool, detail) => report({ type: 'tool', pid: process.pid, tool, detail }),
});
const orders = restateConversations({ machine, name: 'orderKill' });
// The test kills this process: the SDK's reports of attempts cut short are expected, not printed.
const expected = /abort error from connection|stream has been destroyed|attempt ended|Invocation suspended|closed|segment ended/i;
const logger: restate.LoggerTransport = (meta, message, ...rest) => {
  if (meta.level !== 'error' || expected.test(`${String(message)} ${rest.map(String).join(' ')}`)) return;
  console.error(`[workflow worker ${process.pid}]`, message, ...rest);
};
const server = http2.createServer(restate.createEndpointHandler({ services: [orders], logger }));
server.listen(Number(port), '127.0.0.1', () => report({ type: 'listening', pid: process.pid }));
// Orphaned (the test died): nothing to serve for.
process.on('disconnect', () => process.exit(0));
