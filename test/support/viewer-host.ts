/**
 * A host the viewer tests drive: a real `createConversationHost` over a real `memoryStore`, with the
 * approval machine (`transfer` needs approval). Until the host has `history` / `fork` of its own,
 * they are taken from the store's writes (every revision kept as written).
 */
import { createConversationHost, memoryStore } from '../../src/index.js';
import type { ConversationStore, StoredConversation } from '../../src/host/conversation-store.js';
import { viewOf } from '../../src/host/conversation-view.js';
import { ConversationNotFoundError } from '../../src/host/errors/conversation-not-found-error.js';
import { InvalidOptionsError } from '../../src/errors/invalid-options-error.js';
import type { ViewerHost, ViewerStep } from '../../src/observe/inspect/index.js';
import { approvalMachine } from './approval-scenario.js';

class Named extends Error {
  constructor(name: string, message: string, fields: Record<string, unknown>) {
    super(message);
    this.name = name;
    Object.assign(this, fields);
  }
}

export function viewerHost(): { host: ViewerHost & { close(): Promise<void> }; executions: string[] } {
  const executions: string[] = [];
  const inner = memoryStore();
  const written = new Map<string, StoredConversation[]>();
  const store: ConversationStore = Object.assign(Object.create(inner) as ConversationStore, {
    save: async (conversation: StoredConversation, ...rest: unknown[]) => {
      await (inner.save as (...args: unknown[]) => Promise<void>)(conversation, ...rest);
      written.set(conversation.id, [...(written.get(conversation.id) ?? []), { ...conversation }]);
    },
  });
  for (const key of ['load', 'readLog', 'list', 'delete', 'close', 'readStream', 'claim', 'release'] as const) {
    const method = (inner as unknown as Record<string, unknown>)[key];
    if (typeof method === 'function') (store as unknown as Record<string, unknown>)[key] = method.bind(inner);
  }
  const host = createConversationHost({ machine: approvalMachine(executions), store }) as unknown as ViewerHost & {
    close(): Promise<void>;
    get(id: string): Promise<unknown>;
  };
  if (typeof (host as { history?: unknown }).history === 'function') return { host, executions };
  const own = host.get.bind(host) as (id: string) => ReturnType<ViewerHost['get']>;
  const parsed = (stored: StoredConversation) =>
    JSON.parse(stored.snapshot) as { value: unknown; context: Parameters<typeof viewOf>[1]['context'] & { usage: never } };
  const steps = async (id: string) => {
    if ((await own(id)) === undefined) throw new ConversationNotFoundError(id, 'history');
    return written.get(id) ?? [];
  };
  const shim: ViewerHost & { close(): Promise<void> } = {
    machine: host.machine,
    send: host.send.bind(host),
    follow: host.follow.bind(host),
    list: host.list.bind(host),
    close: host.close.bind(host),
    async history(id, options = {}) {
      const all = (await steps(id)).filter((one) => one.revision > (options.afterSeq ?? 0));
      return all
        .slice(0, options.limit ?? all.length)
        .map(
          (one): ViewerStep => ({
            seq: one.revision,
            at: one.updatedAt,
            state: parsed(one).value as ViewerStep['state'],
            status: one.status,
          }),
        );
    },
    async get(id, options = {}) {
      const now = await own(id);
      if (!now) return undefined;
      const all = written.get(id) ?? [];
      const step = options.seq === undefined ? all.at(-1) : all.find((one) => one.revision === options.seq);
      if (!step) {
        if (options.seq !== undefined) throw new Named('ConversationStepNotFoundError', `no step ${options.seq}`, { id, seq: options.seq });
        return now;
      }
      const state = parsed(step);
      const view = options.seq === undefined ? now : viewOf(id, state as never, step.updatedAt);
      return { ...view, seq: step.revision, usage: state.context.usage };
    },
    async fork(id, options) {
      if (!Number.isInteger(options.seq)) throw new InvalidOptionsError('seq', 'an integer', options.seq);
      const step = (await steps(id)).find((one) => one.revision === options.seq);
      if (!step) throw new Named('ConversationStepNotFoundError', `no step ${options.seq}`, { id, seq: options.seq });
      if ((await own(options.newId)) !== undefined)
        throw new Named('ConversationExistsError', `conversation ${JSON.stringify(options.newId)} exists`, {
          conversationId: options.newId,
        });
      await store.save({ ...step, id: options.newId, revision: 1, updatedAt: Date.now() });
      return (await shim.get(options.newId)) as NonNullable<Awaited<ReturnType<ViewerHost['get']>>>;
    },
  };
  return { host: shim, executions };
}
