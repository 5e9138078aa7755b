import type { ConversationLease } from '../../host/conversation-lease.js';
import type { PostgresPool } from './postgres-pool.js';
import type { TableNames } from './schema.js';

type LeaseRow = { token: string; expires_at: number };

/** What acquire and renew answer: the token and the expiry in epoch milliseconds. */
const returningLease = 'RETURNING token, extract(epoch FROM expires_at)::float8 * 1000 AS expires_at';

/** The lease a statement answered with, if it answered with one. */
const answered = (conversationId: string, owner: string, rows: Array<Record<string, unknown>>) => {
  const row = rows[0] as LeaseRow | undefined;
  return row ? leaseOf(conversationId, owner, row) : undefined;
};

const leaseOf = (conversationId: string, owner: string, row: LeaseRow): ConversationLease => ({
  conversationId,
  owner,
  token: Number(row.token),
  expiresAt: Math.round(row.expires_at),
});

/**
 * The lease for `owner` when nobody holds it, it lapsed, or `owner` itself holds it (a host that
 * lost track of its own lease, or restarted with the same host id): always with a new token, which
 * fences every write made under an older one. The database's clock decides what lapsed.
 */
export async function acquireLease(
  pool: PostgresPool,
  names: TableNames,
  conversationId: string,
  owner: string,
  ttlMs: number,
): Promise<ConversationLease | undefined> {
  const { rows } = await pool.query(
    `INSERT INTO ${names.leases} AS held (conversation_id, owner, token, expires_at)
     VALUES ($1, $2, nextval('${names.leaseTokens}'), now() + $3::float8 * interval '1 millisecond')
     ON CONFLICT (conversation_id) DO UPDATE SET owner = excluded.owner, token = excluded.token, expires_at = excluded.expires_at
       WHERE held.expires_at <= now() OR held.owner = excluded.owner
     ${returningLease}`,
    [conversationId, owner, ttlMs],
  );
  return answered(conversationId, owner, rows);
}

/** The lease extended to `ttlMs` from now, if its token is still the conversation's (lapsed or not: nobody took it over). */
export async function renewLease(
  pool: PostgresPool,
  names: TableNames,
  lease: ConversationLease,
  ttlMs: number,
): Promise<ConversationLease | undefined> {
  const { rows } = await pool.query(
    `UPDATE ${names.leases} SET expires_at = now() + $3::float8 * interval '1 millisecond'
     WHERE conversation_id = $1 AND token = $2::bigint
     ${returningLease}`,
    [lease.conversationId, lease.token, ttlMs],
  );
  return answered(lease.conversationId, lease.owner, rows);
}

/** Gives the lease up, if it is still held under its token. */
export async function releaseLease(pool: PostgresPool, names: TableNames, lease: ConversationLease): Promise<void> {
  await pool.query(`DELETE FROM ${names.leases} WHERE conversation_id = $1 AND token = $2::bigint`, [lease.conversationId, lease.token]);
}

/** Who holds the conversation now, in words, for the error of a refused write. */
export async function describeHolder(pool: PostgresPool, names: TableNames, conversationId: string): Promise<string> {
  const { rows } = await pool.query(
    `SELECT owner, token, expires_at > now() AS live, to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS until
     FROM ${names.leases} WHERE conversation_id = $1`,
    [conversationId],
  );
  const row = rows[0] as { owner: string; token: string; live: boolean; until: string } | undefined;
  if (!row) return 'no host holds its lease now (it was given up)';
  return `host ${JSON.stringify(row.owner)} holds it with token ${row.token}, ${row.live ? 'until' : 'lapsed at'} ${row.until}`;
}

/** The lease of each row a batch statement answered with, by conversation. */
const answeredEach = (rows: Array<Record<string, unknown>>) =>
  new Map(rows.map((row) => [row.conversation_id as string, row as LeaseRow & { conversation_id: string }]));

/**
 * {@link acquireLease} for several conversations at once (one request per conversation), in one
 * statement: each request gets its lease or `undefined`, as on its own.
 */
export async function acquireLeases(
  pool: Pick<PostgresPool, 'query'>,
  names: TableNames,
  requests: ReadonlyArray<{ conversationId: string; owner: string; ttlMs: number }>,
): Promise<Array<ConversationLease | undefined>> {
  const { rows } = await pool.query(
    `INSERT INTO ${names.leases} AS held (conversation_id, owner, token, expires_at)
     SELECT asked.conversation_id, asked.owner, nextval('${names.leaseTokens}'), now() + asked.ttl * interval '1 millisecond'
     FROM unnest($1::text[], $2::text[], $3::float8[]) AS asked(conversation_id, owner, ttl)
     ORDER BY asked.conversation_id
     ON CONFLICT (conversation_id) DO UPDATE SET owner = excluded.owner, token = excluded.token, expires_at = excluded.expires_at
       WHERE held.expires_at <= now() OR held.owner = excluded.owner
     RETURNING conversation_id, token, extract(epoch FROM expires_at)::float8 * 1000 AS expires_at`,
    [requests.map(({ conversationId }) => conversationId), requests.map(({ owner }) => owner), requests.map(({ ttlMs }) => ttlMs)],
  );
  const got = answeredEach(rows);
  return requests.map(({ conversationId, owner }) => {
    const row = got.get(conversationId);
    return row ? leaseOf(conversationId, owner, row) : undefined;
  });
}

/** {@link renewLease} for several leases of different conversations at once, in one statement. */
export async function renewLeases(
  pool: Pick<PostgresPool, 'query'>,
  names: TableNames,
  requests: ReadonlyArray<{ lease: ConversationLease; ttlMs: number }>,
): Promise<Array<ConversationLease | undefined>> {
  const { rows } = await pool.query(
    `UPDATE ${names.leases} AS held SET expires_at = now() + asked.ttl * interval '1 millisecond'
     FROM unnest($1::text[], $2::bigint[], $3::float8[]) AS asked(conversation_id, token, ttl)
     WHERE held.conversation_id = asked.conversation_id AND held.token = asked.token
     RETURNING held.conversation_id, held.token, extract(epoch FROM held.expires_at)::float8 * 1000 AS expires_at`,
    [requests.map(({ lease }) => lease.conversationId), requests.map(({ lease }) => lease.token), requests.map(({ ttlMs }) => ttlMs)],
  );
  const got = answeredEach(rows);
  return requests.map(({ lease }) => {
    const row = got.get(lease.conversationId);
    return row ? leaseOf(lease.conversationId, lease.owner, row) : undefined;
  });
}

/** {@link releaseLease} for several leases of different conversations at once, in one statement. */
export async function releaseLeases(
  pool: Pick<PostgresPool, 'query'>,
  names: TableNames,
  leases: readonly ConversationLease[],
): Promise<void> {
  await pool.query(
    `DELETE FROM ${names.leases} AS held USING unnest($1::text[], $2::bigint[]) AS given(conversation_id, token)
     WHERE held.conversation_id = given.conversation_id AND held.token = given.token`,
    [leases.map(({ conversationId }) => conversationId), leases.map(({ token }) => token)],
  );
}
