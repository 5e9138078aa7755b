import { randomBytes } from 'node:crypto';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import type { ConversationRelay, ConversationStreamItem } from '../../host/conversation-stream.js';
import { isRecord } from '../../util/is-record.js';
import { option, resolveOptionsWith } from '../../util/option-schema.js';
import {
  connectionOptionShape,
  type PostgresNotification,
  type PostgresPool,
  type PostgresPoolClient,
  poolSource,
} from './postgres-pool.js';

/**
 * What {@link postgresRelay} takes: a `pool` of yours or a `connectionString` (then the relay makes
 * a pool of two connections, and ends it on `close()`).
 *
 * @example
 * ```ts
 * const options: PostgresRelayOptions = { connectionString: process.env.DATABASE_URL, channel: 'chat_stream' };
 * ```
 */
export type PostgresRelayOptions = {
  /** A `pg` pool: the relay keeps one of its connections for `LISTEN` while it runs, and never ends the pool. */
  pool?: PostgresPool;
  /** Where to connect when no `pool` is given; needs the optional peer `pg`. */
  connectionString?: string;
  /** The notification channel every host of the service uses. Default `actorloop_stream`. */
  channel?: string;
  /**
   * Hears what the relay could not do: a listening connection that broke (it reconnects), a publish
   * that failed, an item too big for a notification. Delivery is best effort either way: what the
   * relay loses, the store has once the next write lands. Default: `console.warn`.
   */
  onError?: (error: unknown) => void;
};

/**
 * A {@link ConversationRelay} over PostgreSQL's `LISTEN`/`NOTIFY`.
 *
 * @example
 * ```ts
 * const relay: PostgresRelay = postgresRelay({ connectionString });
 * await relay.whenListening();
 * ```
 */
export type PostgresRelay = ConversationRelay & {
  /**
   * Resolves once the relay listens: at once when it does, else when its listening connection is
   * (re)established. Rejects when the relay is closed first.
   */
  whenListening(): Promise<void>;
};

/** PostgreSQL refuses a payload of 8000 bytes or more. */
const payloadLimitBytes = 7_999;
/** Payloads waiting to be sent before new ones are dropped (a database that stopped answering must not grow memory). */
const maxQueuedPayloads = 10_000;
/** Payloads one statement sends at most (each up to the notification limit, ~8 KB). */
const maxPayloadsPerStatement = 1_000;
const reconnectDelaysMs = [100, 250, 500, 1_000, 2_000, 5_000];

const relayOptionsSchema = option.object(
  {
    ...connectionOptionShape,
    channel: option.withDefault(
      option.matching('a channel name (letters, digits, _ or $, at most 63 characters)', (value): value is string =>
        typeof value === 'string' ? /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/.test(value) : false,
      ),
      'actorloop_stream',
    ),
    onError: option.orElse(option.callable<(error: unknown) => void>('a function (error) => void'), () => (error: unknown) => {
      console.warn('actorloop postgresRelay:', error);
    }),
  },
  { expected: 'an object { pool? | connectionString?, channel?, onError? }' },
);

type Message = { r: string; c: string; i: ConversationStreamItem[] };

const isItem = (value: unknown): value is ConversationStreamItem =>
  isRecord(value) && typeof value.id === 'string' && isRecord(value.event) && typeof value.event.type === 'string';

/** A notification of another relay, or `undefined` for one that is not (another program on the channel, a newer format). */
function messageOf(payload: string | undefined): Message | undefined {
  if (payload === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (!isRecord(parsed) || typeof parsed.r !== 'string' || typeof parsed.c !== 'string' || !Array.isArray(parsed.i)) return undefined;
  return { r: parsed.r, c: parsed.c, i: parsed.i.filter(isItem) };
}

/**
 * Relays live stream items between the hosts of a service over PostgreSQL's `LISTEN`/`NOTIFY`, so
 * a reader may follow a conversation from any host (`host.follow`, SSE with `Last-Event-ID`).
 *
 * - Items published in one turn of the event loop go out together, in order, split into
 *   notifications under PostgreSQL's 8000-byte payload limit; an item too big for a notification
 *   on its own (a huge tool call) is not relayed — readers get it from the store once the write
 *   that carries it lands — and `onError` hears of it.
 * - One connection listens; when it breaks (the server restarted, a proxy cut it), the relay
 *   connects again, with growing pauses up to five seconds. Items sent meanwhile are not relayed
 *   to this host; the store has them after the next write.
 *
 * @example
 * ```ts
 * import { createConversationHost } from 'actorloop';
 * import { postgresRelay, postgresStore } from 'actorloop/postgres';
 *
 * const host = createConversationHost({
 *   machine,
 *   store: postgresStore({ connectionString }),
 *   relay: postgresRelay({ connectionString }),
 * });
 * ```
 */
export function postgresRelay(options: PostgresRelayOptions): PostgresRelay {
  const resolved = resolveOptionsWith(relayOptionsSchema, options);
  const { channel, onError } = resolved;
  const pools = poolSource(resolved, options, { max: 2, applicationName: 'actorloop relay' });
  const report = (error: unknown) => {
    try {
      onError(error);
    } catch {
      // An error handler that throws has nowhere left to report to.
    }
  };
  /** Tells this relay's own notifications from the others' (they come back on its listening connection too). */
  const relayId = randomBytes(6).toString('hex');
  const listeners = new Set<(conversationId: string, items: readonly ConversationStreamItem[]) => void>();

  let closed = false;
  let closing: Promise<void> | undefined;

  // Listening: one connection, taken again whenever it breaks.
  let listening = false;
  let loop: Promise<void> | undefined;
  let listeningWaiters: Array<{ resolve: () => void; reject: (error: unknown) => void }> = [];
  /** Ends the wait the loop is in (a connection held, or a pause before the next): called by `close()`. */
  let wake: (() => void) | undefined;

  const onNotification = ({ channel: from, payload }: PostgresNotification) => {
    if (from !== channel) return;
    const message = messageOf(payload);
    if (!message || message.r === relayId || message.i.length === 0) return;
    for (const deliver of [...listeners]) {
      try {
        deliver(message.c, message.i);
      } catch (error) {
        report(error);
      }
    }
  };

  /** Holds one listening connection until it breaks or the relay closes. */
  const listenOnce = async (): Promise<boolean> => {
    const pool = await pools.get();
    const client: PostgresPoolClient = await pool.connect();
    let broken: Error | undefined;
    const dropped = new Promise<void>((resolve) => {
      wake = resolve;
      client.on('error', (error) => {
        broken = error;
        resolve();
      });
      client.on('end', () => resolve());
    });
    client.on('notification', onNotification);
    try {
      if (!closed) await client.query(`LISTEN "${channel}"`);
    } catch (error) {
      broken ??= error instanceof Error ? error : new Error(String(error));
    }
    const established = !closed && broken === undefined;
    if (established) {
      listening = true;
      const waiting = listeningWaiters;
      listeningWaiters = [];
      for (const waiter of waiting) waiter.resolve();
      await dropped;
    }
    listening = false;
    client.removeAllListeners('notification');
    // A connection that broke is closed, not given back to the pool; so is one the relay stops with (it still LISTENs).
    client.release(broken ?? true);
    if (broken && !closed) report(new Error(`the listening connection on channel "${channel}" broke; connecting again`, { cause: broken }));
    return established;
  };

  const keepListening = async () => {
    /** Attempts in a row that did not get to listen: the pause before the next grows with them. */
    let failures = 0;
    while (!closed) {
      try {
        failures = (await listenOnce()) ? 0 : failures + 1;
      } catch (error) {
        failures++;
        if (!closed) report(new Error(`cannot listen on channel "${channel}"; trying again`, { cause: error }));
      }
      if (closed) return;
      const delay = reconnectDelaysMs[Math.min(failures, reconnectDelaysMs.length - 1)] as number;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  };

  const startListening = () => {
    loop ??= keepListening();
  };

  // Publishing: statements one after the other, so they arrive in order; each takes every payload
  // waiting when it starts (up to `maxPayloadsPerStatement`), so a busy service sends fewer, larger
  // statements rather than a queue of one per turn that grows until payloads are dropped.
  let outgoing: Array<{ conversationId: string; items: readonly ConversationStreamItem[] }> = [];
  let sending: Promise<void> = Promise.resolve();
  let pumping = false;
  let waiting: string[] = [];
  let queued = 0;

  const payloadsOf = (batch: typeof outgoing): string[] => {
    const payloads: string[] = [];
    for (const { conversationId, items } of batch) {
      const head = `{"r":${JSON.stringify(relayId)},"c":${JSON.stringify(conversationId)},"i":[`;
      const headBytes = Buffer.byteLength(head) + 2;
      let parts: string[] = [];
      let bytes = headBytes;
      const flush = () => {
        if (parts.length > 0) payloads.push(`${head}${parts.join(',')}]}`);
        parts = [];
        bytes = headBytes;
      };
      for (const item of items) {
        const json = JSON.stringify(item);
        const size = Buffer.byteLength(json);
        if (headBytes + size > payloadLimitBytes) {
          report(
            new Error(
              `item ${item.id} of conversation ${JSON.stringify(conversationId)} is ${size} bytes, too big for one notification: not relayed (readers get it from the store after the next write)`,
            ),
          );
          continue;
        }
        if (bytes + size + 1 > payloadLimitBytes) flush();
        parts.push(json);
        bytes += size + 1;
      }
      flush();
    }
    return payloads;
  };

  const send = async (payloads: string[]) => {
    try {
      const pool = await pools.get();
      await pool.query('SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload', [channel, payloads]);
    } catch (error) {
      report(new Error(`${payloads.length} notification(s) on channel "${channel}" could not be sent: not relayed`, { cause: error }));
    } finally {
      queued -= payloads.length;
    }
  };

  const flushOutgoing = () => {
    const batch = outgoing;
    outgoing = [];
    const payloads = payloadsOf(batch);
    if (payloads.length === 0) return;
    if (queued + payloads.length > maxQueuedPayloads) {
      report(new Error(`${payloads.length} notification(s) dropped: ${queued} are still waiting to be sent`));
      return;
    }
    queued += payloads.length;
    for (const payload of payloads) waiting.push(payload);
    if (pumping) return;
    pumping = true;
    sending = sending.then(pump);
  };

  async function pump() {
    while (waiting.length > 0) {
      const payloads = waiting.length > maxPayloadsPerStatement ? waiting.splice(0, maxPayloadsPerStatement) : waiting;
      if (payloads === waiting) waiting = [];
      await send(payloads);
    }
    pumping = false;
  }

  return {
    publish(conversationId, items) {
      if (closed || items.length === 0) return;
      if (outgoing.length === 0) queueMicrotask(flushOutgoing);
      outgoing.push({ conversationId, items: [...items] });
    },

    subscribe(deliver) {
      if (typeof deliver !== 'function') throw new InvalidOptionsError('listener', 'a function (conversationId, items) => void', deliver);
      const own = (conversationId: string, items: readonly ConversationStreamItem[]) => deliver(conversationId, items);
      listeners.add(own);
      if (!closed) startListening();
      return () => {
        listeners.delete(own);
      };
    },

    whenListening() {
      if (closed) return Promise.reject(new Error(`postgresRelay: closed`));
      startListening();
      if (listening) return Promise.resolve();
      return new Promise((resolve, reject) => listeningWaiters.push({ resolve, reject }));
    },

    close() {
      closing ??= (async () => {
        closed = true;
        if (outgoing.length > 0) flushOutgoing();
        const waiting = listeningWaiters;
        listeningWaiters = [];
        for (const waiter of waiting) waiter.reject(new Error('postgresRelay: closed before it listened'));
        wake?.();
        await loop?.catch(() => undefined);
        await sending;
        await pools.end();
        listeners.clear();
      })();
      return closing;
    },
  };
}
