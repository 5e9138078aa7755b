import type { ConversationHost } from '../../host/conversation-host.js';
import type { StreamStateEvent } from '../../host/conversation-stream.js';
import { statusOf } from '../../host/conversation-view.js';
import type { ConversationActor, ConversationSnapshot } from '../../machines/names/types.js';
import { isRecord } from '../../util/is-record.js';
import { option, resolveOptionsWith } from '../../util/option-schema.js';
import { trailingAnswerIndex, uiMessageIdAt } from './message-ids.js';
import { createMessageStream, type MessageStreamControl } from './message-stream.js';
import type { UIMessageChunk } from './ui-message-chunk.js';
import { createUIMessageMapper, type UIMessageMapperOptions } from './ui-message-mapper.js';

/**
 * What a UI message stream follows: a run's actor (`createActor(machine)`), or a conversation of
 * a durable host.
 *
 * @example
 * ```ts
 * const sources: UIMessageStreamSource[] = [actor, { host, id: 'c-42' }];
 * ```
 */
export type UIMessageStreamSource = ConversationActor | { host: ConversationHost; id: string };

/**
 * Options of `toUIMessageStream`.
 *
 * @example
 * ```ts
 * const options: UIMessageStreamOptions = { endAtApproval: false, errorText: (error) => error.message };
 * ```
 */
export type UIMessageStreamOptions = UIMessageMapperOptions & {
  /**
   * End the message when the run waits for approval (default `true`): `useChat` sends the answers
   * (`addToolApprovalResponse`) in a new request, whose stream continues the message. `false` keeps
   * it open until the run ends.
   */
  endAtApproval?: boolean;
  /**
   * For a host conversation: `'run'` (default) streams the run in progress — or the last run — from
   * its first event; `'now'` from now on (the events that an event sent next leads to).
   */
  from?: 'run' | 'now';
  /** Chunks a reader may leave unread before the stream ends telling it to resume (default 10,000). */
  maxBufferedChunks?: number;
};

export const uiMessageStreamOptionsSchema = option.object(
  {
    messageId: option.optional(option.string({ nonEmpty: true })),
    errorText: option.optional(option.callable<NonNullable<UIMessageMapperOptions['errorText']>>('a function (error) => string')),
    messageMetadata: option.optional(
      option.callable<NonNullable<UIMessageMapperOptions['messageMetadata']>>('a function (moment) => metadata'),
    ),
    endAtApproval: option.withDefault(option.boolean(), true),
    from: option.withDefault(option.choice(['run', 'now'] as const), 'run' as const),
    maxBufferedChunks: option.withDefault(option.integer({ minimum: 1 }), 10_000),
  },
  { expected: 'an object { messageId?, errorText?, messageMetadata?, endAtApproval?, from?, maxBufferedChunks? }' },
);

const isHostSource = (source: unknown): source is { host: ConversationHost; id: string } =>
  isRecord(source) && 'host' in source && 'id' in source;

/** A conversation host, by what the stream uses of one. */
const isHost = (value: unknown): value is ConversationHost =>
  isRecord(value) && typeof value.follow === 'function' && typeof value.send === 'function';

/**
 * A run as the Vercel AI SDK's UI message stream (`ai` v5/v6): one assistant message, with its text,
 * reasoning, tool calls and their inputs, outputs, approvals and denials, steps, errors and finish.
 * Send it with `toUIMessageStreamResponse`; `useChat`, `readUIMessageStream` and every other AI SDK
 * UI reads it unchanged. See docs/ui-protocol.md for the mapping.
 *
 * From an actor it streams from now until the run ends (or waits for approval). From a host
 * conversation (`{ host, id }`) it follows `host.follow`, by default from the first event of the
 * run in progress (or of the last run), in whichever process serves the request; the message id is
 * the one `toUIMessages` gives that run's answer. Cancelling the stream stops following; the run
 * goes on.
 *
 * @example
 * ```ts
 * import { toUIMessageStream, toUIMessageStreamResponse } from 'actorloop/http';
 *
 * // a route handler: the answer of the run in progress, as useChat reads it
 * export const GET = () => toUIMessageStreamResponse(toUIMessageStream(host, 'c-42')); // or ({ host, id: 'c-42' })
 *
 * // or one run's actor
 * const actor = createActor(machine, { input: { messages } }).start();
 * const stream = toUIMessageStream(actor);
 * actor.send({ type: 'user.message', content: 'What is 2+3?' });
 * ```
 */
export function toUIMessageStream(host: ConversationHost, id: string, options?: UIMessageStreamOptions): ReadableStream<UIMessageChunk>;
export function toUIMessageStream(source: UIMessageStreamSource, options?: UIMessageStreamOptions): ReadableStream<UIMessageChunk>;
export function toUIMessageStream(
  source: UIMessageStreamSource | ConversationHost,
  idOrOptions?: string | UIMessageStreamOptions,
  hostOptions?: UIMessageStreamOptions,
): ReadableStream<UIMessageChunk> {
  // `(host, id, options?)` as DESIGN §13 writes it, beside `({ host, id }, options?)` and `(actor, options?)`.
  if (typeof idOrOptions === 'string') {
    if (!isHost(source))
      throw new TypeError('toUIMessageStream(host, id): expected a ConversationHost (createConversationHost) before the id');
    const resolved = resolveOptionsWith(uiMessageStreamOptionsSchema, hostOptions ?? {}, 'options');
    return fromHost(source, idOrOptions, resolved).stream;
  }
  const resolved = resolveOptionsWith(uiMessageStreamOptionsSchema, idOrOptions ?? {}, 'options');
  if (isHostSource(source)) return fromHost(source.host, source.id, resolved).stream;
  if (!isRecord(source) || typeof (source as { getSnapshot?: unknown }).getSnapshot !== 'function') {
    throw new TypeError('toUIMessageStream: expected a conversation actor, (host, id) or { host, id }');
  }
  return fromActor(source as ConversationActor, resolved).stream;
}

/** Options as resolved: what a stream of a host conversation or an actor is made with. */
type Resolved = UIMessageMapperOptions & { from: 'run' | 'now'; endAtApproval: boolean; maxBufferedChunks: number };

const mapperOptions = (options: Resolved): UIMessageMapperOptions => ({
  ...(options.answeredApprovals ? { answeredApprovals: options.answeredApprovals } : {}),
  ...(options.errorText ? { errorText: options.errorText } : {}),
  ...(options.messageMetadata ? { messageMetadata: options.messageMetadata } : {}),
});

const inProgress: ReadonlySet<string> = new Set(['running', 'awaitingApproval']);

/** A host conversation's stream; the message id comes from the history once it is read. */
export function fromHost(
  host: ConversationHost,
  id: string,
  options: Resolved,
): MessageStreamControl & { begin(messageId?: string): void } {
  const mapper = createUIMessageMapper(mapperOptions(options));
  const control = createMessageStream({
    mapper,
    endAtApproval: options.endAtApproval,
    maxBufferedChunks: options.maxBufferedChunks,
    deferStart: true,
  });
  const stop = host.follow(
    id,
    { next: (item) => control.sink.push(item.event), error: (error) => control.sink.fail(error) },
    { from: options.from },
  );
  control.onStop(stop);
  if (options.messageId !== undefined) control.begin(options.messageId);
  else {
    host.get(id).then(
      (view) => {
        // The run to stream: the one in progress (or the last one); from now, once none is in progress, the next one.
        const next = !view || (options.from === 'now' && !inProgress.has(view.status));
        control.begin(uiMessageIdAt(next ? (view?.messages.length ?? 0) + 1 : trailingAnswerIndex(view.messages)));
      },
      (error: unknown) => control.sink.fail(error),
    );
  }
  return control;
}

/** A state event as the host streams it, from an actor's snapshot. */
function stateOf(snapshot: ConversationSnapshot): StreamStateEvent {
  const status = statusOf(snapshot);
  if (snapshot.status !== 'done' || !snapshot.output) return { type: 'state', value: snapshot.value, status };
  const { messages: _history, ...output } = snapshot.output;
  return { type: 'state', value: snapshot.value, status, output };
}

/** A run's actor, from now on. */
function fromActor(actor: ConversationActor, options: Resolved): MessageStreamControl {
  const initial = actor.getSnapshot();
  const { context } = initial;
  // The answer goes after the run's user message: the one it started with, or the one to come.
  const answerIndex = initial.value === 'idle' ? context.messages.length + 1 : context.runStart + 1;
  const mapper = createUIMessageMapper({ ...mapperOptions(options), messageId: options.messageId ?? uiMessageIdAt(answerIndex) });
  const control = createMessageStream({ mapper, endAtApproval: options.endAtApproval, maxBufferedChunks: options.maxBufferedChunks });
  let last = `${JSON.stringify(initial.value)} ${statusOf(initial)}`;
  const emitted = actor.on('*', (event) => control.sink.push(event));
  const snapshots = actor.subscribe({
    next: (snapshot) => {
      const state = stateOf(snapshot);
      const key = `${JSON.stringify(state.value)} ${state.status}`;
      if (key === last) return;
      last = key;
      control.sink.push(state);
    },
    error: (error) => control.sink.fail(error),
    // Stopped before its run ended: nothing more comes.
    complete: () => control.end({ abort: 'stopped' }),
  });
  control.onStop(() => {
    emitted.unsubscribe();
    snapshots.unsubscribe();
  });
  // A run that already ended has nothing more to stream but its end.
  if (initial.status === 'done') control.sink.push(stateOf(initial));
  return control;
}
