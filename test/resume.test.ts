/**
 * Resume semantics on the machine's own restore path (DESIGN §6): a plain
 * `createActor(machine, { snapshot })` resumes a run the way a durable host does.
 */
import { describe, expect, it } from 'vitest';
import { createActor, toPromise, waitFor } from 'xstate';
import { z } from 'zod';
import { setExecutionGate } from '../src/actors/execution-gate.js';
import { createConversationMachine, defineTool, handlerProvider, resultTexts, type ConversationEmittedEvent } from '../src/index.js';
import { compactSnapshot, resumeSnapshot } from '../src/machines/restore/resume-snapshot.js';
import { currentSchemaVersion } from '../src/machines/snapshots/snapshot-migrations.js';
import { deferred, eventsOf, expectValidHistory } from './support/run-conversation.js';
import { scriptedModel, type ScriptedTurn } from './support/scripted-model.js';

const never = () => new Promise<never>(() => undefined);

/** Tools that count their executions; `hold` ones never finish in the first process. */
function countingTools() {
  const executions: Record<string, number> = {};
  const count = (name: string) => {
    executions[name] = (executions[name] ?? 0) + 1;
    return executions[name];
  };
  let held = true;
  const make = (name: string, idempotent: boolean) =>
    defineTool({
      name,
      idempotent,
      parameters: z.object({}),
      execute: () => {
        const run = count(name);
        return held && run === 1 ? never() : `${name} ran (${run})`;
      },
    });
  return {
    executions,
    tools: [make('charge', false), make('lookup', true)],
    /** From now on every execution returns at once. */
    release: () => {
      held = false;
    },
  };
}

/** Runs until `until` holds, then returns the persisted snapshot as stored JSON would give it back. */
async function persistedAt(machine: ReturnType<typeof createConversationMachine>, until: Parameters<typeof waitFor>[1]) {
  const first = createActor(machine, { input: { messages: [] } }).start();
  first.send({ type: 'user.message', content: 'go' });
  await waitFor(first, until);
  const persisted: unknown = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
  first.stop();
  return persisted;
}

function restore(machine: ReturnType<typeof createConversationMachine>, persisted: unknown) {
  const actor = createActor(machine, { snapshot: persisted as never, input: {} });
  const events: ConversationEmittedEvent[] = [];
  actor.on('*', (event) => events.push(event));
  actor.start();
  return { actor, events };
}

describe('a run restored in executingTools', () => {
  const turns: ScriptedTurn[] = [
    {
      toolCalls: [
        { id: 'c1', name: 'charge', args: {} },
        { id: 'l1', name: 'lookup', args: {} },
      ],
    },
    { text: 'done' },
  ];

  it('never runs an interrupted call of a non-idempotent tool again: it gets the interrupted result and the model decides', async () => {
    const { tools, executions, release } = countingTools();
    const model = scriptedModel(turns);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools });
    const persisted = await persistedAt(machine, (snapshot) => snapshot.matches('executingTools') && executions.charge === 1);
    release();
    const { actor, events } = restore(machine, persisted);
    const output = await toPromise(actor);
    expect(executions).toEqual({ charge: 1, lookup: 2 });
    expect(output.status).toBe('done');
    expect(output.messages[2]).toEqual({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'c1', toolName: 'charge', result: resultTexts.interrupted, isError: true },
        { type: 'tool-result', toolCallId: 'l1', toolName: 'lookup', result: 'lookup ran (2)' },
      ],
    });
    // The model saw the interrupted result and decided.
    expect(model.requests[1]?.messages.at(-2)).toMatchObject({ role: 'tool', content: resultTexts.interrupted });
    expect(eventsOf(events, 'tool.result')).toEqual([
      { type: 'tool.result', toolCallId: 'c1', name: 'charge', result: resultTexts.interrupted, isError: true },
      { type: 'tool.result', toolCallId: 'l1', name: 'lookup', result: 'lookup ran (2)', isError: false },
    ]);
    expectValidHistory(output.messages);
  });

  it('keeps a result that arrived before the snapshot and never runs that call again', async () => {
    const { tools, executions, release } = countingTools();
    const quick = defineTool({ name: 'quick', parameters: z.object({}), execute: () => 'quick result' });
    let quickRuns = 0;
    const counted = defineTool({
      name: 'quick',
      parameters: z.object({}),
      execute: () => {
        quickRuns++;
        return quick.execute({}, { signal: new AbortController().signal, toolCallId: 'q', messages: [], sessionData: undefined });
      },
    });
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'q1', name: 'quick', args: {} },
          { id: 'c1', name: 'charge', args: {} },
        ],
      },
      { text: 'done' },
    ]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [...tools, counted] });
    const persisted = await persistedAt(
      machine,
      (snapshot) => snapshot.matches('executingTools') && snapshot.context.round?.[0]?.state === 'settled' && executions.charge === 1,
    );
    release();
    const output = await toPromise(restore(machine, persisted).actor);
    expect(quickRuns).toBe(1);
    expect(executions.charge).toBe(1);
    expect(output.messages[2]).toMatchObject({
      content: [
        { toolCallId: 'q1', result: 'quick result' },
        { toolCallId: 'c1', result: resultTexts.interrupted, isError: true },
      ],
    });
  });

  it('starts calls still queued behind maxConcurrentTools', async () => {
    const { tools, executions, release } = countingTools();
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'c1', name: 'charge', args: {} },
          { id: 'l1', name: 'lookup', args: {} },
          { id: 'l2', name: 'lookup', args: {} },
        ],
      },
      { text: 'done' },
    ]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools, maxConcurrentTools: 1 });
    const persisted = await persistedAt(machine, (snapshot) => snapshot.matches('executingTools') && executions.charge === 1);
    release();
    const output = await toPromise(restore(machine, persisted).actor);
    expect(output.status).toBe('done');
    expect(executions).toEqual({ charge: 1, lookup: 2 });
    expect(output.messages[2]).toMatchObject({
      content: [
        { toolCallId: 'c1', result: resultTexts.interrupted },
        { toolCallId: 'l1', result: 'lookup ran (1)' },
        { toolCallId: 'l2', result: 'lookup ran (2)' },
      ],
    });
  });

  it('gives a re-run idempotent call a fresh deadline', async () => {
    let runs = 0;
    const slow = defineTool({
      name: 'slow',
      idempotent: true,
      timeoutMs: 200,
      execute: async () => {
        runs++;
        if (runs === 1) return never();
        await new Promise((resolve) => setTimeout(resolve, 120));
        return 'slow result';
      },
      parameters: z.object({}),
    });
    const model = scriptedModel([{ toolCalls: [{ id: 's1', name: 'slow', args: {} }] }, { text: 'done' }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [slow] });
    const persisted = await persistedAt(machine, (snapshot) => snapshot.matches('executingTools') && runs === 1);
    // By the time the run is restored, the first execution's deadline is almost over.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const output = await toPromise(restore(machine, persisted).actor);
    expect(runs).toBe(2);
    expect(output.messages[2]).toMatchObject({ content: [{ toolCallId: 's1', result: 'slow result' }] });
  });

  it('resumes the same way on a machine built by machine.provide(...)', async () => {
    const { tools, executions, release } = countingTools();
    const model = scriptedModel(turns);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools }).provide({});
    const persisted = await persistedAt(machine, (snapshot) => snapshot.matches('executingTools') && executions.charge === 1);
    release();
    const output = await toPromise(restore(machine, persisted).actor);
    expect(executions).toEqual({ charge: 1, lookup: 2 });
    expect(output.messages[2]).toMatchObject({ content: [{ result: resultTexts.interrupted }, { result: 'lookup ran (2)' }] });
  });
});

describe('a run restored in requesting', () => {
  it('makes the request again, announces it, and drops the output streamed before the restart', async () => {
    const stalled = deferred();
    const model = scriptedModel([
      async function* () {
        yield {
          id: 'x',
          object: 'chat.completion.chunk' as const,
          model: 'scripted',
          choices: [{ index: 0, delta: { content: 'half an ans' }, finish_reason: null }],
        };
        stalled.resolve();
        await never();
      },
      { text: 'whole answer' },
    ]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler) });
    const first = createActor(machine, { input: {} }).start();
    first.send({ type: 'user.message', content: 'go' });
    await stalled.promise;
    await waitFor(first, (snapshot) => snapshot.context.stream.partial);
    const persisted: unknown = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();
    const { actor, events } = restore(machine, persisted);
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'done', text: 'whole answer' });
    expect(model.requests).toHaveLength(2);
    expect(eventsOf(events, 'request.started')).toEqual([{ type: 'request.started', iteration: 0, attempt: 1, provider: 'handler' }]);
    expect(output.messages).toEqual([
      { role: 'user', content: 'go' },
      { role: 'assistant', content: [{ type: 'text', text: 'whole answer' }] },
    ]);
  });
});

describe('the persisted snapshot', () => {
  it('holds the history once, however many calls are running', async () => {
    const marker = 'a-marker-in-the-history';
    const wait = defineTool({ name: 'wait', parameters: z.object({}), execute: never });
    const model = scriptedModel([{ toolCalls: [1, 2, 3, 4].map((n) => ({ id: `w${n}`, name: 'wait', args: {} })) }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [wait] });
    const actor = createActor(machine, {
      input: { messages: [{ role: 'user', content: marker }], sessionData: { tenant: marker } },
    }).start();
    actor.send({ type: 'user.message', content: 'go' });
    await waitFor(actor, (snapshot) => snapshot.matches('executingTools'));
    const json = JSON.stringify(actor.getPersistedSnapshot());
    // Once in messages, once in sessionData: none of the four running calls' inputs repeat them.
    expect(json.split(marker)).toHaveLength(3);
    expect(Object.keys((JSON.parse(json) as { children: object }).children)).toHaveLength(4);
    actor.stop();
  });

  it("is XState's own persisted snapshot, compacted (the context is handed over without XState's walk through it)", async () => {
    const wait = defineTool({ name: 'wait', parameters: z.object({}), execute: never });
    const model = scriptedModel([{ toolCalls: [{ id: 'w1', name: 'wait', args: {} }] }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [wait] });
    const actor = createActor(machine, { input: { messages: [], sessionData: { tenant: 't' } } }).start();
    actor.send({ type: 'user.message', content: 'go' });
    for (const state of ['requesting', 'executingTools'] as const) {
      await waitFor(actor, (snapshot) => snapshot.matches(state));
      const own = Object.getPrototypeOf(machine).getPersistedSnapshot.call(machine, actor.getSnapshot()) as unknown;
      const stamped = { schemaVersion: currentSchemaVersion, ...(compactSnapshot(own) as object) };
      expect(JSON.parse(JSON.stringify(actor.getPersistedSnapshot()))).toEqual(JSON.parse(JSON.stringify(stamped)));
    }
    actor.stop();
  });

  it('resumeSnapshot is pure and applying it twice equals applying it once', () => {
    const persisted = {
      status: 'active',
      value: { executingTools: 'running' },
      children: { 'toolCall-1-0': { src: 'executeTool', snapshot: { status: 'active', input: {} } } },
      context: {
        round: [
          { toolCallId: 'a', toolName: 'charge', args: {}, state: 'running', deadline: 1 },
          { toolCallId: 'b', toolName: 'lookup', args: {}, state: 'running', deadline: 1 },
        ],
      },
    };
    const copy = structuredClone(persisted);
    const policy = { isIdempotent: (name: string) => name === 'lookup' };
    const once = resumeSnapshot(persisted, policy);
    expect(persisted).toEqual(copy);
    expect(resumeSnapshot(once, policy)).toEqual(once);
    expect(once).toMatchObject({
      children: {},
      context: {
        restored: { interrupted: ['a'] },
        round: [
          { toolCallId: 'a', state: 'settled', result: { result: resultTexts.interrupted, isError: true } },
          { toolCallId: 'b', state: 'queued' },
        ],
      },
    });
    expect(once.context.round[1]).not.toHaveProperty('deadline');
    // Not an active run: untouched.
    const finished = { ...persisted, status: 'done' };
    expect(resumeSnapshot(finished, policy)).toBe(finished);
    expect(compactSnapshot(finished)).toBe(finished);
  });
});

describe('the execution gate (write-ahead for hosts)', () => {
  it('holds execute until the gate opens, and a refused gate keeps the call from running', async () => {
    let runs = 0;
    const tool = defineTool({
      name: 'charge',
      parameters: z.object({}),
      execute: () => {
        runs++;
        return 'charged';
      },
    });
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'c1', name: 'charge', args: {} },
          { id: 'c2', name: 'charge', args: {} },
        ],
      },
      { text: 'done' },
    ]);
    const actor = createActor(createConversationMachine({ provider: handlerProvider(model.handler), tools: [tool] }), { input: {} });
    const open = deferred();
    setExecutionGate(actor.system, async (call) => {
      await open.promise;
      if (call.toolCallId === 'c2') throw new Error('could not write ahead');
    });
    actor.start();
    actor.send({ type: 'user.message', content: 'go' });
    await waitFor(actor, (snapshot) => snapshot.matches('executingTools'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(runs).toBe(0);
    open.resolve();
    const output = await toPromise(actor);
    expect(runs).toBe(1);
    expect(output.messages[2]).toMatchObject({
      content: [
        { toolCallId: 'c1', result: 'charged' },
        { toolCallId: 'c2', result: 'Error: could not write ahead', isError: true },
      ],
    });
  });
});

describe('the execution gate and idempotent tools', () => {
  it('an idempotent tool does not wait for the gate: running it again after a crash does no harm', async () => {
    let runs = 0;
    const lookup = defineTool({
      name: 'lookup',
      idempotent: true,
      parameters: z.object({}),
      execute: () => {
        runs++;
        return 'found';
      },
    });
    const model = scriptedModel([{ toolCalls: [{ id: 'l1', name: 'lookup', args: {} }] }, { text: 'done' }]);
    const actor = createActor(createConversationMachine({ provider: handlerProvider(model.handler), tools: [lookup] }), { input: {} });
    setExecutionGate(actor.system, () => new Promise<void>(() => undefined));
    actor.start();
    actor.send({ type: 'user.message', content: 'go' });
    expect(await toPromise(actor)).toMatchObject({ status: 'done', text: 'done' });
    expect(runs).toBe(1);
  });
});
