/**
 * A workflow for the host's tests (DESIGN §18): two research conversations at once (parallel
 * states, each calling `lookup`), then a payer conversation whose `charge` call needs approval,
 * then a person's `order.confirm`. A conversation that does not end `done` ends the workflow with
 * `status: 'error'` in its output. Answers come from a planned model (each request answered from
 * its own history), so a request made again after a restart gets the same answer.
 */
import { assign, setup } from 'xstate';
import { z } from 'zod';
import { conversationInput, createConversationMachine, defineTool, handlerProvider, type RunOutput } from '../../src/index.js';
import { type PlanStep, plannedModel } from './planned-model.js';
import type { ScriptedTurn } from './scripted-model.js';

export type OrderOutput = { status: 'done' | 'error'; findings: string[]; payment: string; failure?: string };

/** What the tools did, and a hold a test puts on the next lookup of a side. */
export type OrderProbe = {
  lookups: string[];
  charges: number;
  /** A lookup of this side waits until released (or its signal aborts). */
  hold: Set<string>;
  release: () => void;
  aborted: string[];
};

export function orderPlan(step: PlanStep): ScriptedTurn {
  const side = step.conversation.split(':')[0] as string;
  if (side === 'pay') {
    return step.round === 0 ? { toolCalls: [{ id: 'charge-1', name: 'charge', args: { cents: 8900 } }] } : { text: 'paid 89.00' };
  }
  return step.round === 0 ? { toolCalls: [{ id: `look-${side}`, name: 'lookup', args: { side } }] } : { text: `${side} found` };
}

export function orderWorkflow({ id = 'order' }: { id?: string } = {}) {
  const probe: OrderProbe = { lookups: [], charges: 0, hold: new Set(), release: () => undefined, aborted: [] };
  const released: Array<() => void> = [];
  probe.release = () => {
    probe.hold.clear();
    for (const go of released.splice(0)) go();
  };
  const lookup = defineTool({
    name: 'lookup',
    description: 'Looks a side up.',
    parameters: z.object({ side: z.string() }),
    execute: async ({ side }, { signal }) => {
      probe.lookups.push(side);
      if (probe.hold.has(side)) {
        await new Promise<void>((resolve, reject) => {
          released.push(resolve);
          signal?.addEventListener('abort', () => {
            probe.aborted.push(side);
            reject(new Error('aborted'));
          });
        });
      }
      return `${side}: in stock`;
    },
  });
  const charge = defineTool({
    name: 'charge',
    description: 'Charges the card.',
    parameters: z.object({ cents: z.number() }),
    needsApproval: true,
    execute: ({ cents }) => {
      probe.charges++;
      return `charged ${cents}`;
    },
  });
  const model = plannedModel(orderPlan);
  const provider = handlerProvider(model.handler);
  const researcher = createConversationMachine({ provider, tools: [lookup] });
  const payer = createConversationMachine({ provider, tools: [charge] });
  const outputOf = (event: unknown) => (event as { output: RunOutput }).output;
  const failed = { target: '#order-failed', actions: 'recordFailure' as const };
  const crashed = { target: '#order-failed', actions: 'recordCrash' as const };
  const machine = setup({
    types: {
      context: {} as { item: string; findings: string[]; payment: string; failure?: string },
      input: {} as { item: string; sessionData?: unknown },
      events: {} as { type: 'order.confirm' } | { type: 'order.explode' },
      output: {} as OrderOutput,
    },
    actors: { researcher, payer },
    guards: { finished: ({ event }) => outputOf(event).status === 'done' },
    actions: {
      recordFailure: assign({ failure: ({ event }) => `${outputOf(event).status}: ${outputOf(event).error?.message ?? ''}` }),
      recordCrash: assign({ failure: ({ event }) => `crashed: ${String((event as { error?: unknown }).error)}` }),
    },
  }).createMachine({
    id,
    context: ({ input }) => ({ item: input.item, findings: [], payment: '' }),
    initial: 'researching',
    states: {
      researching: {
        type: 'parallel',
        states: {
          left: {
            initial: 'asking',
            states: {
              asking: {
                invoke: {
                  id: 'left',
                  src: 'researcher',
                  input: ({ context }) => conversationInput(`left: find ${context.item}`),
                  onDone: [
                    {
                      guard: 'finished',
                      target: 'found',
                      actions: assign({ findings: ({ context, event }) => [...context.findings, event.output.text] }),
                    },
                    failed,
                  ],
                  onError: crashed,
                },
              },
              found: { type: 'final' },
            },
          },
          right: {
            initial: 'asking',
            states: {
              asking: {
                invoke: {
                  id: 'right',
                  src: 'researcher',
                  input: ({ context }) => conversationInput(`right: find ${context.item}`),
                  onDone: [
                    {
                      guard: 'finished',
                      target: 'found',
                      actions: assign({ findings: ({ context, event }) => [...context.findings, event.output.text] }),
                    },
                    failed,
                  ],
                  onError: crashed,
                },
              },
              found: { type: 'final' },
            },
          },
        },
        onDone: 'paying',
      },
      paying: {
        invoke: {
          id: 'payer',
          src: 'payer',
          input: ({ context }) => conversationInput(`pay: for ${context.item}`),
          onDone: [{ guard: 'finished', target: 'confirming', actions: assign({ payment: ({ event }) => event.output.text }) }, failed],
          onError: crashed,
        },
      },
      confirming: {
        on: {
          'order.confirm': 'confirmed',
          'order.explode': {
            actions: () => {
              throw new Error('the confirm action exploded');
            },
          },
        },
      },
      confirmed: { type: 'final' },
      failed: { id: 'order-failed', type: 'final' },
    },
    output: ({ context }) => ({
      status: context.failure ? ('error' as const) : ('done' as const),
      findings: [...context.findings].sort(),
      payment: context.payment,
      ...(context.failure ? { failure: context.failure } : {}),
    }),
  });
  return { machine, probe, model };
}
