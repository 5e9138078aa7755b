/**
 * The steps that upgrade a persisted snapshot of the conversation machine from one schema version
 * to the next — the only file to change when the stored format changes: add a step at the end of
 * {@link snapshotMigrations} (the current version is counted from the list), give it a unit test,
 * and commit fixtures written by the release before (see docs/durable-conversations.md, "Versions
 * and migrations").
 *
 * A step is a pure function of the JSON a store holds: it never throws on data the version before
 * wrote, never looks at the clock, and returns a new object (it may share unchanged parts).
 */

import { isRecord } from '../../util/is-record.js';

/** A persisted snapshot as parsed from storage: plain JSON, fields of the version it was written with. */
export type PersistedJson = Record<string, unknown>;

/** One step: a snapshot of version `n` in, the same run as version `n + 1` out (with `schemaVersion: n + 1`). */
export type SnapshotMigration = (snapshot: PersistedJson) => PersistedJson;

/** The version of the snapshots written before snapshots carried `schemaVersion` (actorloop 0.1). */
export const firstSchemaVersion = 1;

/**
 * Version 1 → 2: the snapshot names its format. Version 1 (actorloop 0.1) had no `schemaVersion`
 * field in the snapshot (only the store's record said `version: 1`); nothing else changed.
 */
export function v1ToV2(snapshot: PersistedJson): PersistedJson {
  return { ...snapshot, schemaVersion: 2 };
}

/**
 * A message part of version 2 as version 3 has it: what the Responses API kept in the part's own
 * `openai` field now sits under `providerMetadata.openai`, unchanged. Anything else — a part
 * without the field, or a value that is not a part — comes back as it is (the same object).
 */
function partToV3(part: unknown): unknown {
  if (!isRecord(part) || !('openai' in part)) return part;
  const { openai, ...rest } = part;
  if (openai === undefined) return rest;
  const kept = isRecord(rest.providerMetadata) ? rest.providerMetadata : {};
  return { ...rest, providerMetadata: { ...kept, openai } };
}

/** The parts of a list (a message's `content`, a pending response's), the same list when none changes. */
function partsToV3(parts: unknown): unknown {
  if (!Array.isArray(parts)) return parts;
  const next = parts.map(partToV3);
  return next.some((part, index) => part !== parts[index]) ? next : parts;
}

/**
 * A history written by any earlier release, in today's message model: parts with the Responses
 * API's own `openai` field (before `providerMetadata`) have it moved under
 * `providerMetadata.openai`, unchanged, so their reasoning still goes back verbatim. Used on a
 * stored snapshot's histories (version 2 → 3) and on `input.messages` as a run starts. The same
 * list when nothing changes.
 *
 * @example
 * ```ts
 * upgradedMessages([{ role: 'assistant', content: [{ type: 'reasoning', text: '', openai: { itemId: 'rs_1', encryptedContent: 'gAAA…' } }] }]);
 * // [{ role: 'assistant', content: [{ type: 'reasoning', text: '', providerMetadata: { openai: { itemId: 'rs_1', encryptedContent: 'gAAA…' } } }] }]
 * ```
 */
export function upgradedMessages(messages: unknown): unknown {
  return messagesToV3(messages);
}

/** A history: each message with its content parts moved on, the same list when none changes. */
function messagesToV3(messages: unknown): unknown {
  if (!Array.isArray(messages)) return messages;
  const next = messages.map((message: unknown) => {
    if (!isRecord(message)) return message;
    const content = partsToV3(message.content);
    return content === message.content ? message : { ...message, content };
  });
  return next.some((message, index) => message !== messages[index]) ? next : messages;
}

/**
 * Version 2 → 3: the message model carries no wire's fields. Parts the Responses API produced
 * kept its item ids, `phase`, encrypted reasoning and summary in `openai`; version 3 keeps the
 * same values in `providerMetadata.openai`. Histories live in `context.messages`, in
 * `context.response.content` (a response not yet committed) and, for a finished run, in
 * `output.messages`; children are not persisted.
 */
export function v2ToV3(snapshot: PersistedJson): PersistedJson {
  const next: PersistedJson = { ...snapshot, schemaVersion: 3 };
  const context = snapshot.context;
  if (isRecord(context)) {
    const response = context.response;
    next.context = {
      ...context,
      messages: messagesToV3(context.messages),
      ...(isRecord(response) ? { response: { ...response, content: partsToV3(response.content) } } : {}),
    };
  }
  const output = snapshot.output;
  if (isRecord(output) && 'messages' in output) next.output = { ...output, messages: messagesToV3(output.messages) };
  return next;
}

/**
 * Version 3 → 4: runs can make agent calls. The context gains `agents` (the run's depth in an agent
 * tree, 0 for every run before, and the usage of the children that ended, none); a persisted
 * snapshot may now hold agent children (`agent:<toolCallId>`), which version 3 never wrote.
 */
export function v3ToV4(snapshot: PersistedJson): PersistedJson {
  const next: PersistedJson = { ...snapshot, schemaVersion: 4 };
  const context = snapshot.context;
  if (isRecord(context) && !isRecord(context.agents)) next.context = { ...context, agents: { depth: 0, usageByAgent: [], approvals: [] } };
  return next;
}

/**
 * Version 4 → 5: long conversations (DESIGN §12). The context gains `control`: the first provider
 * of a fallback list, no queued message, no budget limit (a run before had none), no guardrail
 * being checked, no compaction. A run in progress keeps going as it did.
 */
export function v4ToV5(snapshot: PersistedJson): PersistedJson {
  const next: PersistedJson = { ...snapshot, schemaVersion: 5 };
  const context = snapshot.context;
  if (isRecord(context) && !isRecord(context.control)) {
    next.context = {
      ...context,
      control: { provider: 0, queued: [], limits: {}, startedAt: null, childSpend: {}, check: 0, compactedAt: null },
    };
  }
  return next;
}

/** `snapshotMigrations[i]` upgrades version `firstSchemaVersion + i` to the next one. In order; append only. */
export const snapshotMigrations: readonly SnapshotMigration[] = [v1ToV2, v2ToV3, v3ToV4, v4ToV5];

/**
 * The snapshot schema version this actorloop writes (`schemaVersion` of every persisted snapshot and
 * stored conversation) and the newest it reads; older ones are upgraded when they are loaded.
 *
 * @example
 * ```ts
 * const persisted = JSON.parse(text) as { schemaVersion?: number };
 * if ((persisted.schemaVersion ?? firstSchemaVersion) > currentSchemaVersion) console.warn('written by a newer actorloop');
 * ```
 */
export const currentSchemaVersion: number = firstSchemaVersion + snapshotMigrations.length;
