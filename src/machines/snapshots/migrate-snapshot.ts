import { isRecord } from '../../util/is-record.js';
import type { SnapshotProblem } from './snapshot-problem.js';
import { firstSchemaVersion, type PersistedJson, type SnapshotMigration, snapshotMigrations } from './snapshot-migrations.js';

/** A snapshot brought to the current schema version, or why it cannot be. */
export type MigrationOutcome = { snapshot: unknown; from: number; problem?: undefined } | { problem: SnapshotProblem };

const isVersion = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= firstSchemaVersion;

/**
 * The persisted snapshot (parsed from storage) upgraded to the current schema version by the chain
 * of {@link snapshotMigrations}. Its version is its own `schemaVersion`, else `from` (what the
 * record around it says), else the first version — snapshots written before the field existed
 * carry none. A snapshot that is not an object is handed back as it is: finding what is wrong with
 * it is `findSnapshotProblem`'s job. A version newer than this actorloop's, or one that is
 * not a version at all, is a problem (`unknown_version`), and nothing is changed.
 *
 * @example
 * ```ts
 * const outcome = migrateSnapshot(JSON.parse(stored.snapshot), { from: stored.schemaVersion });
 * if (outcome.problem) throw new Error(outcome.problem.message);
 * const actor = createActor(machine, { snapshot: outcome.snapshot as ConversationSnapshot });
 * ```
 */
export function migrateSnapshot(
  persisted: unknown,
  options: { from?: number | undefined; steps?: readonly SnapshotMigration[] } = {},
): MigrationOutcome {
  const steps = options.steps ?? snapshotMigrations;
  const current = firstSchemaVersion + steps.length;
  if (!isRecord(persisted)) return { snapshot: persisted, from: options.from ?? firstSchemaVersion };
  // A field that is there but null is damage, not a snapshot from before the field existed.
  const found = 'schemaVersion' in persisted ? persisted.schemaVersion : (options.from ?? firstSchemaVersion);
  if (!isVersion(found)) {
    return {
      problem: {
        kind: 'unknown_version',
        message: `its schemaVersion ${JSON.stringify(found) ?? typeof found} is not a version (an integer from ${firstSchemaVersion}); this actorloop reads versions ${firstSchemaVersion} to ${current}`,
      },
    };
  }
  if (found > current) {
    return {
      problem: {
        kind: 'unknown_version',
        message: `it has schemaVersion ${found}, written by a newer actorloop; this actorloop reads versions ${firstSchemaVersion} to ${current}: upgrade actorloop to load it`,
      },
    };
  }
  let snapshot: PersistedJson = persisted;
  for (let version = found; version < current; version++) {
    const step = steps[version - firstSchemaVersion] as SnapshotMigration;
    snapshot = step(snapshot);
    // A step that forgets to stamp its version would make the next load upgrade the snapshot again.
    if (snapshot.schemaVersion !== version + 1) {
      throw new Error(`snapshot migration ${version} → ${version + 1} returned schemaVersion ${JSON.stringify(snapshot.schemaVersion)}`);
    }
  }
  return { snapshot, from: found };
}

/**
 * {@link migrateSnapshot} for a restore with nowhere to report a problem but a throw: what
 * `createActor(machine, { snapshot })` runs first. XState puts what it throws on the actor (status
 * `error`), so `actor.start()` reports it to the actor's error observers — with none, XState
 * throws it from a timer as an unhandled error.
 *
 * @example
 * ```ts
 * const snapshot = upgradeSnapshot(JSON.parse(text)); // throws for a snapshot of a newer actorloop
 * ```
 */
export function upgradeSnapshot<T>(persisted: T): T {
  const outcome = migrateSnapshot(persisted);
  if (outcome.problem) throw new Error(`the persisted snapshot cannot be restored (unknown version): ${outcome.problem.message}`);
  return outcome.snapshot as T;
}
