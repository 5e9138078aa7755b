/**
 * Every conversation machine shares one chart (src/machines/chart/shared-chart.ts): its state
 * nodes, guards and actions are made once per process; each machine is an object over it with its
 * own settings, actors and delays. Machines made with different options, running at once, each run
 * with their own; `provide` keeps a machine's settings; a snapshot persisted by one machine restores
 * into another made with the same options.
 */
import { describe, expect, it } from 'vitest';
import { createActor, getInitialSnapshot, getNextSnapshot, toPromise } from 'xstate';
import { createConversationMachine, defineTool, handlerProvider, type Message } from '../src/index.js';
import { scriptedModel } from './support/scripted-model.js';

const echo = (name: string, needsApproval = false) =>
  defineTool({
    name,
    description: `The ${name} tool`,
    parameters: { type: 'object', properties: {} },
    needsApproval,
    execute: async () => `${name} ran`,
  });
const systemOf = (model: ReturnType<typeof scriptedModel>) => model.requests[0]?.messages[0]?.content;

const toolResults = (messages: Message[]) =>
  messages.flatMap((message) => (message.role === 'tool' ? message.content.map((part) => String(part.result)) : []));

describe('conversation machines share one chart', () => {
  it('two machines: one set of state nodes, one table of guards and actions, each its own actors and delays', () => {
    const a = createConversationMachine({ provider: handlerProvider(scriptedModel([]).handler), tools: [echo('alpha')] });
    const b = createConversationMachine({ provider: handlerProvider(scriptedModel([]).handler), tools: [echo('beta')] });
    expect(a.root).toBe(b.root);
    expect(a.config).toBe(b.config);
    expect(a.implementations).not.toBe(b.implementations);
    expect(a.implementations.guards).toBe(b.implementations.guards);
    expect(a.implementations.actions).toBe(b.implementations.actions);
    expect(a.implementations.actors).not.toBe(b.implementations.actors);
    expect(a.implementations.delays).not.toBe(b.implementations.delays);
  });

  it("the shared guards read the settings of the machine stepping: in a transition, a pure step and a snapshot's can", () => {
    // A 2 KB image: over the small machine's media limit, within the other's.
    const image = { type: 'image' as const, data: 'A'.repeat(2_800), mediaType: 'image/png' };
    const message = { type: 'user.message' as const, content: [{ type: 'text' as const, text: 'look' }, image] };
    const small = createConversationMachine({ provider: handlerProvider(scriptedModel([]).handler), maxMediaBytes: 1_000 });
    const large = createConversationMachine({ provider: handlerProvider(scriptedModel([]).handler) });
    for (const [machine, accepted] of [
      [small, false],
      [large, true],
      [small, false],
    ] as const) {
      const idle = getInitialSnapshot(machine, {});
      expect(getNextSnapshot(machine, idle, message).value === 'idle').toBe(!accepted);
      const actor = createActor(machine, { input: {} }).start();
      const rejected: string[] = [];
      actor.on('event.rejected', (event) => rejected.push(event.message));
      actor.send(message);
      expect(rejected.length === 0).toBe(accepted);
      actor.stop();
    }
    // Outside any machine's step there are no settings to read: the guard says so rather than guess.
    const guard = (small.implementations.guards as Record<string, (args: unknown) => boolean>).hasInputGuardrails;
    expect(() => guard?.({ context: {}, event: { type: 'noop' } })).toThrow(/outside its machine/);
  });

  it('machines with different options, run at once, each run with their own provider, tools, system prompt and prices', async () => {
    const modelA = scriptedModel([{ toolCalls: [{ id: 'call_a', name: 'alpha', args: {} }] }, { text: 'A done' }]);
    const modelB = scriptedModel([{ toolCalls: [{ id: 'call_b', name: 'beta', args: {} }] }, { text: 'B done' }]);
    const a = createConversationMachine({ provider: handlerProvider(modelA.handler), tools: [echo('alpha')], system: 'You are A.' });
    const b = createConversationMachine({
      provider: handlerProvider(modelB.handler),
      tools: [echo('beta')],
      system: 'You are B.',
      prices: { handler: { input: 1, output: 2 } },
    });
    const actorA = createActor(a, { input: {} }).start();
    const actorB = createActor(b, { input: {} }).start();
    actorA.send({ type: 'user.message', content: 'go A' });
    actorB.send({ type: 'user.message', content: 'go B' });
    const [outA, outB] = await Promise.all([toPromise(actorA), toPromise(actorB)]);
    expect(outA).toMatchObject({ status: 'done', text: 'A done' });
    expect(outB).toMatchObject({ status: 'done', text: 'B done' });
    expect(toolResults(outA.messages)).toEqual(['alpha ran']);
    expect(toolResults(outB.messages)).toEqual(['beta ran']);
    expect(systemOf(modelA)).toBe('You are A.');
    expect(systemOf(modelB)).toBe('You are B.');
    expect(modelA.requests[0]?.tools.map((tool) => tool.function.name)).toEqual(['alpha']);
    // Prices are B's alone: only its run counts a cost (the context's cost tracking is made from them).
    expect(outA.cost).toBeUndefined();
    expect(outB.cost).toBeDefined();
  });

  it("provide overrides a name and keeps the machine's settings", async () => {
    const model = scriptedModel([{ text: 'provided' }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), system: 'Mine.' });
    let checked = 0;
    const provided = machine.provide({
      guards: {
        budgetReached: () => {
          checked++;
          return false;
        },
      },
    });
    expect(provided.root).toBe(machine.root);
    const actor = createActor(provided, { input: {} }).start();
    actor.send({ type: 'user.message', content: 'hi' });
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'done', text: 'provided' });
    expect(systemOf(model)).toBe('Mine.');
    expect(checked).toBeGreaterThan(0);
  });

  it('a snapshot persisted by one machine restores into another made with the same options', async () => {
    const model = scriptedModel([{ toolCalls: [{ id: 'call_1', name: 'alpha', args: {} }] }, { text: 'after restore' }]);
    const options = { provider: handlerProvider(model.handler), tools: [echo('alpha')] };
    const first = createActor(createConversationMachine({ ...options, tools: [echo('alpha', true)] }), {
      input: {},
    }).start();
    first.send({ type: 'user.message', content: 'go' });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(first.getSnapshot().value).toBe('awaitingApproval');
    const persisted = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    const second = createActor(createConversationMachine({ ...options, tools: [echo('alpha', true)] }), {
      snapshot: persisted,
    }).start();
    second.send({ type: 'tool.approve', toolCallId: 'call_1' });
    const output = await toPromise(second);
    expect(output).toMatchObject({ status: 'done', text: 'after restore' });
    expect(toolResults(output.messages)).toEqual(['alpha ran']);
  });
});
