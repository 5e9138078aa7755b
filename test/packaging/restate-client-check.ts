// `actorloop/restate/client` as a caller installs it (the package, xstate, @restatedev/restate-sdk-clients; no
// restate-sdk): type-checked with strict and skipLibCheck: false, then run against an ingress that is not there.
import { type RestateConversationClient, restateConversationClient } from 'actorloop/restate/client';

const client: RestateConversationClient = restateConversationClient({ url: 'http://127.0.0.1:9' });
const failed = await client.get('c-1').then(
  () => 'answered',
  (error: unknown) => (error instanceof Error ? 'rejected' : 'odd'),
);
let invalid = '';
try {
  await client.send('', { type: 'user.message', content: 'hi' });
} catch (error) {
  invalid = (error as Error).name;
}
console.log(JSON.stringify({ failed, invalid }));
