import { type Context, context, type Tracer, trace } from '@opentelemetry/api';
import type { ConversationActor } from '../../machines/names/types.js';
import { observeActor } from '../observe-actor.js';
import { RunTrace } from './run-trace.js';

/**
 * Options of {@link traceConversation}.
 *
 * @example
 * ```ts
 * traceConversation(actor, { agentName: 'support', conversationId: 'c-42', recordContent: process.env.TRACE_CONTENT === '1' });
 * ```
 */
export type TraceConversationOptions = {
  /** Default: `trace.getTracer('actorloop')` from the global tracer provider. */
  tracer?: Tracer;
  /** `gen_ai.agent.name`, and the run span is named `invoke_agent {agentName}`. */
  agentName?: string;
  /** `gen_ai.conversation.id`. */
  conversationId?: string;
  /**
   * Record message content, tool arguments and results (`gen_ai.input.messages`,
   * `gen_ai.output.messages`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`). Off by
   * default: content often holds personal data.
   */
  recordContent?: boolean;
  /** Parent of the run span. Default: the active context when the tracing is attached. */
  parentContext?: Context;
};

/**
 * Traces a conversation run with OpenTelemetry spans following the GenAI semantic conventions: one
 * `invoke_agent` span for the run, a `chat {model}` span per request attempt (a retried request is
 * a second span; the failed one has status ERROR and `error.type`), and an `execute_tool {name}`
 * span per tool execution, both children of the run span. Only `@opentelemetry/api` is used:
 * configure any SDK and exporter. Returns a function that stops tracing (ending open spans);
 * tracing ends by itself when the run does. For the conversations of a durable host, see `traceHost`.
 *
 * @example
 * ```ts
 * import { traceConversation } from 'actorloop/otel';
 * const actor = createActor(machine, { input: { messages: [] } });
 * traceConversation(actor, { agentName: 'assistant' });
 * actor.start().send({ type: 'user.message', content: 'What is 2+3?' });
 * ```
 */
export function traceConversation(
  actor: Pick<ConversationActor, 'on' | 'subscribe' | 'getSnapshot'>,
  options: TraceConversationOptions = {},
): () => void {
  const run = new RunTrace(
    {
      tracer: options.tracer ?? trace.getTracer('actorloop'),
      recordContent: options.recordContent === true,
      parentContext: options.parentContext ?? context.active(),
      ...(options.agentName === undefined ? {} : { agentName: options.agentName }),
      ...(options.conversationId === undefined ? {} : { conversationId: options.conversationId }),
    },
    () => actor.getSnapshot().context.messages,
  );
  const detach = observeActor(actor, {
    onEvent: (event) => run.event(event),
    // A run stopped before its end (or that failed) has no output: its open spans end as `stopped`.
    onEnd: ({ status, snapshot }) => run.end(status === 'done' ? snapshot.output : undefined),
  });
  return () => {
    detach();
    const snapshot = actor.getSnapshot();
    run.end(snapshot.status === 'done' ? snapshot.output : undefined);
  };
}
