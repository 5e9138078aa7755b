/**
 * The RESTATE scenario's workers (bench/restate.ts): a node:cluster primary that forks `count`
 * workers sharing one port on 127.0.0.1, each serving the bench machine (`add` tool, the bench wire
 * server as the model) as a Restate conversation object on its own HTTP/2 server. The primary tells
 * its parent `{ type: 'ready' }` once every worker listens, and stops them all when told or orphaned.
 *
 * argv: <port> <count> <wire baseURL> <rounds>
 */
import cluster from 'node:cluster';
import http2 from 'node:http2';
import * as restate from '@restatedev/restate-sdk';
import { createConversationMachine, defineTool, openaiProvider } from '../src/index.js';
import { restateConversations } from '../src/scale/restate/index.js';
import { addDescription, addExecutor, addName, addSchema } from './tool.js';

const [port, count, baseURL, rounds] = process.argv.slice(2);
if (!port || !count || !baseURL || !rounds) throw new Error('usage: restate-worker.ts <port> <count> <wire baseURL> <rounds>');

if (cluster.isPrimary) {
  let listening = 0;
  const stopAll = () => {
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
    process.exit(0);
  };
  for (let index = 0; index < Number(count); index++) {
    cluster.fork().on('listening', () => {
      if (++listening === Number(count)) process.send?.({ type: 'ready' });
    });
  }
  process.on('message', (message: { type: string }) => {
    if (message.type === 'stop') stopAll();
  });
  process.on('disconnect', stopAll);
} else {
  const execute = addExecutor();
  const machine = createConversationMachine({
    provider: openaiProvider({ model: 'bench-model', apiKey: 'bench', baseURL }),
    tools: [defineTool({ name: addName, description: addDescription, parameters: addSchema, execute: (args) => execute(args) })],
    maxToolIterations: Number(rounds) + 1,
  });
  const logger: restate.LoggerTransport = (meta, message, ...rest) => {
    if (meta.level === 'error') console.error(`[bench worker ${process.pid}]`, message, ...rest);
  };
  const server = http2.createServer(restate.createEndpointHandler({ services: [restateConversations({ machine })], logger }));
  server.listen(Number(port), '127.0.0.1');
  process.on('disconnect', () => process.exit(0));
}
