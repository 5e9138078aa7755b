import { setup } from 'xstate';
import { type SharedChart, sharedChart } from './shared-chart.js';
import type { StandardSchemaV1 } from '../../tools/standard-schema.js';
import type { JSONSchema } from '../../tools/validate.js';
import { conversationActions } from './actions.js';
import { conversationActors } from './child-actors.js';
import { conversationDelays } from './delays.js';
import { conversationGuards } from './guards.js';
import { resolveOptions, type ConversationOptions, type ResolvedOptions } from './options.js';
import { initialContext, runOutput } from '../rounds/run-context.js';
import { compactionInput, windowOf } from '../controls/compaction.js';
import { guardrailInput, providerCallInput } from './actor-inputs.js';
import type { InferObject } from '../policies/structured-output.js';
import type {
  ConversationContext,
  ConversationEmittedEvent,
  ConversationEvent,
  ConversationInput,
  ConversationMachine,
  RunOutput,
} from '../names/types.js';
import { restoreOnXState } from '../restore/xstate-restore.js';
import { markConversationMachine } from '../names/conversation-mark.js';
import { relayEventsToWorkflows } from '../workflow/workflow-events.js';

/**
 * Creates the conversation machine: one actor is one run, a user turn and the whole tool loop that
 * follows it, ending in `done`, `halted` or `error`. Options are validated here and throw
 * `InvalidOptionsError` naming the option; nothing about a run ever throws.
 *
 * @example
 * ```ts
 * import { createActor, toPromise } from 'xstate';
 * import { z } from 'zod';
 *
 * const machine = createConversationMachine({
 *   provider: openaiProvider({ model: 'gpt-4o-mini' }),
 *   tools: [defineTool({
 *     name: 'add', description: 'Add two numbers',
 *     parameters: z.object({ a: z.number(), b: z.number() }),
 *     execute: async ({ a, b }) => a + b,
 *   })],
 *   system: 'You are terse.',
 * });
 * const actor = createActor(machine, { input: { messages: [] } }).start();
 * actor.on('text.delta', (event) => process.stdout.write(event.delta));
 * actor.send({ type: 'user.message', content: 'What is 2+3?' });
 * const output = await toPromise(actor); // { status: 'done', text: '5', messages, ... }
 * ```
 */
export function createConversationMachine<TOutputSchema extends StandardSchemaV1 | JSONSchema = never>(
  options: ConversationOptions<TOutputSchema>,
): ConversationMachine<[TOutputSchema] extends [never] ? unknown : InferObject<TOutputSchema>> {
  const settings = resolveOptions(options);
  // The names in the chart are implemented in guards.ts, actions.ts, delays.ts and child-actors.ts,
  // each over pure functions with tests of their own: guards and actions once for every machine
  // (they read the settings of the machine stepping), delays and actors over these settings.
  const machine = chart.machineWith(settings, {
    actors: conversationActors(settings),
    delays: conversationDelays(settings),
    guards,
    actions,
  });
  // Restoring a run (resume semantics, timers) is the one thing XState's public API cannot say: xstate-restore.ts.
  // Marked so that a workflow check (`verifyWorkflow`) knows its outcomes: conversation-mark.ts.
  // A workflow that invokes it hears its events as `agent.event`s: workflow-events.ts.
  return markConversationMachine(
    relayEventsToWorkflows(
      restoreOnXState(machine, {
        isIdempotent: settings.isIdempotent,
        agentMachineOf: (toolName) => settings.agentCalls.get(toolName)?.machine,
      }),
    ),
  ) as unknown as ConversationMachine<[TOutputSchema] extends [never] ? unknown : InferObject<TOutputSchema>>;
}

/** The implementations of the chart's named guards, actions, delays and actors, for one machine's settings. */
type ChartImplementations = {
  actors: ReturnType<typeof conversationActors>;
  delays: ReturnType<typeof conversationDelays>;
  guards: ReturnType<typeof conversationGuards>;
  actions: ReturnType<typeof conversationActions>;
};

/** The conversation chart, shared by every conversation machine (shared-chart.ts). */
const chart: SharedChart<ResolvedOptions, ChartImplementations> = sharedChart(() => buildChart());
const settingsOf = chart.settingsOf;
/** One table of guards and one of actions for every machine, each reading its machine's settings. */
const guards = conversationGuards(chart.currentSettings);
const actions = conversationActions(settingsOf);

/** Only a machine that makes agent calls splits its usage by agent. */
const rootAgentOf = (settings: ResolvedOptions) => (settings.agentCalls.size > 0 ? settings.name : undefined);

/** The handoff agents a run starts with, when the machine has handoffs. */
const agentsOf = (settings: ResolvedOptions) =>
  settings.handoffs ? { start: settings.startAgent, known: new Set(settings.profiles.keys()) } : undefined;

/** The chart: the same for every conversation machine; its names are implemented per machine (`machineWith`). */
function buildChart() {
  return setup({
    types: {
      context: {} as ConversationContext,
      events: {} as ConversationEvent,
      input: {} as ConversationInput,
      output: {} as RunOutput,
      emitted: {} as ConversationEmittedEvent,
    },
    // Types only: each machine brings its own (`machineWith`), so the shared chart holds no one's settings.
    actors: {} as ChartImplementations['actors'],
    delays: {} as ChartImplementations['delays'],
    guards: {} as ChartImplementations['guards'],
    actions: {} as ChartImplementations['actions'],
  }).createMachine({
    id: 'conversation',
    context: ({ input, self }) => {
      const settings = settingsOf(self);
      return initialContext(input, settings.prices !== undefined, agentsOf(settings), settings.maxMediaBytes);
    },
    initial: 'idle',
    // `cancel` is declared on each non-final state rather than here, so final states take no event.
    // An error event of an actor the current state does not hold can only come from a caller; XState
    // would let it fail the whole actor, so it is turned away here (states that hold the actor
    // handle it first, being deeper).
    on: {
      'xstate.error.actor.*': { actions: 'rejectOutOfState' },
      // An agent call's child emitted events: they go out as `agent.event`s while the call runs.
      'agent.emitted': [{ guard: 'isAgentBatch', actions: 'forwardAgentEvent' }, { actions: 'rejectInvalidAgentBatch' }],
    },
    states: {
      idle: {
        always: [
          { guard: 'hasInputProblem', target: 'error', actions: 'failOnInput' },
          // Started with a prompt (`conversationInput`): it waits in the queue, and `preparing` takes it.
          { guard: 'hasPrompt', target: 'preparing', actions: ['startRun', 'firstAttempt'] },
        ],
        on: {
          // A `user.interrupt` with nothing to interrupt starts the run as a message would.
          'user.message': startTransitions,
          'user.interrupt': startTransitions,
          'tool.approve': { actions: 'rejectOutOfState' },
          'tool.deny': { actions: 'rejectOutOfState' },
          cancel: cancelTransition,
        },
      },
      // Input guardrails, one at a time: each is an actor bounded by its `timeoutMs`.
      checkingInput: {
        invoke: {
          id: 'guardrailCheck',
          src: 'guardrailCheck',
          input: ({ context }) => guardrailInput(context, 'input'),
          onDone: [
            { guard: 'guardrailTripped', target: 'halted', actions: 'haltOnGuardrail' },
            { guard: 'moreInputChecks', target: 'checkingInput', reenter: true, actions: 'passGuardrail' },
            { target: 'preparing', actions: ['passGuardrail', 'firstAttempt'] },
          ],
          onError: { target: 'error', actions: { type: 'failOnGuardrail', params: { phase: 'input' } } },
        },
        after: { inputGuardrailTimeout: { target: 'error', actions: { type: 'failOnGuardrailTimeout', params: { phase: 'input' } } } },
        on: { ...busyTransitions, 'run.resume': { guard: 'isRestored', target: 'checkingInput', reenter: true, actions: 'clearRestored' } },
      },
      // Before every request: queued messages join the history (checked like the first), then the
      // budget and the context window are checked.
      preparing: {
        always: [
          {
            guard: 'queuedMessagesWithInputGuardrails',
            target: 'checkingInput',
            // One at a time, each checked on its own.
            actions: ['takeQueuedMessage', 'startChecks'],
          },
          { guard: 'hasQueuedMessages', target: 'preparing', reenter: true, actions: 'takeQueuedMessages' },
          { guard: 'budgetReached', target: 'halted', actions: 'haltOnBudget' },
          { guard: 'contextOverWindow', target: 'compacting', actions: { type: 'startCompaction', params: { cause: 'window' } } },
          { target: 'requesting' },
        ],
      },
      // The oldest messages are summarised (a provider call, retried like a request), dropped or
      // replaced by the `strategy`'s messages; back through `preparing` (budget, queued messages) to the request.
      compacting: {
        on: { ...busyTransitions, 'run.resume': { guard: 'isRestored', target: 'compacting', reenter: true, actions: 'clearRestored' } },
        initial: 'summarizing',
        states: {
          summarizing: {
            invoke: {
              id: 'compaction',
              src: 'compaction',
              input: ({ context, self }) => compactionInput(context, windowOf(settingsOf(self))),
              onDone: [
                // Back through `preparing`: the summary's tokens may have spent the budget, and a message may wait.
                { guard: 'compactionUsable', target: '#conversation.preparing', actions: ['applyCompaction', 'firstAttempt'] },
                { target: '#conversation.error', actions: 'failOnCompaction' },
              ],
              onError: [
                { guard: 'canRetryFailure', target: 'backingOff', actions: ['recordFailure', 'scheduleRetry'] },
                { target: '#conversation.error', actions: 'failOnCompactionError' },
              ],
            },
            // The summary is not streamed to the run: the request timeout bounds the whole of it.
            after: {
              requestTimeout: [
                { guard: 'canRetryFailure', target: 'backingOff', actions: ['recordFailure', 'scheduleRetry'] },
                { target: '#conversation.error', actions: 'failOnCompactionError' },
              ],
            },
          },
          backingOff: {
            after: { retryDelay: { target: 'summarizing', actions: 'nextCompactionAttempt' } },
          },
        },
      },
      requesting: {
        entry: 'emitRequestStarted',
        invoke: {
          id: 'providerCall',
          src: 'providerCall',
          input: ({ context }) => providerCallInput(context),
          // One branch per `responseStep` (response-step.ts holds the priorities), so the guards from
          // `missingResponse` down hold for at most one context (test/machine-functions.test.ts) and
          // the last, unguarded branch is taken when none does. Only the first three are ordered: the
          // others are the else of the first (no response: retry, else fall back, else fail).
          onDone: [
            { guard: 'missingResponseCanRetry', target: 'retrying', actions: 'recordFailure' },
            { guard: 'missingResponseCanFallBack', target: 'preparing', actions: ['recordFailure', 'fallBack'] },
            { guard: 'missingResponse', target: 'error', actions: 'recordFailure' },
            // These two look at the option (or the queue) before `answerAccepted` (combined-guards.ts):
            // without guardrails or a queued message, each is a field read.
            { guard: 'answerAcceptedWithOutputGuardrails', target: 'checkingOutput', actions: [...acceptAnswer, 'startChecks'] },
            { guard: 'answerAcceptedWithQueuedMessages', target: 'preparing', actions: ['commitResponse', 'firstAttempt'] },
            { guard: 'answerAccepted', target: 'done', actions: acceptAnswer },
            { guard: 'answerRepairable', target: 'repairing', actions: 'commitResponse' },
            { guard: 'noToolCalls', target: 'error', actions: ['recordFinalText', 'commitResponse', 'failOnAnswer'] },
            { guard: 'budgetSpent', target: 'halted', actions: ['recordFinalText', 'commitResponse', 'haltOnSpentBudget'] },
            { guard: 'iterationCapReached', target: 'halted', actions: ['recordFinalText', 'commitResponse', 'haltAtIterationCap'] },
            { guard: 'doomLoopPersists', target: 'halted', actions: ['recordFinalText', 'commitResponse', 'haltOnDoomLoop'] },
            { guard: 'roundNeedsApproval', target: 'awaitingApproval', actions: 'startRound' },
            { target: 'executingTools', actions: 'startRound' },
          ],
          // Ordered on purpose: a context-length error compacts (once) before any retry, which would fail the same way.
          onError: [
            {
              guard: 'contextLengthExceeded',
              target: 'compacting',
              actions: ['recordFailure', { type: 'startCompaction', params: { cause: 'context_length' } }],
            },
            { guard: 'canRetryFailure', target: 'retrying', actions: 'recordFailure' },
            { guard: 'canFallBack', target: 'preparing', actions: ['recordFailure', 'fallBack'] },
            { target: 'error', actions: 'recordFailure' },
          ],
        },
        on: {
          // From the request's actor; anything else sent under its name is turned away unread.
          'provider.finish': [{ guard: 'isProviderFinish', actions: 'receiveResponse' }, { actions: 'rejectInvalidProviderEvent' }],
          // Restored mid-request: the response in progress is lost, so the request is made again.
          // (`resumeSnapshot` has already made the restored attempt a fresh one.)
          'run.resume': { guard: 'isRestored', target: 'requesting', reenter: true, actions: 'clearRestored' },
          ...busyTransitions,
          'user.interrupt': interruptTransition('requesting'),
        },
        initial: 'waiting',
        states: {
          // `requestTimeout` bounds the silence, not the whole stream: when the window ends after
          // some progress, a new window starts; a whole window without any event is a timeout.
          // Ordered on purpose: `streamProgressed` and `canRetryFailure` can both hold, and progress
          // wins (tested); the last branches are the else of the retry.
          waiting: {
            on: { 'provider.delta': [{ guard: 'isProviderDeltas', actions: 'forwardDeltas' }, { actions: 'rejectInvalidProviderEvent' }] },
            after: {
              requestTimeout: [
                { guard: 'streamProgressed', target: 'waiting', reenter: true, actions: 'resetProgress' },
                { guard: 'canRetryFailure', target: '#conversation.retrying', actions: 'recordFailure' },
                { guard: 'canFallBack', target: '#conversation.preparing', actions: ['recordFailure', 'fallBack'] },
                { target: '#conversation.error', actions: 'recordFailure' },
              ],
            },
          },
        },
      },
      // The final answer failed the `output` schema: it goes back to the model with what was wrong
      // (at most `output.maxRepairs` times), and the request is made again.
      repairing: {
        entry: 'startRepair',
        always: { target: 'preparing', actions: 'firstAttempt' },
      },
      retrying: {
        entry: ['scheduleRetry', 'emitRetry'],
        after: { retryDelay: { target: 'preparing', actions: 'nextAttempt' } },
        on: { ...busyTransitions, 'user.interrupt': interruptTransition('retrying') },
      },
      awaitingApproval: {
        entry: 'requestApprovals',
        always: { guard: 'approvalsComplete', target: 'executingTools' },
        on: {
          'tool.approve': [{ guard: 'isAwaitingApproval', actions: 'approveCall' }, { actions: 'rejectUnknownCall' }],
          'tool.deny': [{ guard: 'isAwaitingApproval', actions: 'denyCall' }, { actions: 'rejectUnknownCall' }],
          'user.message': busyTransitions['user.message'],
          'user.interrupt': interruptTransition('awaitingApproval'),
          'budget.deadline': busyTransitions['budget.deadline'],
          cancel: cancelTransition,
        },
      },
      // Each call runs as an `executeTool` actor (`toolCall-<iteration>-<index>`); a call's timeout
      // is the `toolDeadline` delayed transition, aimed at the earliest deadline of the running calls.
      executingTools: {
        entry: 'startQueuedCalls',
        exit: 'stopRunningCalls',
        // A round with a handoff call hands the conversation on as it completes (`handingOff`).
        always: [
          { guard: 'roundSettledWithHandoff', target: 'handingOff' },
          { guard: 'roundSettled', target: 'preparing', actions: 'completeRound' },
        ],
        // `tool.approve` / `tool.deny` are handled in `running`: an approval may be for a child's call.
        on: {
          'user.message': busyTransitions['user.message'],
          'user.interrupt': [
            {
              guard: 'isValidUserMessage',
              target: 'preparing',
              actions: ['finishRunningAgents', { type: 'interruptRun', params: { state: 'executingTools' } }],
            },
            { actions: 'rejectInvalidMessage' },
          ],
          'budget.deadline': busyTransitions['budget.deadline'],
          // What a running tool's generator yielded, passed on; it moves no deadline.
          'tool.progress': { guard: 'isProgressOfRunningCall', actions: 'reportProgress' },
          // An agent call's child spent over the tree's budget (its `request.finished` came up with `agent.emitted`).
          'agent.emitted': [
            {
              guard: 'agentBatchOverTreeBudget',
              target: 'halted',
              actions: ['forwardAgentEvent', 'finishRunningAgents', 'haltOnTreeBudget'],
            },
            { guard: 'isAgentBatch', actions: 'forwardAgentEvent' },
            { actions: 'rejectInvalidAgentBatch' },
          ],
          cancel: cancelTransition,
        },
        initial: 'running',
        states: {
          running: {
            after: { toolDeadline: timeOutTransition },
            on: {
              'xstate.done.actor.*': [
                // First: a result after its deadline (a stalled loop ran it ahead of the due `toolDeadline`
                // timer) is a timeout whatever it says, taken as the timer takes it.
                { guard: 'resultOverdue', ...timeOutTransition },
                // Ordered on purpose: a failed agent call of an `onChildFailure: 'halt'` tool ends the run
                // even when it is the round's last call (`settlesRound` may hold too).
                {
                  guard: 'agentFailureHalts',
                  target: '#conversation.halted',
                  actions: ['releaseChild', 'markAgentHalt', 'recordOutcome', 'finishRunningAgents', 'closeHaltedRound'],
                },
                // Leaving `executingTools` stops the finished child (`stopRunningCalls` still sees its call running).
                { guard: 'settlesRound', target: '#conversation.preparing', actions: 'completeRoundWithResult' },
                { target: 'running', reenter: true, actions: ['releaseChild', 'recordOutcome', 'startQueuedCalls'] },
              ],
              // An approval for a call of a running agent call's child (at any depth) goes down to it.
              'tool.approve': [{ guard: 'awaitsApprovalInChild', actions: 'relayApproval' }, { actions: 'rejectOutOfState' }],
              'tool.deny': [{ guard: 'awaitsApprovalInChild', actions: 'relayApproval' }, { actions: 'rejectOutOfState' }],
              // Restored mid-round: interrupted calls are reported, calls to run (again) start, and a settled round moves on.
              'run.resume': { guard: 'isRestored', target: 'running', reenter: true, actions: ['reportInterrupted', 'startQueuedCalls'] },
              'xstate.error.actor.*': [
                { guard: 'resultOverdue', ...timeOutTransition },
                {
                  guard: 'executionHalts',
                  target: '#conversation.halted',
                  actions: ['releaseChild', 'markToolHalt', 'recordHalt', 'finishRunningAgents', 'closeHaltedRound'],
                },
                { target: 'running', reenter: true, actions: ['releaseChild', 'recordToolError', 'startQueuedCalls'] },
              ],
            },
          },
        },
      },
      // The round's `transfer_to_<name>` call takes effect: the next request is the new agent's.
      handingOff: {
        entry: 'handOff',
        always: { target: 'preparing', actions: 'completeRound' },
      },
      // Output guardrails on the final answer (committed already), one at a time, each bounded by its `timeoutMs`.
      checkingOutput: {
        invoke: {
          id: 'guardrailCheck',
          src: 'guardrailCheck',
          input: ({ context }) => guardrailInput(context, 'output'),
          onDone: [
            { guard: 'guardrailTripped', target: 'halted', actions: 'haltOnGuardrail' },
            { guard: 'moreOutputChecks', target: 'checkingOutput', reenter: true, actions: 'passGuardrail' },
            { guard: 'hasQueuedMessages', target: 'preparing', actions: ['passGuardrail', 'firstAttempt'] },
            { target: 'done', actions: 'passGuardrail' },
          ],
          onError: { target: 'error', actions: { type: 'failOnGuardrail', params: { phase: 'output' } } },
        },
        after: { outputGuardrailTimeout: { target: 'error', actions: { type: 'failOnGuardrailTimeout', params: { phase: 'output' } } } },
        on: {
          ...busyTransitions,
          'run.resume': { guard: 'isRestored', target: 'checkingOutput', reenter: true, actions: 'clearRestored' },
        },
      },
      done: { type: 'final', entry: 'markDone' },
      halted: { type: 'final', entry: 'markHalted' },
      error: { type: 'final', entry: 'markError' },
    },
    output: ({ context, self }) => runOutput(context, rootAgentOf(settingsOf(self))),
  });
}

/** The calls whose time is up get the timeout result (their children stopped), and queued calls take their places. */
const timeOutTransition = { target: 'running', reenter: true, actions: ['timeOutCalls', 'startQueuedCalls'] } as const;

/** `cancel` ends any running state in `halted`, closing the round in progress. */
const cancelTransition = { target: '#conversation.halted', actions: ['finishRunningAgents', 'cancelRun'] } as const;

/** A valid first message starts the run: through the input guardrails when there are any. */
const startTransitions = [
  {
    guard: 'validMessageWithInputGuardrails',
    target: 'checkingInput',
    actions: ['appendUserMessage', 'startRun', 'startChecks'],
  },
  { guard: 'isValidUserMessage', target: 'preparing', actions: ['appendUserMessage', 'startRun', 'firstAttempt'] },
  { actions: 'rejectInvalidMessage' },
] as const;

/** An accepted final answer: its text, its response committed, its structured object. */
const acceptAnswer = ['recordFinalText', 'commitResponse', 'recordObject'] as const;

/** `user.interrupt` where a request is in flight or waits to be made again: it is abandoned for the message. */
const interruptTransition = <const TState extends string>(state: TState) =>
  [
    { guard: 'isValidUserMessage', target: '#conversation.preparing', actions: { type: 'interruptRun', params: { state } } },
    { actions: 'rejectInvalidMessage' },
  ] as const;

/**
 * Events a busy run takes the same way in every state: a `user.message` is queued (`steering:
 * 'queue'`) or rejected, approvals out of place are rejected, a `user.interrupt` where nothing can
 * be interrupted waits for the next request, the time budget and `cancel` end the run.
 */
const busyTransitions = {
  'user.message': [
    { guard: 'steeringQueuesValidMessage', actions: 'queueMessage' },
    { guard: 'steeringQueues', actions: 'rejectInvalidMessage' },
    { actions: 'rejectOutOfState' },
  ],
  'user.interrupt': [{ guard: 'isValidUserMessage', actions: 'queueMessage' }, { actions: 'rejectInvalidMessage' }],
  'tool.approve': { actions: 'rejectOutOfState' },
  'tool.deny': { actions: 'rejectOutOfState' },
  'budget.deadline': { target: '#conversation.halted', actions: ['finishRunningAgents', 'haltOnDeadline'] },
  cancel: cancelTransition,
} as const;
