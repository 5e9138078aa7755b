/**
 * `actorloop/restate`: conversations as Restate virtual objects, served by any number of worker
 * processes, and the client other processes call them with. Needs the optional peers
 * `@restatedev/restate-sdk` (workers) and `@restatedev/restate-sdk-clients` (the client; a caller
 * that needs only the client imports `actorloop/restate/client`). See docs/scale-out-restate.md.
 *
 * @example
 * ```ts
 * import http2 from 'node:http2';
 * import * as restate from '@restatedev/restate-sdk';
 * import { restateConversations } from 'actorloop/restate';
 *
 * const server = http2.createServer(restate.createEndpointHandler({ services: [restateConversations({ machine })] }));
 * server.listen(9080, '127.0.0.1');
 * ```
 */
export {
  type ConversationHandlers,
  type ConversationObject,
  type RestateConversationsOptions,
  restateConversations,
  type SendInput,
} from './conversation-object.js';
export type { RestateConversationEvent } from './run-segment.js';
export {
  conversationErrorOf,
  type RestateConversationClient,
  type RestateConversationClientOptions,
  type RestateSendOptions,
  restateConversationClient,
} from './client.js';
export { ensurePromiseWithResolvers } from './promise-with-resolvers.js';
