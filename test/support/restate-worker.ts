/**
 * A worker process of the Restate tests: serves the conversation object on 127.0.0.1 (an endpoint
 * handler on its own HTTP/2 server — `restate.serve` would bind every interface) and tells its
 * parent over IPC what it is doing, so a test can kill it (SIGKILL) in the middle of a tool call
 * or a request. Run alone or as a node:cluster worker sharing the port with others.
 *
 * argv: <port> <executions side file> <journaled side file> <wire server url>
 */
import { appendFileSync } from 'node:fs';
import http2 from 'node:http2';
import * as restate from '@restatedev/restate-sdk';
import { restateConversations } from '../../src/scale/restate/index.js';
import { restateScenarioMachine } from './restate-scenario.js';

export type RestateWorkerMessage =
  | { type: 'listening'; pid: number; port: number }
  | { type: 'phase'; pid: number; phase: 'tool'; tool: string };

const [port, executions, journaled, url] = process.argv.slice(2);
if (!port || !executions || !journaled || !url) throw new Error('usage: restate-worker.ts <port> <executions> <journaled> <wire url>');
const report = (message: RestateWorkerMessage) => process.send?.(message);

const machine = restateScenarioMachine(url, executions, (tool) => report({ type: 'phase', pid: process.pid, phase: 'tool', tool }));
const conversations = restateConversations({
  machine,
  onEvent: ({ event: emitted }) => {
    // An agent call's child's events come as agent.event: its requests are journaled steps too.
    const event = emitted.type === 'agent.event' ? emitted.event : emitted;
    // The step's result is in the journal before the run sees it: this response is never requested again.
    if (event.type === 'request.finished' && event.responseId) appendFileSync(journaled, `${event.responseId} ${Date.now()}\n`);
  },
});
// The test kills workers and the server: the SDK's reports of attempts cut short are expected, not printed.
const expected = /abort error from connection|stream has been destroyed|attempt ended|Invocation suspended|closed/i;
const logger: restate.LoggerTransport = (meta, message, ...rest) => {
  if (meta.level !== 'error' || expected.test(`${String(message)} ${rest.map(String).join(' ')}`)) return;
  console.error(`[worker ${process.pid}]`, message, ...rest);
};
const server = http2.createServer(restate.createEndpointHandler({ services: [conversations], logger }));
server.listen(Number(port), '127.0.0.1', () => report({ type: 'listening', pid: process.pid, port: Number(port) }));
// Orphaned (the test or the cluster primary died): nothing to serve for.
process.on('disconnect', () => process.exit(0));
