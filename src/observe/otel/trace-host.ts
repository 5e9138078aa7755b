import { type Context, context, type Tracer, trace } from '@opentelemetry/api';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import type { ConversationHost } from '../../host/conversation-host.js';
import type { Message } from '../../model/messages.js';
import { option } from '../../util/option-schema.js';
import { isEndStatus } from '../state-update.js';
import { RunTrace } from './run-trace.js';
import type { TraceConversationOptions } from './trace-conversation.js';

/**
 * Options of {@link traceHost}: those of `traceConversation` but the conversation id (each run's
 * own), and a parent per conversation.
 *
 * @example
 * ```ts
 * traceHost(host, { agentName: 'support', parentContext: (conversationId) => contexts.get(conversationId) });
 * ```
 */
export type TraceHostOptions = Omit<TraceConversationOptions, 'conversationId' | 'parentContext'> & {
  /**
   * The parent of a run's span. Default: the context active when the run's first event is
   * published — the context of the `host.send` (or `recover()`) call that started it, so a run
   * started while handling an HTTP request is a child of that request's span.
   */
  parentContext?: (conversationId: string) => Context | undefined;
};

/**
 * What {@link traceHost} needs of a host: `createConversationHost(...)` has it.
 *
 * @example
 * ```ts
 * const traced: TraceableHost = createConversationHost({ machine, store: memoryStore() });
 * ```
 */
export type TraceableHost = Pick<ConversationHost, 'subscribeAll'> & { readonly hostId?: string };

// The rest is taken as traceConversation takes it, unchecked: only parentContext is called here, once per run.
// Unknown keys are ignored, as they always were.
const traceHostOptionsSchema = option.object(
  {
    // Taken at creation, not at import: the global tracer provider is often registered after this module loads.
    tracer: option.transform(option.optional(option.unchecked<Tracer>()), (tracer) => tracer ?? trace.getTracer('actorloop')),
    agentName: option.optional(option.unchecked<string>()),
    // Content often holds personal data: only `true` records it.
    recordContent: option.transform(option.unchecked(), (record) => record === true),
    parentContext: option.optional(
      option.callable<(conversationId: string) => Context | undefined>('a function (conversationId) => Context'),
    ),
  },
  { expected: 'an object', unknownKeys: 'ignore' },
);

type OpenRun = { trace: RunTrace; messages: readonly Message[] | undefined };

/**
 * Traces every run of every conversation of a durable host, as `traceConversation` traces an actor:
 * one `invoke_agent` span per run — from its first event to its end, an approval wait included —
 * with `gen_ai.conversation.id` set to the conversation's id and `actorloop.host.id` to the host's,
 * and its `chat {model}` and `execute_tool {name}` children. A run the host could not store
 * (`write.failed`) ends its span in error (`write_failed`). Returns the function that stops
 * tracing: the spans of runs still going (or waiting for approval) end there, as `stopped`.
 *
 * @example
 * ```ts
 * import { traceHost } from 'actorloop/otel';
 *
 * const host = createConversationHost({ machine, store: sqliteStore({ path: 'conversations.db' }) });
 * const stopTracing = traceHost(host, { agentName: 'support' });
 * await host.send('c-42', { type: 'user.message', content: 'Where is my order?' }); // spans with gen_ai.conversation.id = c-42
 * ```
 */
export function traceHost(host: TraceableHost, options: TraceHostOptions = {}): () => void {
  if (typeof host !== 'object' || host === null || typeof host.subscribeAll !== 'function') {
    throw new InvalidOptionsError('traceHost(host)', 'a conversation host (createConversationHost(...))', host);
  }
  const { tracer, agentName, recordContent, parentContext } = traceHostOptionsSchema.resolve(options, 'traceHost(host, options)');
  const runs = new Map<string, OpenRun>();

  const open = (id: string): OpenRun => {
    const run: OpenRun = {
      messages: undefined,
      trace: new RunTrace(
        {
          tracer,
          recordContent,
          parentContext: parentContext?.(id) ?? context.active(),
          conversationId: id,
          ...(agentName === undefined ? {} : { agentName }),
          ...(typeof host.hostId === 'string' ? { attributes: { 'actorloop.host.id': host.hostId } } : {}),
        },
        () => run.messages,
      ),
    };
    runs.set(id, run);
    return run;
  };

  const unsubscribe = host.subscribeAll((event, id) => {
    let run = runs.get(id);
    if (event.type === 'write.failed') {
      if (!run) return;
      runs.delete(id);
      run.trace.end(undefined, { type: 'write_failed', message: event.error.message });
      return;
    }
    if (!run) {
      // A rejected event moves no run, and an end seen alone has nothing to trace.
      if (event.type === 'event.rejected' || (event.type === 'state' && isEndStatus(event.status))) return;
      // A run's first event opens its span: a new run's `request.started`, or any event of a run
      // that was going on (or waiting for approval) when tracing started.
      run = open(id);
    }
    if (event.type !== 'state') {
      run.trace.event(event);
      return;
    }
    run.messages = event.messages;
    if (!isEndStatus(event.status)) return;
    runs.delete(id);
    run.trace.end(event.output);
  });

  return () => {
    unsubscribe();
    for (const run of runs.values()) run.trace.end(undefined);
    runs.clear();
  };
}
