/**
 * `actorloop/otel`: OpenTelemetry spans for conversation runs, following the GenAI semantic
 * conventions. Needs `@opentelemetry/api` (an optional peer dependency).
 *
 * @example
 * ```ts
 * import { traceConversation } from 'actorloop/otel';
 * traceConversation(actor, { agentName: 'assistant' });
 * ```
 * @packageDocumentation
 */
export { type TraceConversationOptions, traceConversation } from './trace-conversation.js';
