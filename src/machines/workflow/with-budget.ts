import {
  type AnyActorRef,
  type AnyStateMachine,
  assign,
  type EventObject,
  forwardTo,
  type InputFrom,
  type MetaObject,
  type OutputFrom,
  type ParameterizedObject,
  type ProvidedActor,
  type StateMachine,
  type StateSchema,
  type StateValue,
  setup,
} from 'xstate';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { addUsage, emptyUsage, type Usage } from '../../model/usage.js';
import { isRecord } from '../../util/is-record.js';
import { option, resolveOptionsWith } from '../../util/option-schema.js';
import { markBudgetedWorkflow } from './budget-mark.js';
import { modelPrices } from '../policies/model-prices.js';
import { addCost, type PriceTable, pricesSchema, type RunCost, zeroCost } from '../policies/pricing.js';
import type { BudgetReached } from '../names/types.js';

/**
 * What `withBudget` takes: limits over every conversation of the workflow together (as an agent
 * tree's `budget` bounds the tree), and the price table `maxCostUsd` is counted with (added to the
 * built-in one).
 *
 * @example
 * ```ts
 * const options: WithBudgetOptions = { maxTotalTokens: 50_000, maxCostUsd: 0.5, maxDurationMs: 120_000 };
 * ```
 */
export type WithBudgetOptions = {
  maxTotalTokens?: number;
  maxCostUsd?: number;
  maxDurationMs?: number;
  prices?: PriceTable;
};

/**
 * What a workflow `withBudget` wraps ends with when a limit is reached: `halted` / `budget`, what
 * was spent, and the limit — the same `BudgetReached` a conversation's output carries.
 *
 * @example
 * ```ts
 * const output = await toPromise(actor);
 * if ('reason' in output && output.reason === 'budget') console.warn(output.budget);
 * ```
 */
export type WorkflowBudgetHalted = { status: 'halted'; reason: 'budget'; budget: BudgetReached; usage: Usage; costUsd: number };

/** A model the price table does not know while `maxCostUsd` is set: the workflow cannot tell what it spends. */
export type WorkflowBudgetUnpriced = { status: 'error'; reason: 'unpriced_model'; model: string; usage: Usage; costUsd: number };

/** What every conversation inside reports as its requests finish (sent by the relay, see workflow-events.ts). */
export type WorkflowSpentEvent = { type: 'workflow.spent'; model?: string; usage: Usage };

/**
 * The context of the chart `withBudget` makes: what it started your workflow with, what every
 * conversation in it spent so far, when it started, and how it ended.
 *
 * @example
 * ```ts
 * const { usage, cost } = actor.getSnapshot().context as WorkflowBudgetContext;
 * ```
 */
export type WorkflowBudgetContext = {
  input: unknown;
  usage: Usage;
  cost: RunCost;
  startedAt: number;
  reached?: BudgetReached;
  output?: unknown;
};
type BudgetContext = WorkflowBudgetContext;

/**
 * The machine `withBudget` returns: your workflow's input and output (or how the budget ended it).
 * Spelled out rather than inferred, so the declaration reads the same with every XState 5 this
 * package supports.
 *
 * @example
 * ```ts
 * const budgeted: BudgetedWorkflow<typeof review> = withBudget(review, { maxTotalTokens: 20_000 });
 * ```
 */
export type BudgetedWorkflow<TMachine extends AnyStateMachine> = StateMachine<
  WorkflowBudgetContext,
  EventObject,
  Record<string, AnyActorRef | undefined>,
  ProvidedActor,
  ParameterizedObject,
  ParameterizedObject,
  string,
  StateValue,
  string,
  InputFrom<TMachine>,
  OutputFrom<TMachine> | WorkflowBudgetHalted | WorkflowBudgetUnpriced,
  EventObject,
  MetaObject,
  StateSchema
>;

const limit = (expected: string) => option.optional(option.number({ minimum: 0, expected }));
const optionsSchema = option.object(
  {
    maxTotalTokens: limit('a number of tokens ≥ 0'),
    maxCostUsd: limit('US dollars ≥ 0'),
    maxDurationMs: option.optional(option.integer({ minimum: 1, maximum: 2_147_483_647, expected: 'an integer of milliseconds ≥ 1' })),
    prices: option.optional(pricesSchema),
  },
  { expected: 'an object { maxTotalTokens?, maxCostUsd?, maxDurationMs?, prices? }' },
);

/**
 * The limit `spent` reaches, if any — tokens first, then cost (as a conversation checks them).
 *
 * @example
 * ```ts
 * budgetOver({ maxTotalTokens: 100 }, { totalTokens: 120 }, 0); // { limit: 'maxTotalTokens', max: 100, used: 120 }
 * ```
 */
export function budgetOver(
  limits: Pick<WithBudgetOptions, 'maxTotalTokens' | 'maxCostUsd'>,
  usage: Pick<Usage, 'totalTokens'>,
  costUsd: number,
): BudgetReached | undefined {
  if (limits.maxTotalTokens !== undefined && usage.totalTokens >= limits.maxTotalTokens)
    return { limit: 'maxTotalTokens', max: limits.maxTotalTokens, used: usage.totalTokens };
  if (limits.maxCostUsd !== undefined && costUsd >= limits.maxCostUsd)
    return { limit: 'maxCostUsd', max: limits.maxCostUsd, used: costUsd };
  return undefined;
}

/**
 * A workflow with one budget over every conversation in it: each request any of them finishes
 * (in nested workflows and agent trees too) adds to the workflow's `usage` and cost; at a limit the
 * workflow ends `halted` / `budget` at once — every conversation still running is stopped, its
 * request aborted, as a cancel stops it — and at `maxDurationMs` likewise. The chart is a
 * statechart of its own (`running` → `done` | `halted` | `failed`) around yours, invoked as
 * `workflow`: every event you send goes to your machine when it takes it, its output is the
 * output, and a host's view of it shows the totals (`usage`).
 *
 * @example
 * ```ts
 * import { withBudget } from 'actorloop';
 *
 * const budgeted = withBudget(reviewWorkflow(provider), { maxTotalTokens: 20_000, maxDurationMs: 60_000 });
 * const output = await toPromise(createActor(budgeted, { input: { topic: 'Lumen' } }).start());
 * if ('reason' in output && output.reason === 'budget') console.warn('over budget', output.budget);
 * ```
 */
export function withBudget<TMachine extends AnyStateMachine>(workflow: TMachine, options: WithBudgetOptions): BudgetedWorkflow<TMachine> {
  if (!isRecord(workflow) || typeof workflow.transition !== 'function' || typeof workflow.getInitialSnapshot !== 'function') {
    throw new InvalidOptionsError('workflow', 'a state machine (your workflow)', workflow);
  }
  const { maxTotalTokens, maxCostUsd, maxDurationMs, prices } = resolveOptionsWith(optionsSchema, options, 'options');
  if (maxTotalTokens === undefined && maxCostUsd === undefined && maxDurationMs === undefined) {
    throw new InvalidOptionsError('options', 'at least one limit: maxTotalTokens, maxCostUsd or maxDurationMs', options);
  }
  const table: PriceTable = { ...modelPrices, ...prices };
  const limits = { maxTotalTokens, maxCostUsd };
  const spendOf = (context: BudgetContext, event: WorkflowSpentEvent) => ({
    usage: addUsage(context.usage, event.usage),
    cost: addCost(context.cost, table, event.model, event.usage),
  });

  const machine = setup({
    types: {
      context: {} as BudgetContext,
      input: {} as InputFrom<TMachine>,
      events: {} as WorkflowSpentEvent | EventObject,
      output: {} as OutputFrom<TMachine> | WorkflowBudgetHalted | WorkflowBudgetUnpriced,
    },
    actors: { workflow: workflow as AnyStateMachine },
    guards: {
      overBudget: ({ context, event }) => {
        const spend = spendOf(context, event as WorkflowSpentEvent);
        return budgetOver(limits, spend.usage, spend.cost.total) !== undefined;
      },
      unpricedWithCostLimit: ({ context, event }) =>
        maxCostUsd !== undefined && spendOf(context, event as WorkflowSpentEvent).cost.unpricedModels.length > 0,
      hasTimeLimit: () => maxDurationMs !== undefined,
    },
    actions: {
      recordSpend: assign(({ context, event }) => spendOf(context, event as WorkflowSpentEvent)),
      recordReached: assign({
        reached: ({ context }) => budgetOver(limits, context.usage, context.cost.total),
      }),
      recordTimeReached: assign({
        reached: ({ context }) => ({ limit: 'maxDurationMs' as const, max: maxDurationMs ?? 0, used: Date.now() - context.startedAt }),
      }),
      recordOutput: assign({ output: ({ event }) => (event as { output?: unknown }).output }),
      recordFailure: assign({
        output: ({ event }) => {
          const error = (event as { error?: unknown }).error;
          return { status: 'error', message: error instanceof Error ? error.message : String(error) };
        },
      }),
      forwardToWorkflow: forwardTo('workflow'),
    },
    delays: {
      // What is left of the time limit, from when the workflow started (a restored one keeps its start).
      timeLeft: ({ context }: { context: BudgetContext }) => Math.max(0, context.startedAt + (maxDurationMs ?? 0) - Date.now()),
    },
  }).createMachine({
    id: `${workflow.id}.budget`,
    context: ({ input }) => ({ input, usage: emptyUsage(), cost: zeroCost(), startedAt: Date.now() }),
    initial: 'running',
    states: {
      running: {
        invoke: {
          id: 'workflow',
          src: 'workflow',
          input: ({ context }: { context: BudgetContext }) => context.input as never,
          onDone: { target: 'done', actions: 'recordOutput' },
          onError: { target: 'failed', actions: 'recordFailure' },
        },
        after: { timeLeft: { guard: 'hasTimeLimit', target: 'halted', actions: 'recordTimeReached' } },
        on: {
          'workflow.spent': [
            { guard: 'unpricedWithCostLimit', target: 'unpriced', actions: 'recordSpend' },
            { guard: 'overBudget', target: 'halted', actions: ['recordSpend', 'recordReached'] },
            { actions: 'recordSpend' },
          ],
          // Everything else is the workflow's (a host asks the workflow itself whether it takes an event).
          '*': { actions: 'forwardToWorkflow' },
        },
      },
      done: { type: 'final' },
      halted: { type: 'final' },
      unpriced: { type: 'final' },
      failed: { type: 'final' },
    },
    output: ({ context }) => {
      const totals = { usage: context.usage, costUsd: context.cost.total };
      if (context.reached) return { status: 'halted', reason: 'budget', budget: context.reached, ...totals } as WorkflowBudgetHalted;
      const unpriced = context.cost.unpricedModels[0];
      if (unpriced !== undefined && maxCostUsd !== undefined && context.output === undefined) {
        return { status: 'error', reason: 'unpriced_model', model: unpriced, ...totals } as WorkflowBudgetUnpriced;
      }
      return context.output as OutputFrom<TMachine>;
    },
  });
  return markBudgetedWorkflow(machine) as unknown as BudgetedWorkflow<TMachine>;
}
