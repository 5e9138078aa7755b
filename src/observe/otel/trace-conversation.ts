import { type Attributes, type Context, context, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { toolErrorType } from '../../machines/tool-round.js';
import type { ConversationActor, RunOutput } from '../../machines/types.js';

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

/** Neutral finish reasons as the GenAI conventions spell them. */
const finishReasonNames: Record<string, string> = {
  stop: 'stop',
  'tool-calls': 'tool_calls',
  length: 'length',
  'content-filter': 'content_filter',
  refusal: 'refusal',
  pause: 'pause',
  other: 'other',
};

type Attempt = { span: Span; text: string; toolCalls: Array<{ id: string; name: string; arguments: unknown }> };

/**
 * Ends an attempt's span. The request's messages are read from the run when the attempt ends: until
 * a response is committed, the run's history is exactly what was sent.
 */
function endAttempt(attempt: Attempt, messages: unknown, recordContent: boolean): void {
  if (recordContent) attempt.span.setAttribute('gen_ai.input.messages', JSON.stringify(messages));
  attempt.span.end();
}

/**
 * Traces a conversation run with OpenTelemetry spans following the GenAI semantic conventions: one
 * `invoke_agent` span for the run, a `chat {model}` span per request attempt (a retried request is
 * a second span; the failed one has status ERROR and `error.type`), and an `execute_tool {name}`
 * span per tool execution, both children of the run span. Only `@opentelemetry/api` is used:
 * configure any SDK and exporter. Returns a function that stops tracing (ending open spans);
 * tracing ends by itself when the run does.
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
  const tracer = options.tracer ?? trace.getTracer('actorloop');
  const recordContent = options.recordContent === true;
  const runAttributes: Attributes = { 'gen_ai.operation.name': 'invoke_agent' };
  if (options.agentName !== undefined) runAttributes['gen_ai.agent.name'] = options.agentName;
  if (options.conversationId !== undefined) runAttributes['gen_ai.conversation.id'] = options.conversationId;
  const runSpan = tracer.startSpan(
    options.agentName === undefined ? 'invoke_agent' : `invoke_agent ${options.agentName}`,
    { kind: SpanKind.INTERNAL, attributes: runAttributes },
    options.parentContext ?? context.active(),
  );
  const runContext = trace.setSpan(options.parentContext ?? context.active(), runSpan);

  let attempt: Attempt | undefined;
  const tools = new Map<string, Span>();
  const toolArgs = new Map<string, unknown>();
  let provider: string | undefined;

  const failSpan = (span: Span, errorType: string, message?: string) => {
    span.setAttribute('error.type', errorType);
    span.setStatus({ code: SpanStatusCode.ERROR, ...(message === undefined ? {} : { message }) });
  };

  const subscriptions = [
    actor.on('request.started', (event) => {
      provider = event.provider;
      const attributes: Attributes = {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': event.provider,
        'actorloop.attempt': event.attempt,
      };
      if (event.model !== undefined) attributes['gen_ai.request.model'] = event.model;
      const span = tracer.startSpan(
        event.model === undefined ? 'chat' : `chat ${event.model}`,
        { kind: SpanKind.CLIENT, attributes },
        runContext,
      );
      attempt = { span, text: '', toolCalls: [] };
    }),
    actor.on('text.delta', (event) => {
      if (attempt && recordContent) attempt.text += event.delta;
    }),
    actor.on('tool.call', (event) => {
      toolArgs.set(event.toolCallId, event.args);
      if (attempt && recordContent) attempt.toolCalls.push({ id: event.toolCallId, name: event.name, arguments: event.args });
    }),
    actor.on('request.finished', (event) => {
      if (!attempt) return;
      const { span } = attempt;
      if (event.model !== undefined) span.setAttribute('gen_ai.response.model', event.model);
      if (event.responseId !== undefined) span.setAttribute('gen_ai.response.id', event.responseId);
      span.setAttribute('gen_ai.response.finish_reasons', [finishReasonNames[event.finishReason] ?? event.finishReason]);
      span.setAttribute('gen_ai.usage.input_tokens', event.usage.inputTokens);
      span.setAttribute('gen_ai.usage.output_tokens', event.usage.outputTokens);
      if (event.usage.cachedInputTokens !== undefined)
        span.setAttribute('gen_ai.usage.cache_read.input_tokens', event.usage.cachedInputTokens);
      if (event.usage.cacheCreationInputTokens !== undefined) {
        span.setAttribute('gen_ai.usage.cache_creation.input_tokens', event.usage.cacheCreationInputTokens);
      }
      if (event.usage.reasoningTokens !== undefined) span.setAttribute('gen_ai.usage.reasoning.output_tokens', event.usage.reasoningTokens);
      if (recordContent) span.setAttribute('gen_ai.output.messages', JSON.stringify([outputMessage(attempt, event.finishReason)]));
      endAttempt(attempt, actor.getSnapshot().context.messages, recordContent);
      attempt = undefined;
    }),
    actor.on('request.retry', (event) => {
      if (!attempt) return;
      failSpan(attempt.span, event.error.code ?? event.error.name, event.error.message);
      attempt.span.addEvent('actorloop.retry_scheduled', {
        'actorloop.retry.delay_ms': event.delayMs,
        'actorloop.retry.attempt': event.attempt,
      });
      endAttempt(attempt, actor.getSnapshot().context.messages, recordContent);
      attempt = undefined;
    }),
    actor.on('tool.started', (event) => {
      const attributes: Attributes = {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': event.name,
        'gen_ai.tool.call.id': event.toolCallId,
        'gen_ai.tool.type': 'function',
      };
      if (provider !== undefined) attributes['gen_ai.provider.name'] = provider;
      if (recordContent) attributes['gen_ai.tool.call.arguments'] = JSON.stringify(toolArgs.get(event.toolCallId) ?? null);
      tools.set(event.toolCallId, tracer.startSpan(`execute_tool ${event.name}`, { kind: SpanKind.INTERNAL, attributes }, runContext));
    }),
    actor.on('tool.result', (event) => {
      toolArgs.delete(event.toolCallId);
      const span = tools.get(event.toolCallId);
      if (!span) return;
      tools.delete(event.toolCallId);
      if (recordContent) span.setAttribute('gen_ai.tool.call.result', event.result);
      if (event.isError) failSpan(span, toolErrorType(event.result), event.result.slice(0, 500));
      span.end();
    }),
  ];

  let finished = false;
  const finish = (output: RunOutput | undefined) => {
    if (finished) return;
    finished = true;
    for (const subscription of subscriptions) subscription.unsubscribe();
    stateSubscription?.unsubscribe();
    const errorType =
      output?.status === 'error'
        ? (output.error?.code ?? output.error?.name ?? 'error')
        : output?.status === 'halted'
          ? (output.reason ?? 'halted')
          : 'stopped';
    if (attempt) {
      failSpan(attempt.span, errorType, output?.error?.message);
      endAttempt(attempt, actor.getSnapshot().context.messages, recordContent);
      attempt = undefined;
    }
    for (const span of tools.values()) {
      failSpan(span, errorType);
      span.end();
    }
    tools.clear();
    if (output) {
      runSpan.setAttribute('actorloop.run.status', output.status);
      if (output.reason !== undefined) runSpan.setAttribute('actorloop.run.reason', output.reason);
      runSpan.setAttribute('actorloop.run.iterations', output.iterations);
      runSpan.setAttribute('gen_ai.usage.input_tokens', output.usage.inputTokens);
      runSpan.setAttribute('gen_ai.usage.output_tokens', output.usage.outputTokens);
      if (output.status === 'error') failSpan(runSpan, errorType, output.error?.message);
    }
    runSpan.end();
  };

  const onSnapshot = () => {
    const snapshot = actor.getSnapshot();
    if (snapshot.status === 'done') finish(snapshot.output);
  };
  let stateSubscription: { unsubscribe(): void } | undefined;
  stateSubscription = actor.subscribe({ next: onSnapshot, complete: onSnapshot, error: () => finish(undefined) });
  onSnapshot();
  return () => finish(actor.getSnapshot().status === 'done' ? actor.getSnapshot().output : undefined);
}

/** The attempt's answer as one GenAI output message (text and tool calls). */
function outputMessage(attempt: Attempt, finishReason: string) {
  const parts: Array<Record<string, unknown>> = [];
  if (attempt.text !== '') parts.push({ type: 'text', content: attempt.text });
  for (const call of attempt.toolCalls) parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.arguments });
  return { role: 'assistant', parts, finish_reason: finishReasonNames[finishReason] ?? finishReason };
}
