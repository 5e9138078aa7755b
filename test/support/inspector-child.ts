/**
 * A process that streams one run to a Stately WebSocket inspector and then simply ends, without
 * calling `stop()`: `test/stately-inspector.test.ts` checks that it exits on its own, whether or
 * not a server listens at the URL given as the first argument.
 */
import { createActor, toPromise } from 'xstate';
import { createConversationMachine, handlerProvider } from '../../src/index.js';
import { createStatelyInspector } from '../../src/observe/inspect/index.js';
import { scriptedModel } from './scripted-model.js';

const url = process.argv[2] ?? 'ws://127.0.0.1:9';
const errors: string[] = [];
const inspector = await createStatelyInspector({ url, reconnectDelayMs: 50, onError: (error) => errors.push(error.message) });
const model = scriptedModel([{ text: 'hello from the child' }]);
const machine = createConversationMachine({ provider: handlerProvider(model.handler) });
const actor = createActor(machine, { input: { messages: [] }, inspect: inspector.inspect }).start();
actor.send({ type: 'user.message', content: 'hi' });
const output = await toPromise(actor);
// Give the inspector's timers a turn, so a connection attempt is under way when the script ends.
await new Promise((resolve) => setTimeout(resolve, 200));
console.log(JSON.stringify({ status: output.status, errors: errors.length }));
