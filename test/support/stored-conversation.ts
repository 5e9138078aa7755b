import type { StoredConversation } from '../../src/index.js';

/** A stored conversation for store tests: revision `revision` of `id`, its snapshot naming both. */
export const storedConversation = (id: string, revision: number, extra: Partial<StoredConversation> = {}): StoredConversation => ({
  id,
  schemaVersion: 1,
  machineId: 'conversation',
  status: 'running',
  snapshot: JSON.stringify({ id, revision }),
  revision,
  owner: 'test',
  updatedAt: 1_700_000_000_000 + revision,
  ...extra,
});
