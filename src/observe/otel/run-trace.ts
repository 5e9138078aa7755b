import { type Attributes, type Context, type Span, SpanKind, SpanStatusCode, type Tracer, trace } from '@opentelemetry/api';
import { toolErrorType } from '../../machines/rounds/tool-round.js';
import type { ConversationEmittedEvent, RunOutput } from '../../machines/names/types.js';
import type { Message } from '../../model/messages.js';
import { mediaTally, tracedMessages } from './traced-media.js';

/** What a run's spans are made with. */
export type RunTraceOptions = {
  tracer: Tracer;
  agentName?: string;
  conversationId?: string;
  recordContent: boolean;
  /** The run span's parent. */
  parentContext: Context;
  /** More attributes of the run span. */
  attributes?: Attributes;
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

const failSpan = (span: Span, errorType: string, message?: string) => {
  span.setAttribute('error.type', errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, ...(message === undefined ? {} : { message }) });
};

/** The attempt's answer as one GenAI output message (text and tool calls). */
function outputMessage(attempt: Attempt, finishReason: string) {
  const parts: Array<Record<string, unknown>> = [];
  if (attempt.text !== '') parts.push({ type: 'text', content: attempt.text });
  for (const call of attempt.toolCalls) parts.push({ type: 'tool_call', id: call.id, name: call.name, arguments: call.arguments });
  return { role: 'assistant', parts, finish_reason: finishReasonNames[finishReason] ?? finishReason };
}

/**
 * The spans of one run, following the GenAI semantic conventions: the `invoke_agent` span opened
 * at construction, a `chat {model}` span per request attempt and an `execute_tool {name}` span per
 * tool execution, both its children, fed the run's emitted events one by one; `end` closes
 * whatever is open. `messages` gives the history the current request was sent with (read when an
 * attempt ends: until a response is committed, the run's history is exactly what was sent).
 */
export class RunTrace {
  private readonly runSpan: Span;
  private readonly runContext: Context;
  private attempt: Attempt | undefined;
  private readonly tools = new Map<string, Span>();
  private readonly toolArgs = new Map<string, unknown>();
  private provider: string | undefined;
  private ended = false;
  /** The runs of this run's agent calls, by `toolCallId`: each traced under its call's `execute_tool` span. */
  private readonly agents = new Map<string, RunTrace>();

  constructor(
    private readonly options: RunTraceOptions,
    private readonly messages: () => readonly Message[] | undefined,
  ) {
    const { tracer, agentName, conversationId, parentContext } = options;
    const attributes: Attributes = { 'gen_ai.operation.name': 'invoke_agent', ...options.attributes };
    if (agentName !== undefined) attributes['gen_ai.agent.name'] = agentName;
    if (conversationId !== undefined) attributes['gen_ai.conversation.id'] = conversationId;
    this.runSpan = tracer.startSpan(
      agentName === undefined ? 'invoke_agent' : `invoke_agent ${agentName}`,
      { kind: SpanKind.INTERNAL, attributes },
      parentContext,
    );
    this.runContext = trace.setSpan(parentContext, this.runSpan);
  }

  /** Feeds one emitted event of the run. */
  event(event: ConversationEmittedEvent): void {
    if (this.ended) return;
    switch (event.type) {
      case 'request.started':
        this.requestStarted(event);
        return;
      case 'text.delta':
        if (this.attempt && this.options.recordContent) this.attempt.text += event.delta;
        return;
      case 'tool.call':
        this.toolArgs.set(event.toolCallId, event.args);
        if (this.attempt && this.options.recordContent) {
          this.attempt.toolCalls.push({ id: event.toolCallId, name: event.name, arguments: event.args });
        }
        return;
      case 'request.finished':
        this.requestFinished(event);
        return;
      case 'request.retry': {
        if (!this.attempt) return;
        failSpan(this.attempt.span, event.error.code ?? event.error.name, event.error.message);
        this.attempt.span.addEvent('actorloop.retry_scheduled', {
          'actorloop.retry.delay_ms': event.delayMs,
          'actorloop.retry.attempt': event.attempt,
        });
        this.endAttempt();
        return;
      }
      case 'tool.started':
        this.toolStarted(event);
        return;
      case 'agent.started':
        this.agentStarted(event);
        return;
      case 'agent.event': {
        const [toolCallId, ...rest] = event.path;
        const child = toolCallId === undefined ? undefined : this.agents.get(toolCallId);
        // Deeper down, the child's own trace routes it on, as its own run would.
        child?.event(rest.length === 0 ? event.event : { type: 'agent.event', path: rest, event: event.event });
        return;
      }
      case 'agent.finished':
        this.agents.get(event.toolCallId)?.end(event.output);
        this.agents.delete(event.toolCallId);
        return;
      case 'tool.result': {
        this.toolArgs.delete(event.toolCallId);
        const span = this.tools.get(event.toolCallId);
        if (!span) return;
        this.tools.delete(event.toolCallId);
        if (this.options.recordContent) span.setAttribute('gen_ai.tool.call.result', event.result);
        if (event.isError) failSpan(span, toolErrorType(event.result), event.result.slice(0, 500));
        span.end();
        return;
      }
      default:
        return;
    }
  }

  /**
   * Ends every open span: with the run's output when it ended, or as `errorType` (default
   * `stopped`) when tracing stops before the end — the open attempt and tools get it as `error.type`.
   */
  end(output: RunOutput | undefined, errorType?: { type: string; message?: string }): void {
    if (this.ended) return;
    this.ended = true;
    const type =
      errorType?.type ??
      (output?.status === 'error'
        ? (output.error?.code ?? output.error?.name ?? 'error')
        : output?.status === 'halted'
          ? (output.reason ?? 'halted')
          : 'stopped');
    const message = errorType?.message ?? output?.error?.message;
    for (const child of this.agents.values()) child.end(undefined, { type, ...(message === undefined ? {} : { message }) });
    this.agents.clear();
    if (this.attempt) {
      failSpan(this.attempt.span, type, message);
      this.endAttempt();
    }
    for (const span of this.tools.values()) {
      failSpan(span, type);
      span.end();
    }
    this.tools.clear();
    if (output) {
      this.runSpan.setAttribute('actorloop.run.status', output.status);
      if (output.reason !== undefined) this.runSpan.setAttribute('actorloop.run.reason', output.reason);
      this.runSpan.setAttribute('actorloop.run.iterations', output.iterations);
      this.runSpan.setAttribute('gen_ai.usage.input_tokens', output.usage.inputTokens);
      this.runSpan.setAttribute('gen_ai.usage.output_tokens', output.usage.outputTokens);
      if (output.status === 'error') failSpan(this.runSpan, type, message);
    } else if (errorType) {
      failSpan(this.runSpan, type, message);
    }
    this.runSpan.end();
  }

  private requestStarted(event: Extract<ConversationEmittedEvent, { type: 'request.started' }>): void {
    this.provider = event.provider;
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': event.provider,
      'actorloop.attempt': event.attempt,
    };
    if (event.model !== undefined) attributes['gen_ai.request.model'] = event.model;
    const span = this.options.tracer.startSpan(
      event.model === undefined ? 'chat' : `chat ${event.model}`,
      { kind: SpanKind.CLIENT, attributes },
      this.runContext,
    );
    this.attempt = { span, text: '', toolCalls: [] };
  }

  private requestFinished(event: Extract<ConversationEmittedEvent, { type: 'request.finished' }>): void {
    const attempt = this.attempt;
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
    if (this.options.recordContent)
      span.setAttribute('gen_ai.output.messages', JSON.stringify([outputMessage(attempt, event.finishReason)]));
    this.endAttempt();
  }

  private toolStarted(event: Extract<ConversationEmittedEvent, { type: 'tool.started' }>): void {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': event.name,
      'gen_ai.tool.call.id': event.toolCallId,
      'gen_ai.tool.type': 'function',
    };
    if (this.provider !== undefined) attributes['gen_ai.provider.name'] = this.provider;
    if (this.options.recordContent) attributes['gen_ai.tool.call.arguments'] = JSON.stringify(this.toolArgs.get(event.toolCallId) ?? null);
    this.tools.set(
      event.toolCallId,
      this.options.tracer.startSpan(`execute_tool ${event.name}`, { kind: SpanKind.INTERNAL, attributes }, this.runContext),
    );
  }

  /** An agent call's child run: its `invoke_agent` span is a child of the call's `execute_tool` span. */
  private agentStarted(event: Extract<ConversationEmittedEvent, { type: 'agent.started' }>): void {
    const toolSpan = this.tools.get(event.toolCallId);
    const parentContext = toolSpan ? trace.setSpan(this.runContext, toolSpan) : this.runContext;
    const { attributes: _attributes, ...inherited } = this.options;
    // The child's history is its own and not in this run's events: its attempts record no input messages.
    this.agents.set(event.toolCallId, new RunTrace({ ...inherited, agentName: event.agent, parentContext }, () => undefined));
  }

  private endAttempt(): void {
    const attempt = this.attempt;
    if (!attempt) return;
    this.attempt = undefined;
    const messages = this.messages();
    if (messages) {
      // Sizes always, bytes never: a span exporter is no place for a 5 MB image.
      const media = mediaTally(messages);
      if (media.parts > 0)
        attempt.span.setAttributes({ 'actorloop.input.media.parts': media.parts, 'actorloop.input.media.bytes': media.bytes });
      if (this.options.recordContent) attempt.span.setAttribute('gen_ai.input.messages', JSON.stringify(tracedMessages(messages)));
    }
    attempt.span.end();
  }
}
