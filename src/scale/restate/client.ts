import * as clients from '@restatedev/restate-sdk-clients';
import type { AnyStateMachine, InputFrom } from 'xstate';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { checkConversationId, checkSessionData, checkWorkflowEvent, startInput } from '../../host/check-input.js';
import type { HostEventOf, HostOutputOf } from '../../host/conversation-host.js';
import type { ConversationView } from '../../host/conversation-view.js';
import { ConversationLoadError, type ConversationLoadProblem } from '../../host/errors/conversation-load-error.js';
import { ConversationNotFoundError } from '../../host/errors/conversation-not-found-error.js';
import { type EventRejectedCode, EventRejectedError } from '../../host/errors/event-rejected-error.js';
import type { ConversationMachine } from '../../machines/names/types.js';
import { isRecord } from '../../util/is-record.js';
import { option, resolveOptionsWith } from '../../util/option-schema.js';
import { ensurePromiseWithResolvers } from './promise-with-resolvers.js';

/**
 * Where the conversations are: Restate's ingress, and the object's name the workers registered.
 *
 * @example
 * ```ts
 * const options: RestateConversationClientOptions = { url: 'http://127.0.0.1:8080', headers: { authorization: `Bearer ${token}` } };
 * ```
 */
export type RestateConversationClientOptions = {
  /** The ingress URL of restate-server, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** The object's name, as given to `restateConversations` (default `conversation`). */
  name?: string;
  /** Headers sent with every call (authentication in front of the ingress). */
  headers?: Record<string, string>;
};

/**
 * Options of `client.send`.
 *
 * @example
 * ```ts
 * await client.send('c-42', { type: 'user.message', content: 'Hi' }, { sessionData: { userId: 'u1' }, idempotencyKey: 'c-42/turn-1' });
 * ```
 */
export type RestateSendOptions = {
  /** The conversation's `sessionData` from the run this `user.message` starts on (plain JSON; `null` clears it). */
  sessionData?: unknown;
  /**
   * Restate applies a `send` with the same key once, and answers a repeat with the first answer:
   * a caller that retries after a lost connection does not start a run twice.
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
};

/**
 * Options of `client.start`: the workflow's `input` (its machine's own, plain JSON) and
 * `sessionData` (given to the run as `input.sessionData`), as `host.start` takes them.
 *
 * @example
 * ```ts
 * await client.start('order-7', { input: { item: 'lamp' }, sessionData: { userId: 'u1' }, idempotencyKey: 'order-7/start' });
 * ```
 */
export type RestateStartOptions<TInput = unknown> = {
  input?: TInput;
  sessionData?: unknown;
  /** Restate applies a `start` with the same key once, and answers a repeat with the first answer. */
  idempotencyKey?: string;
  signal?: AbortSignal;
};

/**
 * Another process's way to the conversations: send events, read a conversation, wait for a run's
 * output — the durable host's `send`, `get` and `result`, over Restate's ingress; for a workflow's
 * object (`TMachine` a workflow machine) also `start`. The errors are the host's:
 * `EventRejectedError`, `ConversationNotFoundError`, `ConversationLoadError`,
 * `InvalidOptionsError`.
 *
 * @example
 * ```ts
 * const client: RestateConversationClient = restateConversationClient({ url: 'http://127.0.0.1:8080' });
 * await client.send('c-42', { type: 'user.message', content: 'Refund order 1001' });
 * const output = await client.result('c-42');
 *
 * const orders = restateConversationClient<typeof orderWorkflow>({ url: 'http://127.0.0.1:8080', name: 'order' });
 * await orders.start('order-7', { input: { item: 'lamp' } });
 * ```
 */
export interface RestateConversationClient<TMachine extends AnyStateMachine = ConversationMachine> {
  /**
   * Starts a run of a workflow from `input` (an id not in use, or one whose last run ended) and
   * resolves once its first state is stored; the run goes on in the workers. Only a workflow's
   * object has `start` (a conversation begins with `send(id, { type: 'user.message', … })`).
   * Rejects with `EventRejectedError` while a run of it is in progress.
   */
  start(id: string, options?: RestateStartOptions<InputFrom<TMachine>>): Promise<ConversationView>;
  /**
   * Applies the event and resolves with the conversation once the state it led to is stored; the run
   * goes on in the workers. A `user.message` starts a conversation, or the next run of one whose last
   * run ended; during a run it is rejected. A workflow takes the events of its chart that it takes
   * now (`EventRejectedError` otherwise), `tool.approve` / `tool.deny` for a conversation in it, and
   * `cancel`.
   */
  send(id: string, event: HostEventOf<TMachine>, options?: RestateSendOptions): Promise<ConversationView>;
  /** The conversation now, or `undefined` when none has this id. Answers during a run. */
  get(id: string, options?: { signal?: AbortSignal }): Promise<ConversationView | undefined>;
  /** The output of the run in progress, once it ends (however long that takes), or of the last run. */
  result(id: string, options?: { signal?: AbortSignal }): Promise<HostOutputOf<TMachine>>;
}

/** The error a handler threw, rebuilt from what the ingress answered (see `toTerminalError`). */
export function conversationErrorOf(error: unknown): unknown {
  if (!(error instanceof clients.HttpCallError)) return error;
  let body: unknown;
  try {
    body = JSON.parse(error.responseText);
  } catch {
    return error;
  }
  if (!isRecord(body) || !isRecord(body.metadata) || typeof body.message !== 'string') return error;
  const metadata = body.metadata as Record<string, string>;
  const rebuilt = rebuild(metadata);
  if (!rebuilt) return error;
  // The handler's own words, exactly.
  rebuilt.message = body.message;
  return rebuilt;
}

function rebuild(metadata: Record<string, string>): Error | undefined {
  const id = metadata.conversationId ?? '';
  switch (metadata.error) {
    case 'InvalidOptionsError':
      return new InvalidOptionsError(metadata.option ?? 'input', 'a valid value');
    case 'ConversationNotFoundError':
      return new ConversationNotFoundError(id, '');
    case 'EventRejectedError':
      return new EventRejectedError({
        conversationId: id,
        eventType: metadata.eventType ?? '',
        code: (metadata.code ?? 'rejected') as EventRejectedCode,
        message: '',
      });
    case 'ConversationLoadError':
      return new ConversationLoadError(id, (metadata.problem ?? 'corrupt') as ConversationLoadProblem, '');
    // A workflow whose machine failed: `result` rejects with why, as the host's does.
    case 'WorkflowError':
      return new Error('');
    default:
      return undefined;
  }
}

/** Unknown keys are ignored, not refused: restateConversationClient never refused them, so options that worked still do. */
const restateConversationClientOptionsSchema = option.object(
  {
    url: option.matching(
      'the ingress URL of restate-server, e.g. "http://127.0.0.1:8080"',
      (value): value is string => typeof value === 'string' && /^https?:\/\//.test(value),
    ),
    name: option.orElse(option.string({ nonEmpty: true, expected: 'the conversation object name' }), () => 'conversation'),
    // Handed to the Restate client as they are: it is what says what headers it takes.
    headers: option.unchecked<Record<string, string> | undefined>(),
  },
  { expected: 'an object { url, name?, headers? }', unknownKeys: 'ignore' },
);

const restateStartOptionsSchema = option.object(
  {
    input: option.unchecked('plain JSON'),
    sessionData: option.unchecked('plain JSON'),
    idempotencyKey: option.optional(option.string({ nonEmpty: true })),
    signal: option.unchecked<AbortSignal | undefined>(),
  },
  { expected: 'an object { input?, sessionData?, idempotencyKey?, signal? }', unknownKeys: 'ignore' },
);

const restateSendOptionsSchema = option.object(
  {
    sessionData: option.transform(option.unchecked('plain JSON'), (sessionData) => {
      checkSessionData(sessionData);
      return sessionData;
    }),
    idempotencyKey: option.optional(option.string({ nonEmpty: true })),
    signal: option.unchecked<AbortSignal | undefined>(),
  },
  { expected: 'an object { sessionData?, idempotencyKey?, signal? }', unknownKeys: 'ignore' },
);

/**
 * A client for the conversations the workers serve (`restateConversations`), through Restate's
 * ingress. Needs `@restatedev/restate-sdk-clients` only. For a workflow's object, give the
 * workflow's machine type (`restateConversationClient<typeof orderWorkflow>(…)`): `start`'s input,
 * `send`'s events and `result`'s output are then the workflow's own.
 *
 * @example
 * ```ts
 * import { restateConversationClient } from 'actorloop/restate/client';
 *
 * const client = restateConversationClient({ url: 'http://127.0.0.1:8080' });
 * await client.send('c-42', { type: 'user.message', content: 'Hi' }, { idempotencyKey: 'c-42/1' });
 * const view = await client.get('c-42');   // { id, status, value, messages, pendingApprovals, updatedAt }
 * const output = await client.result('c-42');
 *
 * const orders = restateConversationClient<typeof orderWorkflow>({ url: 'http://127.0.0.1:8080', name: 'order' });
 * await orders.start('order-7', { input: { item: 'lamp' } });
 * await orders.send('order-7', { type: 'tool.approve', toolCallId: 'charge-1' }); // relayed to the conversation that waits
 * ```
 */
export function restateConversationClient<TMachine extends AnyStateMachine = ConversationMachine>(
  options: RestateConversationClientOptions,
): RestateConversationClient<TMachine> {
  ensurePromiseWithResolvers();
  const { url, name, headers } = resolveOptionsWith(restateConversationClientOptionsSchema, options);
  const ingress = clients.connect({ url, ...(headers === undefined ? {} : { headers }) });

  const call = async <TInput, TOutput>(
    id: string,
    handler: string,
    parameter: TInput,
    callOptions: { idempotencyKey?: string; signal?: AbortSignal },
  ): Promise<TOutput> => {
    try {
      return await ingress.call<TInput, TOutput>({
        service: name,
        handler,
        key: id,
        parameter,
        opts: clients.Opts.from<TInput, TOutput>({
          input: clients.serde.json as clients.Serde<TInput>,
          output: clients.serde.json as clients.Serde<TOutput>,
          ...(callOptions.idempotencyKey === undefined ? {} : { idempotencyKey: callOptions.idempotencyKey }),
          ...(callOptions.signal === undefined ? {} : { signal: callOptions.signal }),
        }),
      });
    } catch (error) {
      throw conversationErrorOf(error);
    }
  };

  return {
    async start(id, startOptions = {}) {
      checkConversationId(id);
      const { input, sessionData, idempotencyKey, signal } = resolveOptionsWith(restateStartOptionsSchema, startOptions);
      // Checked here as the object checks it, so bad input is refused before it travels.
      startInput(id, { input, sessionData }, true);
      const parameter = { ...(input === undefined ? {} : { input }), ...(sessionData === undefined ? {} : { sessionData }) };
      return call(id, 'start', parameter, { idempotencyKey, signal });
    },
    async send(id, event, sendOptions = {}) {
      checkConversationId(id);
      // A conversation's object refuses an event other than a user event itself, naming it.
      checkWorkflowEvent(event);
      const { sessionData, idempotencyKey, signal } = resolveOptionsWith(restateSendOptionsSchema, sendOptions);
      const input = { event, ...(sessionData === undefined ? {} : { sessionData }) };
      return call(id, 'send', input, { idempotencyKey, signal });
    },
    async get(id, getOptions = {}) {
      checkConversationId(id);
      const view = await call<null, ConversationView | null>(id, 'get', null, getOptions);
      return view ?? undefined;
    },
    async result(id, resultOptions = {}) {
      checkConversationId(id);
      return call<null, HostOutputOf<TMachine>>(id, 'result', null, resultOptions);
    },
  };
}
