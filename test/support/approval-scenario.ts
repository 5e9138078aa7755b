/** The cross-process approval test's machine: `transfer` needs approval; the model pays once, then confirms. */
import { z } from 'zod';
import { createConversationMachine, defineTool, handlerProvider } from '../../src/index.js';
import { plannedModel } from './planned-model.js';

export const transferCallId = (conversation: string) => `transfer-${conversation}`;

export function approvalMachine(executions: string[]) {
  const transfer = defineTool({
    name: 'transfer',
    parameters: z.object({ cents: z.number() }),
    needsApproval: true,
    execute: ({ cents }, { toolCallId }) => {
      executions.push(toolCallId);
      return `transferred ${cents} in process ${process.pid}`;
    },
  });
  const model = plannedModel((step) => {
    const conversation = step.conversation.split(':')[0] ?? '';
    return step.round === 0
      ? { toolCalls: [{ id: transferCallId(conversation), name: 'transfer', args: { cents: 4200 } }] }
      : { text: `finished ${conversation}` };
  });
  return createConversationMachine({ provider: handlerProvider(model.handler), tools: [transfer] });
}
