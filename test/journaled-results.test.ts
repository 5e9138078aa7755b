/**
 * Journaled tool executions report a timeout or an interruption as a done event carrying an error
 * result (not as an actor error). Whether that result is the round's last one (the run goes straight
 * on to `requesting`) or not (the round goes on), the call gets that error result, once.
 */
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { createConversationMachine, defineTool, handlerProvider, resultTexts } from '../src/index.js';
import { journaledMachine, setStepJournal, type StepJournal } from '../src/machines/restore/step-journal.js';
import { interruptedText } from '../src/tools/result-text.js';
import type { ConversationEmittedEvent } from '../src/machines/names/types.js';
import { eventsOf, expectValidHistory } from './support/run-conversation.js';
import { scriptedModel } from './support/scripted-model.js';

/** Runs every step at once, except the tool calls named in `interrupted`: an earlier attempt started those and did not finish. */
function directJournal(interrupted: ReadonlySet<string>): StepJournal {
  return {
    async step(step, action, signal) {
      if (step.kind === 'tool' && interrupted.has(step.toolCallId)) return { status: 'interrupted' };
      return { status: 'done', value: await action(signal) };
    },
  };
}

const hang = defineTool({
  name: 'hang',
  parameters: z.object({}),
  timeoutMs: 40,
  execute: (_args, { signal }) => new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
});
const add = defineTool({ name: 'add', parameters: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });

async function run(toolCalls: Array<{ id: string; name: string; args: unknown }>, interrupted: string[] = []) {
  const model = scriptedModel([{ toolCalls }, { text: 'done' }]);
  const machine = journaledMachine(createConversationMachine({ provider: handlerProvider(model.handler), tools: [hang, add] }));
  const actor = createActor(machine, { input: { messages: [] } });
  setStepJournal(actor.system, directJournal(new Set(interrupted)));
  const events: ConversationEmittedEvent[] = [];
  actor.on('*', (event) => events.push(event));
  actor.start();
  actor.send({ type: 'user.message', content: 'go' });
  const output = await toPromise(actor);
  return { output, results: eventsOf(events, 'tool.result') };
}

describe('journaled executions that end in an error result', () => {
  it("a timeout as the round's only call: the error result, then the next request", async () => {
    const { output, results } = await run([{ id: 'h', name: 'hang', args: {} }]);
    expect(output.status).toBe('done');
    expect(output.messages[2]).toMatchObject({
      role: 'tool',
      content: [{ toolCallId: 'h', result: resultTexts.timedOut('hang', 40), isError: true }],
    });
    expect(results).toEqual([expect.objectContaining({ toolCallId: 'h', isError: true })]);
    expectValidHistory(output.messages);
  });

  it("an interrupted call as the round's last result, after one that succeeded", async () => {
    const { output, results } = await run(
      [
        { id: 'a', name: 'add', args: { a: 1, b: 2 } },
        { id: 'h', name: 'hang', args: {} },
      ],
      ['h'],
    );
    expect(output.status).toBe('done');
    expect(output.messages[2]).toMatchObject({
      role: 'tool',
      content: [
        { toolCallId: 'a', result: '3' },
        { toolCallId: 'h', result: interruptedText, isError: true },
      ],
    });
    expect(results.map((event) => event.toolCallId).sort()).toEqual(['a', 'h']);
    expectValidHistory(output.messages);
  });
});
