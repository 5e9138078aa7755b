import { assign, setup } from 'xstate';
import { createToolExecutionLogic, type ToolExecutionInput } from '../actors/tool-execution.js';
import type { ToolResultPart } from '../providers/messages.js';
import type { Tool } from '../tools/define-tool.js';
import { HaltError } from '../tools/halt-error.js';
import { capText } from '../tools/serialize-result.js';
import { resultTexts } from './tool-round.js';

/** What a tool-call machine starts from. */
export type ToolCallInput = ToolExecutionInput & {
  /** Position of the call in its round, so results are appended in call order. */
  index: number;
  timeoutMs: number;
};

/** How a tool call ended: its one result, and the halt text when the tool threw a `HaltError`. */
export type ToolCallOutcome = { index: number; result: ToolResultPart; halt?: string };

type ToolCallContext = ToolCallInput & { outcome: ToolCallOutcome | null };

/**
 * One tool call as a machine: `executing` runs the tool and races it against the `toolTimeout`
 * delayed transition. Leaving `executing` stops the execution actor and aborts its signal, so a
 * timeout holds whether or not the tool listens; every way out is a final state with one result.
 */
export function createToolCallMachine(tools: ReadonlyMap<string, Tool>, maxResultBytes: number = 100_000) {
  return setup({
    types: {
      input: {} as ToolCallInput,
      context: {} as ToolCallContext,
      output: {} as ToolCallOutcome,
    },
    actors: { executeTool: createToolExecutionLogic(tools, maxResultBytes) },
    delays: { toolTimeout: ({ context }) => context.timeoutMs },
  }).createMachine({
    id: 'toolCall',
    context: ({ input }) => ({ ...input, outcome: null }),
    initial: 'executing',
    states: {
      executing: {
        invoke: {
          src: 'executeTool',
          input: ({ context }): ToolExecutionInput => ({
            toolCallId: context.toolCallId,
            toolName: context.toolName,
            args: context.args,
            messages: context.messages,
          }),
          onDone: {
            target: 'succeeded',
            actions: assign({
              outcome: ({ context, event }) => ({
                index: context.index,
                result: { type: 'tool-result', toolCallId: context.toolCallId, toolName: context.toolName, result: event.output },
              }),
            }),
          },
          onError: [
            {
              guard: ({ event }) => HaltError.isInstance(event.error),
              target: 'halted',
              actions: assign({
                outcome: ({ context, event }) => {
                  const content = capText((event.error as HaltError).content, maxResultBytes);
                  return {
                    index: context.index,
                    result: { type: 'tool-result', toolCallId: context.toolCallId, toolName: context.toolName, result: content },
                    halt: content,
                  };
                },
              }),
            },
            {
              target: 'failed',
              actions: assign({
                outcome: ({ context, event }) => ({
                  index: context.index,
                  result: {
                    type: 'tool-result',
                    toolCallId: context.toolCallId,
                    toolName: context.toolName,
                    result: capText(resultTexts.failed(event.error), maxResultBytes),
                    isError: true,
                  },
                }),
              }),
            },
          ],
        },
        after: {
          toolTimeout: {
            target: 'timedOut',
            actions: assign({
              outcome: ({ context }) => ({
                index: context.index,
                result: {
                  type: 'tool-result',
                  toolCallId: context.toolCallId,
                  toolName: context.toolName,
                  result: resultTexts.timedOut(context.toolName, context.timeoutMs),
                  isError: true,
                },
              }),
            }),
          },
        },
      },
      succeeded: { type: 'final' },
      failed: { type: 'final' },
      timedOut: { type: 'final' },
      halted: { type: 'final' },
    },
    output: ({ context }) => context.outcome as ToolCallOutcome,
  });
}
