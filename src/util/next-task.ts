/** A scheduled task; pass it to {@link cancelTask}. */
export type TaskHandle = { readonly cancel: () => void };

type Immediate = (task: () => void) => unknown;
type ClearImmediate = (handle: unknown) => void;

const globals = globalThis as { setImmediate?: Immediate; clearImmediate?: ClearImmediate };
const setImmediateFn = globals.setImmediate;
const clearImmediateFn = globals.clearImmediate;

/**
 * Runs `task` after the events already queued — `setImmediate` where the runtime has it (Node, Bun,
 * Deno), a zero-delay timer where it has not (Cloudflare workerd, browsers). Either way the task
 * runs after every microtask of the current turn, which is what batching deltas of one network
 * read needs.
 *
 * @example
 * ```ts
 * const handle = nextTask(flush);
 * handle.cancel(); // flushed some other way first
 * ```
 */
export function nextTask(task: () => void): TaskHandle {
  if (setImmediateFn && clearImmediateFn) {
    const handle = setImmediateFn(task);
    return { cancel: () => clearImmediateFn(handle) };
  }
  const timer = setTimeout(task, 0);
  return { cancel: () => clearTimeout(timer) };
}
