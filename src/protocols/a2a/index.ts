/**
 * `actorloop/a2a`: the Agent2Agent protocol (A2A 1.0) with the official `@a2a-js/sdk`, an optional
 * peer dependency (`npm install @a2a-js/sdk`). `createA2AHandler(host, { card, authorize })` serves
 * a conversation host as an A2A agent — an agent card and JSON-RPC, tasks as conversations (or,
 * for a host of a workflow, as runs of it), approvals as `input-required` — as a Fetch API handler; `serveA2A` serves it on `node:http`.
 * See docs/a2a.md.
 *
 * @example
 * ```ts
 * import { createA2AHandler, serveA2A } from 'actorloop/a2a';
 *
 * const a2a = await createA2AHandler(host, { card: { name: 'Order desk', description: 'Orders.', version: '1.0.0' }, authorize });
 * await serveA2A(a2a, { port: 4000 });
 * ```
 * @packageDocumentation
 */
export type { A2ACardOptions, A2ASkill } from './a2a-card.js';
export { type A2AHandler, type A2AHandlerOptions, createA2AHandler } from './a2a-handler.js';
export { type A2AServer, serveA2A } from './serve-a2a.js';
/** What `createA2AHandler` rejects with when `@a2a-js/sdk` is not installed. */
export { MissingDependencyError } from '../../errors/missing-dependency-error.js';
export * from './agent-tool/index.js';
