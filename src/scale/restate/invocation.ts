import type * as restate from '@restatedev/restate-sdk';

/** Whether the invocation is past its replay; the SDK has it on its internal context only. */
export function processing(ctx: restate.Context): () => boolean {
  const internal = ctx as Partial<restate.internal.ContextInternal>;
  return () => (typeof internal.isProcessing === 'function' ? internal.isProcessing() : true);
}
