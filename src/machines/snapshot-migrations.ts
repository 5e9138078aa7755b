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

/** `snapshotMigrations[i]` upgrades version `firstSchemaVersion + i` to the next one. In order; append only. */
export const snapshotMigrations: readonly SnapshotMigration[] = [v1ToV2];

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
