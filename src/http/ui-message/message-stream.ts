import type { ConversationStreamEvent } from '../../host/conversation-stream.js';
import type { UIMessageChunk } from './ui-message-chunk.js';
import type { MessageEnding, UIMessageMapper } from './ui-message-mapper.js';

/** Where a source hands its events to a message stream. */
export type MessageSink = {
  push(event: ConversationStreamEvent): void;
  /** The source failed (the host closed, its store failed): the message ends with an error. */
  fail(error: unknown): void;
};

/** A message stream being fed. */
export type MessageStreamControl = {
  stream: ReadableStream<UIMessageChunk>;
  sink: MessageSink;
  /** Ends the message now (open parts end, then `finish`). */
  end(ending?: MessageEnding): void;
  /** Stops the stream without a word: for a request answered otherwise (the stream was never sent). */
  abandon(): void;
  /** Runs `stop` once the stream ends, however it ends (at once if it already has). */
  onStop(stop: () => void): void;
  /** Whether the source pushed a state change. */
  readonly sawState: boolean;
};

export type MessageStreamOptions = {
  mapper: UIMessageMapper;
  /** End the message when the run waits for approval (what `useChat` expects: it sends the answers in a new request). */
  endAtApproval: boolean;
  /** Chunks the reader may leave unread before the stream ends with an error telling it to resume. */
  maxBufferedChunks: number;
  /** Enqueued first (the `start` chunk), or later with `begin` when it is not known yet. */
  deferStart?: boolean;
};

const interrupted = 'the conversation stream was interrupted (the host closed or its store failed); resume it';
const fellBehind = 'the client fell behind the stream; resume it';

/**
 * A readable stream of one UI message's chunks, fed event by event. Events are mapped in batches (a
 * microtask after the first of them): a replayed stream arrives as one batch, so a pause for
 * approval that the run has since left is passed over, and only a pause at the end of a batch —
 * where the run stands now — ends the message.
 */
export function createMessageStream(options: MessageStreamOptions): MessageStreamControl & { begin(messageId?: string): void } {
  const { mapper } = options;
  let controller!: ReadableStreamDefaultController<UIMessageChunk>;
  let queue: ConversationStreamEvent[] = [];
  let scheduled = false;
  let closed = false;
  let began = false;
  let sawState = false;
  const stops: Array<() => void> = [];

  const stopAll = () => {
    for (const stop of stops.splice(0)) stop();
  };
  const close = () => {
    if (closed) return;
    closed = true;
    queue = [];
    stopAll();
    controller.close();
  };
  const enqueue = (chunks: UIMessageChunk[]) => {
    if (closed) return;
    for (const chunk of chunks) controller.enqueue(chunk);
    if (mapper.finished) return close();
    // A reader that stopped reading must not grow this process's memory: it gets told to resume instead.
    if ((controller.desiredSize ?? 0) < -options.maxBufferedChunks) {
      for (const chunk of mapper.end({ errorText: fellBehind })) controller.enqueue(chunk);
      close();
    }
  };
  const begin = (messageId?: string) => {
    if (began || closed) return;
    began = true;
    enqueue(mapper.start(messageId));
    flush();
  };
  const flush = () => {
    scheduled = false;
    if (!began || closed) return;
    const batch = queue;
    queue = [];
    for (const event of batch) {
      enqueue(mapper.map(event));
      if (closed) return;
    }
    if (options.endAtApproval && mapper.waiting) enqueue(mapper.end({ finishReason: 'tool-calls', status: 'awaitingApproval' }));
  };

  const stream = new ReadableStream<UIMessageChunk>(
    {
      start(started) {
        controller = started;
      },
      cancel() {
        // The reader left: stop following; the run goes on.
        closed = true;
        queue = [];
        stopAll();
      },
    },
    { highWaterMark: 0 },
  );
  if (!options.deferStart) begin();

  return {
    stream,
    begin,
    sink: {
      push(event) {
        if (closed) return;
        if (event.type === 'state') sawState = true;
        queue.push(event);
        if (!scheduled) {
          scheduled = true;
          queueMicrotask(flush);
        }
      },
      fail() {
        if (closed) return;
        if (!began) begin();
        flush();
        enqueue(mapper.end({ errorText: interrupted }));
      },
    },
    end(ending) {
      if (closed) return;
      if (!began) begin();
      flush();
      enqueue(mapper.end(ending));
    },
    abandon() {
      if (closed) return;
      closed = true;
      stopAll();
      controller.error(new Error('the message stream was not sent'));
    },
    get sawState() {
      return sawState;
    },
    onStop(stop) {
      if (closed) stop();
      else stops.push(stop);
    },
  };
}
