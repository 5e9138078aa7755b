/**
 * `actorloop/otel`: OpenTelemetry spans for conversation runs, following the GenAI semantic
 * conventions — of one actor, or of every conversation of a durable host. Needs
 * `@opentelemetry/api` (an optional peer dependency).
 *
 * @example
 * ```ts
 * import { traceConversation, traceHost } from 'actorloop/otel';
 * traceConversation(actor, { agentName: 'assistant' });
 * traceHost(host, { agentName: 'assistant' });
 * ```
 * @packageDocumentation
 */
export { type TraceConversationOptions, traceConversation } from './trace-conversation.js';
export { type TraceHostOptions, type TraceableHost, traceHost } from './trace-host.js';
