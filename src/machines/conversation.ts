import { and, setup } from 'xstate';
import type { StandardSchemaV1 } from '../tools/standard-schema.js';
import type { JSONSchema } from '../tools/validate.js';
import { conversationActions } from './actions.js';
import { conversationActors } from './child-actors.js';
import { conversationDelays } from './delays.js';
import { conversationGuards } from './guards.js';
import { resolveOptions, type ConversationOptions } from './options.js';
import { initialContext, runOutput } from './run-context.js';
import type { InferObject } from './structured-output.js';
import type {
  ConversationContext,
  ConversationEmittedEvent,
  ConversationEvent,
  ConversationInput,
  ConversationMachine,
  RunOutput,
} from './types.js';
import { restoreOnXState } from './xstate-restore.js';

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
  // Only a machine that makes agent calls splits its usage by agent.
  const rootAgent = settings.agentCalls.size > 0 ? settings.name : undefined;
  const agents = settings.handoffs ? { start: settings.startAgent, known: new Set(settings.profiles.keys()) } : undefined;
  // The names below are the chart's; their implementations are in guards.ts, actions.ts, delays.ts
  // and child-actors.ts, each over pure functions with tests of their own.
  const machine = setup({
    types: {
      context: {} as ConversationContext,
      events: {} as ConversationEvent,
      input: {} as ConversationInput,
      output: {} as RunOutput,
      emitted: {} as ConversationEmittedEvent,
    },
    actors: conversationActors(settings),
    delays: conversationDelays(settings),
    guards: conversationGuards(settings),
    actions: conversationActions(settings),
  }).createMachine({
    id: 'conversation',
    context: ({ input }) => initialContext(input, settings.prices !== undefined, agents),
    initial: 'idle',
    // `cancel` is declared on each non-final state rather than here, so final states take no event.
    // An error event of an actor the current state does not hold can only come from a caller; XState
    // would let it fail the whole actor, so it is turned away here (states that hold the actor
    // handle it first, being deeper).
    on: {
      'xstate.error.actor.*': { actions: 'rejectOutOfState' },
      // An agent call's child emitted an event: it goes out as `agent.event` while the call runs.
      'agent.emitted': { actions: 'forwardAgentEvent' },
    },
    states: {
      idle: {
        always: { guard: 'hasInputProblem', target: 'error', actions: 'failOnInput' },
        on: {
          'user.message': [
            { guard: 'isValidUserMessage', target: 'requesting', actions: ['appendUserMessage', 'firstAttempt'] },
            { actions: 'rejectInvalidMessage' },
          ],
          'tool.approve': { actions: 'rejectOutOfState' },
          'tool.deny': { actions: 'rejectOutOfState' },
          cancel: cancelTransition,
        },
      },
      requesting: {
        entry: 'emitRequestStarted',
        invoke: {
          id: 'providerCall',
          src: 'providerCall',
          input: ({ context }) => ({
            messages: context.messages,
            ...(context.sessionData === undefined ? {} : { sessionData: context.sessionData }),
            ...(context.agents.active === undefined ? {} : { agent: context.agents.active }),
          }),
          // One branch per `responseStep` (response-step.ts holds the priorities), so the guards from
          // `missingResponse` down hold for at most one context (test/machine-functions.test.ts) and
          // the last, unguarded branch is taken when none does. Only the first two are ordered: the
          // second is the else of the first (no response: retry when allowed, else fail).
          onDone: [
            { guard: and(['missingResponse', 'canRetryFailure']), target: 'retrying', actions: 'recordFailure' },
            { guard: 'missingResponse', target: 'error', actions: 'recordFailure' },
            { guard: 'answerAccepted', target: 'done', actions: ['recordFinalText', 'commitResponse', 'recordObject'] },
            { guard: 'answerRepairable', target: 'repairing', actions: 'commitResponse' },
            { guard: 'noToolCalls', target: 'error', actions: ['recordFinalText', 'commitResponse', 'failOnAnswer'] },
            { guard: 'iterationCapReached', target: 'halted', actions: ['recordFinalText', 'commitResponse', 'haltAtIterationCap'] },
            { guard: 'doomLoopPersists', target: 'halted', actions: ['recordFinalText', 'commitResponse', 'haltOnDoomLoop'] },
            { guard: 'roundNeedsApproval', target: 'awaitingApproval', actions: 'startRound' },
            { target: 'executingTools', actions: 'startRound' },
          ],
          onError: [
            { guard: 'canRetryFailure', target: 'retrying', actions: 'recordFailure' },
            { target: 'error', actions: 'recordFailure' },
          ],
        },
        on: {
          'provider.finish': { actions: 'receiveResponse' },
          // Restored mid-request: the response in progress is lost, so the request is made again.
          // (`resumeSnapshot` has already made the restored attempt a fresh one.)
          'run.resume': { guard: 'isRestored', target: 'requesting', reenter: true, actions: 'clearRestored' },
          ...outOfStateTransitions,
        },
        initial: 'waiting',
        states: {
          // `requestTimeout` bounds the silence, not the whole stream: when the window ends after
          // some progress, a new window starts; a whole window without any event is a timeout.
          // Ordered on purpose: `streamProgressed` and `canRetryFailure` can both hold, and progress
          // wins (tested); the last branch is the else of the retry.
          waiting: {
            on: { 'provider.delta': { actions: 'forwardDeltas' } },
            after: {
              requestTimeout: [
                { guard: 'streamProgressed', target: 'waiting', reenter: true, actions: 'resetProgress' },
                { guard: 'canRetryFailure', target: '#conversation.retrying', actions: 'recordFailure' },
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
        always: { target: 'requesting', actions: 'firstAttempt' },
      },
      retrying: {
        entry: ['scheduleRetry', 'emitRetry'],
        after: { retryDelay: { target: 'requesting', actions: 'nextAttempt' } },
        on: outOfStateTransitions,
      },
      awaitingApproval: {
        entry: 'requestApprovals',
        always: { guard: 'approvalsComplete', target: 'executingTools' },
        on: {
          'tool.approve': [{ guard: 'isAwaitingApproval', actions: 'approveCall' }, { actions: 'rejectUnknownCall' }],
          'tool.deny': [{ guard: 'isAwaitingApproval', actions: 'denyCall' }, { actions: 'rejectUnknownCall' }],
          'user.message': { actions: 'rejectOutOfState' },
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
          { guard: and(['roundSettled', 'handoffPending']), target: 'handingOff' },
          { guard: 'roundSettled', target: 'requesting', actions: 'completeRound' },
        ],
        // `tool.approve` / `tool.deny` are handled in `running`: an approval may be for a child's call.
        on: { 'user.message': outOfStateTransitions['user.message'], cancel: cancelTransition },
        initial: 'running',
        states: {
          running: {
            after: {
              toolDeadline: { target: 'running', reenter: true, actions: ['timeOutCalls', 'startQueuedCalls'] },
            },
            on: {
              'xstate.done.actor.*': [
                // Ordered on purpose: a failed agent call of an `onChildFailure: 'halt'` tool ends the run
                // even when it is the round's last call (`settlesRound` may hold too).
                {
                  guard: 'agentFailureHalts',
                  target: '#conversation.halted',
                  actions: ['releaseChild', 'markAgentHalt', 'recordOutcome', 'finishRunningAgents', 'closeHaltedRound'],
                },
                // Leaving `executingTools` stops the finished child (`stopRunningCalls` still sees its call running).
                { guard: 'settlesRound', target: '#conversation.requesting', actions: 'completeRoundWithResult' },
                { target: 'running', reenter: true, actions: ['releaseChild', 'recordOutcome', 'startQueuedCalls'] },
              ],
              // An approval for a call of a running agent call's child (at any depth) goes down to it.
              'tool.approve': [{ guard: 'awaitsApprovalInChild', actions: 'relayApproval' }, { actions: 'rejectOutOfState' }],
              'tool.deny': [{ guard: 'awaitsApprovalInChild', actions: 'relayApproval' }, { actions: 'rejectOutOfState' }],
              // Restored mid-round: interrupted calls are reported, calls to run (again) start, and a settled round moves on.
              'run.resume': { guard: 'isRestored', target: 'running', reenter: true, actions: ['reportInterrupted', 'startQueuedCalls'] },
              'xstate.error.actor.*': [
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
        always: { target: 'requesting', actions: 'completeRound' },
      },
      done: { type: 'final', entry: 'markDone' },
      halted: { type: 'final', entry: 'markHalted' },
      error: { type: 'final', entry: 'markError' },
    },
    output: ({ context }) => runOutput(context, rootAgent),
  });
  // Restoring a run (resume semantics, timers) is the one thing XState's public API cannot say: xstate-restore.ts.
  return restoreOnXState(machine, {
    isIdempotent: settings.isIdempotent,
    agentMachineOf: (toolName) => settings.agentCalls.get(toolName)?.machine,
  }) as unknown as ConversationMachine<[TOutputSchema] extends [never] ? unknown : InferObject<TOutputSchema>>;
}

/** `cancel` ends any running state in `halted`, closing the round in progress. */
const cancelTransition = { target: '#conversation.halted', actions: ['finishRunningAgents', 'cancelRun'] } as const;

/** Events a busy run cannot take: rejected with an event, and `cancel`. */
const outOfStateTransitions = {
  'user.message': { actions: 'rejectOutOfState' },
  'tool.approve': { actions: 'rejectOutOfState' },
  'tool.deny': { actions: 'rejectOutOfState' },
  cancel: cancelTransition,
} as const;
