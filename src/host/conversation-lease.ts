import type { StoredMedia } from './stored-media.js';

/**
 * A host's claim on one conversation, handed out by a store that coordinates several host
 * processes (`acquireLease`): while it holds the lease, no other host applies events to the
 * conversation. `token` fences it: every new holder gets a larger one, and a write that carries a
 * token that is no longer the conversation's is refused (`ConversationLeaseLostError`), so a host
 * that lost its lease (paused too long, cut off from the database) cannot write after the next
 * holder took over.
 *
 * @example
 * ```ts
 * const lease = await store.acquireLease?.('c-42', host.hostId, 30_000);
 * if (lease) console.log(`held until ${new Date(lease.expiresAt).toISOString()}, token ${lease.token}`);
 * ```
 */
export type ConversationLease = {
  conversationId: string;
  /** The host that holds it (`ConversationHostOptions.hostId`). */
  owner: string;
  /** The fencing token: larger for every new holder of the conversation. */
  token: number;
  /** When it lapses unless renewed (epoch milliseconds, by the store's clock). */
  expiresAt: number;
};

/**
 * What a write may carry besides the conversation: the lease it is made under, checked by the
 * store in the same transaction as the write.
 *
 * @example
 * ```ts
 * await store.save(conversation, log, undefined, { lease });
 * ```
 */
export type SaveOptions = {
  lease?: ConversationLease;
  /**
   * For a store that keeps media once (`readMedia`): every medium the write's snapshot, log and
   * stream refer to. The store keeps the bytes of those given with `data` (once per `ref`) and
   * remembers that the conversation refers to all of them, so none is deleted while it does.
   */
  media?: readonly StoredMedia[];
};
