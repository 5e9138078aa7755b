// `actorloop/restate` as a worker installs it (the package, xstate, @restatedev/restate-sdk): type-checked with
// strict and skipLibCheck: false, then run — the conversation object built and bound to an endpoint handler.
import http2 from 'node:http2';
import * as restate from '@restatedev/restate-sdk';
import { createConversationMachine, handlerProvider } from 'actorloop';
import { type ConversationObject, type RestateConversationEvent, restateConversations } from 'actorloop/restate';

const machine = createConversationMachine({
  provider: handlerProvider(async function* () {
    yield { choices: [{ index: 0, delta: { content: 'Hi.' }, finish_reason: 'stop' }] };
  }),
});
const seen: RestateConversationEvent[] = [];
const conversations: ConversationObject = restateConversations({ machine, name: 'chat', onEvent: (event) => seen.push(event) });
const server = http2.createServer(restate.createEndpointHandler({ services: [conversations] }));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
server.close();
console.log(
  JSON.stringify({ name: conversations.name, withResolvers: typeof (Promise as unknown as { withResolvers?: unknown }).withResolvers }),
);
