/** A host the viewer tests drive: a real host over a real memory store, with the approval machine (`transfer` needs approval). */
import { type ConversationHost, createConversationHost, memoryStore } from '../../src/index.js';
import { approvalMachine } from './approval-scenario.js';

export function viewerHost(): { host: ConversationHost; executions: string[] } {
  const executions: string[] = [];
  return { host: createConversationHost({ machine: approvalMachine(executions), store: memoryStore() }), executions };
}
