/**
 * `actorloop/restate`: conversations — and workflows with conversations inside — as Restate
 * virtual objects, served by any number of worker processes. Needs the optional peer
 * `@restatedev/restate-sdk`. Callers use `actorloop/restate/client` (`restateConversationClient`),
 * which needs only `@restatedev/restate-sdk-clients`. See docs/scale-out-restate.md.
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
 *
 * The endpoint runs on Node.js only: imported on Bun, Deno or workerd it throws an
 * `UnsupportedRuntimeError`. Callers run anywhere (`actorloop/restate/client` is Fetch-based).
 */
import { requireNodeRuntime } from '../../util/runtime.js';
import { restateElsewhere } from './conversation-object.js';

requireNodeRuntime('actorloop/restate', restateElsewhere);

export {
  type ConversationHandlers,
  type ConversationObject,
  type RestateConversationsOptions,
  restateConversations,
  type SendInput,
} from './conversation-object.js';
export type { RestateConversationEvent } from './run-segment.js';
export type { WorkflowHandlers, WorkflowObject, WorkflowSendInput, WorkflowStartInput } from './workflow-object.js';
export { ensurePromiseWithResolvers } from './promise-with-resolvers.js';
