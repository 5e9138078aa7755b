/**
 * What a Restate conversation object stores for an agent tree (src/scale/restate/conversation-record.ts,
 * `snapshotForState`). A replay of an invocation writes the state again, and Restate fails the
 * invocation (journal mismatch, retried for ever) when the bytes differ: so the stored snapshot of
 * the whole tree — children included — must not depend on the clock or on chance. And a child's call
 * whose step was declined never ran: it is stored queued, so the restored tree runs it.
 *
 * Found in the Restate fault test: an agent conversation stalled in `executingTools` after a worker
 * was killed while a child's `charge` ran (the child's call `deadline`, from the clock, was stored).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import {
  agentTool,
  type ConversationEmittedEvent,
  createConversationMachine,
  defineTool,
  handlerProvider,
  type RunOutput,
} from '../src/index.js';
import { journaledMachine, setStepJournal, type StepJournal } from '../src/machines/restore/step-journal.js';
import { snapshotForState } from '../src/scale/restate/conversation-record.js';
import { scriptedModel, type ScriptedTurn } from './support/scripted-model.js';

/** Resolves once `condition` holds, polling every 5 ms. */
function until(condition: () => unknown): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (condition() ? resolve() : setTimeout(check, 5));
    check();
  });
}

/** Runs each step at once, except the tool calls in `declined`: their step never starts (as a Restate invocation declines one). */
function journal(declined: ReadonlySet<string> = new Set()): StepJournal {
  return {
    async step(step, action, signal) {
      if (step.kind === 'tool' && declined.has(step.toolCallId)) return new Promise<never>(() => undefined);
      return { status: 'done', value: await action(signal) };
    },
  };
}

/** A parent whose one round asks `consult`; the child's one round calls `charge` (not idempotent), then answers. */
function tree(options: { childTurns: ScriptedTurn[]; charge: (signal: AbortSignal) => Promise<string> }) {
  const executions: string[] = [];
  const charge = defineTool({
    name: 'charge',
    parameters: z.object({}),
    execute: (_args, { signal }) => {
      executions.push('charge');
      return options.charge(signal);
    },
  });
  const child = createConversationMachine({
    provider: handlerProvider(scriptedModel(options.childTurns).handler),
    tools: [charge],
    retry: { maxRetries: 2, initialDelayMs: 60_000, maxDelayMs: 120_000 },
  });
  const parent = scriptedModel([{ toolCalls: [{ id: 'p-cs', name: 'consult', args: { prompt: 'q' } }] }, { text: 'parent done' }]);
  const machine = journaledMachine(
    createConversationMachine({
      provider: handlerProvider(parent.handler),
      tools: [agentTool(child, { name: 'consult', description: 'Ask the consultant' })],
    }),
  );
  return { machine, executions };
}

const childTurns: ScriptedTurn[] = [{ toolCalls: [{ id: 'c-ch', name: 'charge', args: {} }] }, { text: 'child answer' }];
const hangs = (signal: AbortSignal) =>
  new Promise<string>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason)));

type Persisted = { children: Record<string, { snapshot: { value: unknown; context: { round: unknown; retry: { delayMs: number } } } }> };

/** Starts the tree and returns what the object would store once the child's state is `childState`. */
async function storedAt(
  made: ReturnType<typeof tree>,
  childState: string,
  notStarted: ReadonlySet<string> = new Set(),
): Promise<{ stored: string; stop: () => void }> {
  const actor = createActor(made.machine, { input: { messages: [] } });
  setStepJournal(actor.system, journal(notStarted));
  actor.start();
  actor.send({ type: 'user.message', content: 'go' });
  const child = () => (actor.getPersistedSnapshot() as unknown as Persisted).children['agent:p-cs']?.snapshot;
  await until(
    () =>
      JSON.stringify(child()?.value ?? null).includes(childState) &&
      (childState !== 'executingTools' || made.executions.length + notStarted.size > 0),
  );
  const stored = JSON.stringify(snapshotForState(actor.getPersistedSnapshot(), notStarted));
  return { stored, stop: () => actor.stop() };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('snapshotForState: what a Restate conversation object stores for an agent tree', () => {
  it("stores the same bytes whatever the clock while a child's call runs (its deadline is left out)", async () => {
    const first = await storedAt(tree({ childTurns, charge: hangs }), 'executingTools');
    first.stop();
    const now = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => now() + 3_600_000);
    const later = await storedAt(tree({ childTurns, charge: hangs }), 'executingTools');
    later.stop();
    expect(later.stored).toBe(first.stored);
    const child = (JSON.parse(first.stored) as Persisted).children['agent:p-cs']?.snapshot;
    expect(child?.context.round).toEqual([expect.not.objectContaining({ deadline: expect.anything() })]);
  });

  it('stores the same bytes whatever the jitter while a child backs off (its retry delay is left out)', async () => {
    const failing: ScriptedTurn[] = [{ error: Object.assign(new Error('overloaded'), { status: 503 }) }, ...childTurns];
    vi.spyOn(Math, 'random').mockReturnValue(0.1);
    const first = await storedAt(tree({ childTurns: failing, charge: hangs }), 'retrying');
    first.stop();
    vi.spyOn(Math, 'random').mockReturnValue(0.9);
    const other = await storedAt(tree({ childTurns: failing, charge: hangs }), 'retrying');
    other.stop();
    expect(other.stored).toBe(first.stored);
    expect((JSON.parse(first.stored) as Persisted).children['agent:p-cs']?.snapshot.context.retry.delayMs).toBe(0);
  });

  it("stores a child's call whose step was declined as queued: the restored tree runs it once, with its real result", async () => {
    const made = tree({ childTurns, charge: async () => 'charged' });
    const { stored, stop } = await storedAt(made, 'executingTools', new Set(['c-ch']));
    stop();
    expect(made.executions).toEqual([]);
    expect((JSON.parse(stored) as Persisted).children['agent:p-cs']?.snapshot.context.round).toEqual([
      expect.objectContaining({ toolCallId: 'c-ch', state: 'queued' }),
    ]);

    const restored = createActor(made.machine, { snapshot: JSON.parse(stored) as never });
    setStepJournal(restored.system, journal());
    const events: ConversationEmittedEvent[] = [];
    restored.on('*', (event) => events.push(event as ConversationEmittedEvent));
    restored.start();
    const output = (await toPromise(restored)) as RunOutput;
    expect(output).toMatchObject({ status: 'done', text: 'parent done' });
    expect(made.executions).toEqual(['charge']);
    expect(events).toContainEqual(
      expect.objectContaining({
        type: 'agent.event',
        path: ['p-cs'],
        event: expect.objectContaining({ type: 'tool.result', toolCallId: 'c-ch', result: 'charged', isError: false }),
      }),
    );
  });
});
