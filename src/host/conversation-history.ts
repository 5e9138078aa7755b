import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import type { HostedMachine, HostedSnapshot } from './hosted-machine.js';
import { type ConversationMachine, type ConversationStateValue, currentSchemaVersion } from '../machines/hostable.js';
import { findMessagesProblem, type Message } from '../model/messages.js';
import { isRecord } from '../util/is-record.js';
import { option, resolveOptionsWith } from '../util/option-schema.js';
import { checkConversationId } from './check-input.js';
import type { ConversationStatus, ConversationStore, StoredConversation } from './conversation-store.js';
import { type DecodedSnapshot, decodeStored } from './decode-stored.js';
import { ConversationNotFoundError } from './errors/conversation-not-found-error.js';
import { ConversationStepNotFoundError } from './errors/conversation-step-not-found-error.js';
import { readLogOptionsSchema } from './list-options.js';

/**
 * One stored step of a conversation (`host.history(id)`): the write of revision `seq` — each state a
 * run entered, each tool call started or settled, each approval — when it was written, its state and status.
 *
 * @example
 * ```ts
 * const steps: ConversationStep[] = await host.history('c-42');
 * const beforeApproval = steps.findLast((step) => step.status === 'awaitingApproval')?.seq;
 * ```
 */
export type ConversationStep = {
  /** The revision this step wrote: what `host.get(id, { seq })` and `host.fork(id, { seq, newId })` take. */
  seq: number;
  /** When it was written (epoch milliseconds). */
  at: number;
  state: ConversationStateValue;
  status: ConversationStatus;
};

/**
 * What `host.history(id, options)` reads: the steps after `afterSeq` (exclusive), at most `limit` (default 1000).
 *
 * @example
 * ```ts
 * const next = await host.history('c-42', { afterSeq: lastSeen, limit: 100 });
 * ```
 */
export type HistoryOptions = { afterSeq?: number; limit?: number };

/**
 * What `host.fork(id, options)` takes: the step to fork from, the new conversation's id and, to
 * ask "what if", the history to put in place of that step's (validated like a run's input).
 *
 * @example
 * ```ts
 * const options: ForkOptions = { seq: 7, newId: 'c-42-refund', messages: editedHistory };
 * ```
 */
export type ForkOptions = {
  seq: number;
  newId: string;
  /**
   * Replaces the history at that step. Only at a step between rounds (a request about to be made,
   * or a run that ended): a round in progress refers to the history it came from.
   */
  messages?: Message[];
};

const seqSchema = option.integer({ minimum: 1, expected: 'a step number (a positive integer, a `seq` from host.history)' });

const forkOptionsSchema = option.object(
  {
    seq: seqSchema,
    newId: option.unchecked<string>(),
    messages: option.optional(option.unchecked<Message[]>()),
  },
  { expected: 'an object { seq, newId, messages? }', unknownKeys: 'ignore' },
);

/**
 * What `host.get(id, options)` takes: `seq` to see the conversation as one stored step left it.
 *
 * @example
 * ```ts
 * const then = await host.get('c-42', { seq: 3 } satisfies GetOptions);
 * ```
 */
export type GetOptions = { seq?: number };

const getOptionsSchema = option.object({ seq: option.optional(seqSchema) }, { expected: 'an object { seq? }', unknownKeys: 'ignore' });

/** `host.get`'s options, checked: the step asked for, if any. */
export function resolveGetOptions(options: unknown): { seq: number | undefined } {
  return resolveOptionsWith(getOptionsSchema, options ?? {}, 'options');
}

/** `host.fork`'s options, checked: a clear error naming the first one that is wrong. */
export function resolveForkOptions(options: unknown): ForkOptions {
  const resolved = resolveOptionsWith(forkOptionsSchema, options, 'options');
  try {
    checkConversationId(resolved.newId);
  } catch {
    throw new InvalidOptionsError(
      'options.newId',
      'the new conversation id: a non-empty string of at most 1024 characters',
      resolved.newId,
    );
  }
  if (resolved.messages !== undefined) {
    const problem = findMessagesProblem(resolved.messages);
    if (problem) {
      const named = problem.replace(/^input\.messages/, 'options.messages');
      throw new InvalidOptionsError('options.messages', `a history of messages (${named})`, resolved.messages);
    }
  }
  return resolved;
}

/** What a step whose snapshot cannot be read lists as its state: loading it names the problem. */
const unreadable = 'error' satisfies ConversationStateValue;

/** A step's state value, read from its `state` text or else from its snapshot; `undefined` when neither holds one. */
function stateOfStep(state: string | undefined, snapshot: string | undefined): ConversationStateValue | undefined {
  const readers = [
    () => (state === undefined ? undefined : JSON.parse(state)),
    () => (snapshot === undefined ? undefined : JSON.parse(snapshot).value),
  ];
  for (const read of readers) {
    try {
      const value: unknown = read();
      if (typeof value === 'string' || isRecord(value)) return value as ConversationStateValue;
    } catch {
      // Damaged text: the next source. Loading that step names the problem.
    }
  }
  return undefined;
}

/**
 * The conversation's stored steps: those the store keeps (`readSteps`), and always the current
 * one — a conversation stored before steps were kept, or by a store that keeps none, has that one.
 */
export async function readHistory(store: ConversationStore, id: string, options: unknown): Promise<ConversationStep[]> {
  const { afterSeq, limit } = resolveOptionsWith(readLogOptionsSchema, options ?? {}, 'options');
  const stored = await store.load(id);
  if (!stored) throw new ConversationNotFoundError(id, 'no history to read');
  const kept = store.readSteps ? await store.readSteps(id, { afterSeq, limit }) : [];
  const steps: ConversationStep[] = [];
  // A step written after the load above belongs to the next read.
  for (const { seq, at, status, state } of kept.filter((step) => step.seq <= stored.revision)) {
    // A step a writer stored without its state text (a hand-written save): read from its snapshot.
    const value = stateOfStep(state, undefined) ?? stateOfStep(undefined, (await store.loadStep?.(id, seq))?.snapshot);
    steps.push({ seq, at, status, state: value ?? unreadable });
  }
  const last = steps.at(-1)?.seq ?? afterSeq;
  if (last < stored.revision && stored.revision > afterSeq && steps.length < limit) {
    const state = stateOfStep(stored.state, stored.snapshot) ?? unreadable;
    steps.push({ seq: stored.revision, at: stored.updatedAt, status: stored.status, state });
  }
  return steps;
}

/** The conversation as step `seq` stored it; `ConversationNotFoundError` or `ConversationStepNotFoundError` when there is none. */
export async function loadStep(store: ConversationStore, id: string, seq: number): Promise<StoredConversation> {
  const stored = await store.load(id);
  if (!stored) throw new ConversationNotFoundError(id, `no step ${seq} to read`);
  if (seq === stored.revision) return stored;
  const step = seq < stored.revision ? await store.loadStep?.(id, seq) : undefined;
  if (step) return step;
  const first = (await store.readSteps?.(id, { limit: 1 }))?.[0]?.seq ?? stored.revision;
  throw new ConversationStepNotFoundError(id, seq, [Math.min(first, stored.revision), stored.revision]);
}

function inRound(value: unknown): boolean {
  return value === 'awaitingApproval' || (typeof value === 'object' && value !== null && 'executingTools' in value);
}

/**
 * The snapshot a fork starts from: step's snapshot, upgraded to the current schema version and
 * checked for `machine` (a `ConversationLoadError` otherwise), with its history replaced when `messages` is given.
 */
export function forkedSnapshot(step: StoredConversation, machine: ConversationMachine, messages: Message[] | undefined): DecodedSnapshot {
  const decoded = decodeStored(step, machine);
  if (messages === undefined) return decoded;
  if (inRound(decoded.value)) {
    throw new InvalidOptionsError(
      'options.messages',
      `a step between rounds (a request about to be made, or a run that ended); step ${step.revision} is in ${JSON.stringify(decoded.value)}, where a round of tool calls refers to the history it came from`,
      '(messages)',
    );
  }
  const context = { ...decoded.context, messages, runStart: Math.min(decoded.context.runStart, messages.length) };
  return {
    ...decoded,
    context,
    ...(decoded.output ? { output: { ...decoded.output, messages } } : {}),
  };
}

/** The stored record of a fork: revision 1 of `newId`, written by `owner`, at the current schema version. */
export function forkRecord(newId: string, snapshot: HostedSnapshot, hosted: HostedMachine, owner: string): StoredConversation {
  return {
    id: newId,
    schemaVersion: currentSchemaVersion,
    machineId: hosted.machine.id,
    status: hosted.statusOf(snapshot),
    snapshot: JSON.stringify(snapshot),
    revision: 1,
    owner,
    updatedAt: Date.now(),
    state: JSON.stringify(snapshot.value),
  };
}
