import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  agentTool,
  type ConversationEmittedEvent,
  createConversationMachine,
  defineTool,
  handlerProvider,
  InvalidOptionsError,
  openaiProvider,
  type RunOutput,
} from '../src/index.js';
import { startWireServer } from './support/wire-server.js';
import { scriptedModel } from './support/scripted-model.js';

/** Resolves once `condition` holds, polling every 5 ms (a test's wait for a run to get somewhere). */
function until(condition: () => unknown): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (condition() ? resolve() : setTimeout(check, 5));
    check();
  });
}

function run(machine: ReturnType<typeof createConversationMachine>, content: string, sessionData?: unknown) {
  const actor = createActor(machine, { input: { messages: [], ...(sessionData === undefined ? {} : { sessionData }) } });
  const events: ConversationEmittedEvent[] = [];
  actor.on('*', (event) => events.push(event as ConversationEmittedEvent));
  actor.start();
  actor.send({ type: 'user.message', content });
  return { actor, events, output: toPromise(actor) as Promise<RunOutput> };
}

describe('agentTool: a conversation machine called as a tool', () => {
  it('runs the child with the prompt and the parent sessionData; its final text is the result, its usage counts in the tree', async () => {
    const seen: unknown[] = [];
    const lookup = defineTool({
      name: 'lookup',
      parameters: z.object({ q: z.string() }),
      execute: ({ q }, { sessionData }) => {
        seen.push(sessionData);
        return `found ${q}`;
      },
    });
    const child = scriptedModel([
      { toolCalls: [{ id: 'c1', name: 'lookup', args: { q: 'oslo' } }] },
      { text: 'Oslo is the capital.', usage: { prompt: 100, completion: 20 } },
    ]);
    const researcher = createConversationMachine({ provider: handlerProvider(child.handler), tools: [lookup], system: 'You research.' });
    const parent = scriptedModel([
      { toolCalls: [{ id: 'p1', name: 'research', args: { prompt: 'Capital of Norway?' } }] },
      { text: 'It is Oslo.' },
    ]);
    const writer = createConversationMachine({
      provider: handlerProvider(parent.handler),
      tools: [agentTool(researcher, { name: 'research', description: 'Ask the researcher' })],
    });
    const { events, output } = run(writer, 'Where?', { user: 'u1' });
    const result = await output;
    expect(result.status).toBe('done');
    expect(result.text).toBe('It is Oslo.');
    expect(seen).toEqual([{ user: 'u1' }]);
    expect(child.requests[0]?.messages.at(-1)).toMatchObject({ role: 'user', content: 'Capital of Norway?' });
    const toolMessage = result.messages.find((message) => message.role === 'tool');
    expect(toolMessage?.content[0]).toMatchObject({ toolCallId: 'p1', result: 'Oslo is the capital.' });
    const types = events.map((event) => event.type);
    expect(types.indexOf('agent.started')).toBeLessThan(types.indexOf('agent.finished'));
    expect(events.filter((event) => event.type === 'agent.event').length).toBeGreaterThan(3);
    const childResult = events.find((event) => event.type === 'agent.event' && event.event.type === 'tool.result');
    expect(childResult).toMatchObject({ path: ['p1'], event: { type: 'tool.result', name: 'lookup', result: 'found oslo' } });
    // parent: 2 × (10 + 5); child: (10 + 5) + (100 + 20)
    expect(result.usage.totalTokens).toBe(30 + 135);
    expect(result.usageByAgent).toEqual([
      { path: [], agent: 'main', usage: { inputTokens: 20, outputTokens: 10, totalTokens: 30 } },
      { path: ['p1'], agent: 'research', usage: { inputTokens: 110, outputTokens: 25, totalTokens: 135 } },
    ]);
  });

  it("passes a child's streamed answer up one step at a time: every delta re-emitted in order, none after agent.finished", async () => {
    const answer = 'A long answer, streamed in many small pieces by the child model. '.repeat(3);
    const child = scriptedModel([{ text: answer }]);
    const parent = scriptedModel([{ toolCalls: [{ id: 'p1', name: 'ask', args: { prompt: 'Tell me.' } }] }, { text: 'Told.' }]);
    const writer = createConversationMachine({
      provider: handlerProvider(parent.handler),
      tools: [agentTool(createConversationMachine({ provider: handlerProvider(child.handler) }), { name: 'ask' })],
    });
    // What the parent receives from its child, as XState's inspection sees it.
    const received: Array<{ events: unknown[] }> = [];
    const actor = createActor(writer, {
      input: { messages: [] },
      inspect: (inspection) => {
        const event =
          inspection.type === '@xstate.event' ? (inspection as { event: { type: string; events?: unknown[] } }).event : undefined;
        if (event?.type === 'agent.emitted' && inspection.actorRef === actor) received.push({ events: event.events ?? [] });
      },
    });
    const events: ConversationEmittedEvent[] = [];
    actor.on('*', (event) => events.push(event as ConversationEmittedEvent));
    actor.start();
    actor.send({ type: 'user.message', content: 'Go.' });
    const result = (await toPromise(actor)) as RunOutput;
    expect(result.status).toBe('done');
    const deltas = events.flatMap((event) =>
      event.type === 'agent.event' && event.event.type === 'text.delta' ? [event.event.delta] : [],
    );
    expect(deltas.join('')).toBe(answer);
    expect(deltas.length).toBeGreaterThan(30);
    // One parent step per step of the child, not one per delta; and every child event in one of them.
    expect(received.length).toBeLessThan(8);
    const forwarded = events.filter((event) => event.type === 'agent.event').length;
    expect(received.reduce((sum, batch) => sum + batch.events.length, 0)).toBe(forwarded);
    const types = events.map((event) => event.type);
    expect(types.lastIndexOf('agent.event')).toBeLessThan(types.indexOf('agent.finished'));
  });

  it('turns away an agent.emitted that no child sent (any shape), while idle and during an agent call; the run goes on unharmed', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    process.on('uncaughtException', onUnhandled);
    const forged = [
      { type: 'agent.emitted' },
      { type: 'agent.emitted', childId: 7, events: [] },
      { type: 'agent.emitted', childId: 'agent:p1', events: 42 },
      { type: 'agent.emitted', childId: 'agent:p1', events: [null] },
      { type: 'agent.emitted', childId: 'agent:p1', events: [{ type: 'agent.event' }] },
      { type: 'agent.emitted', childId: 'agent:p1', events: [{ type: 'agent.event', path: 'p1', event: { type: 'usage' } }] },
      { type: 'agent.emitted', childId: 'agent:p1', events: [{ type: 'tool.approval.requested', toolCallId: 'x', path: 3 }] },
    ];
    try {
      let release = () => {};
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const slow = defineTool({
        name: 'slow',
        parameters: z.object({}),
        execute: async () => {
          await gate;
          return 'slow done';
        },
      });
      const child = scriptedModel([{ toolCalls: [{ id: 'c1', name: 'slow', args: {} }] }, { text: 'Child done.' }]);
      const parent = scriptedModel([{ toolCalls: [{ id: 'p1', name: 'ask', args: { prompt: 'Go.' } }] }, { text: 'Parent done.' }]);
      const machine = createConversationMachine({
        provider: handlerProvider(parent.handler),
        tools: [agentTool(createConversationMachine({ provider: handlerProvider(child.handler), tools: [slow] }), { name: 'ask' })],
      });
      const actor = createActor(machine, { input: { messages: [] } });
      const events: ConversationEmittedEvent[] = [];
      actor.on('*', (event) => events.push(event as ConversationEmittedEvent));
      actor.start();
      for (const event of forged) actor.send(event as never);
      actor.send({ type: 'user.message', content: 'Ask.' });
      await until(
        () => JSON.stringify(actor.getSnapshot().value).includes('executingTools') && events.some((event) => event.type === 'agent.event'),
      );
      for (const event of forged) actor.send(event as never);
      release();
      const result = (await toPromise(actor)) as RunOutput;
      expect(result.status).toBe('done');
      expect(result.text).toBe('Parent done.');
      const rejected = events.filter((event) => event.type === 'event.rejected' && event.eventType === 'agent.emitted');
      expect(rejected).toHaveLength(forged.length * 2);
      expect(rejected[0]).toMatchObject({
        message: expect.stringContaining('agent.emitted must be { childId: string, events: [{ type, … }] }'),
      });
      // None of them counted as the child's: its one answer came up, nothing more.
      const childTexts = events.flatMap((event) =>
        event.type === 'agent.event' && event.event.type === 'text.delta' ? [event.event.delta] : [],
      );
      expect(childTexts.join('')).toBe('Child done.');
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      process.off('uncaughtException', onUnhandled);
    }
  });

  it('gives a failed child an error result naming status and reason, or halts the parent with onChildFailure: halt', async () => {
    const failing = () =>
      createConversationMachine({
        provider: handlerProvider(scriptedModel([{ error: Object.assign(new Error('bad key'), { status: 401 }) }]).handler),
      });
    for (const onChildFailure of ['result', 'halt'] as const) {
      const parent = scriptedModel([{ toolCalls: [{ id: 'p1', name: 'ask', args: { prompt: 'x' } }] }, { text: 'recovered' }]);
      const machine = createConversationMachine({
        provider: handlerProvider(parent.handler),
        tools: [agentTool(failing(), { name: 'ask', onChildFailure })],
      });
      const result = await run(machine, 'go').output;
      const toolResult = result.messages.find((message) => message.role === 'tool')?.content[0];
      expect(toolResult).toMatchObject({ isError: true, result: expect.stringMatching(/^Error: agent "ask" ended error.*bad key/) });
      if (onChildFailure === 'result') expect(result).toMatchObject({ status: 'done', text: 'recovered' });
      else expect(result).toMatchObject({ status: 'halted', reason: 'agent_failed' });
    }
  });

  it('stops the child when the call times out or the run is cancelled, and reports it finished', async () => {
    let aborted = 0;
    const slow = defineTool({
      name: 'slow',
      parameters: z.object({}),
      execute: (_args, { signal }) =>
        new Promise((resolve) => {
          signal.addEventListener('abort', () => {
            aborted++;
            resolve('late');
          });
        }),
    });
    const childMachine = () =>
      createConversationMachine({
        provider: handlerProvider(scriptedModel([{ toolCalls: [{ id: 'c1', name: 'slow', args: {} }] }, { text: 'never' }]).handler),
        tools: [slow],
      });
    const parent = scriptedModel([{ toolCalls: [{ id: 'p1', name: 'ask', args: { prompt: 'x' } }] }, { text: 'gave up' }]);
    const timed = createConversationMachine({
      provider: handlerProvider(parent.handler),
      tools: [agentTool(childMachine(), { name: 'ask', timeoutMs: 100 })],
    });
    const timedRun = run(timed, 'go');
    const timedOut = await timedRun.output;
    expect(timedOut.status).toBe('done');
    expect(timedOut.messages.find((message) => message.role === 'tool')?.content[0]).toMatchObject({ isError: true });
    expect(timedRun.events.find((event) => event.type === 'agent.finished')).toMatchObject({
      output: { status: 'halted', reason: 'timeout' },
    });
    expect(aborted).toBe(1);

    const cancelled = createConversationMachine({
      provider: handlerProvider(scriptedModel([{ toolCalls: [{ id: 'p1', name: 'ask', args: { prompt: 'x' } }] }]).handler),
      tools: [agentTool(childMachine(), { name: 'ask' })],
    });
    const cancelledRun = run(cancelled, 'go');
    await new Promise((resolve) => setTimeout(resolve, 50));
    cancelledRun.actor.send({ type: 'cancel', reason: 'user left' });
    expect(await cancelledRun.output).toMatchObject({ status: 'halted', reason: 'cancelled' });
    expect(cancelledRun.events.find((event) => event.type === 'agent.finished')).toMatchObject({
      output: { status: 'halted', reason: 'cancelled' },
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(aborted).toBe(2);
  });

  it('refuses a call deeper than maxAgentDepth with an error result', async () => {
    const leaf = createConversationMachine({ provider: handlerProvider(scriptedModel([{ text: 'leaf' }]).handler) });
    const parent = scriptedModel([{ toolCalls: [{ id: 'p1', name: 'ask', args: { prompt: 'x' } }] }, { text: 'ok' }]);
    const machine = createConversationMachine({
      provider: handlerProvider(parent.handler),
      tools: [agentTool(leaf, { name: 'ask' })],
      maxAgentDepth: 0,
    });
    const result = await run(machine, 'go').output;
    expect(result.messages.find((message) => message.role === 'tool')?.content[0]).toMatchObject({
      isError: true,
      result: expect.stringContaining('deeper than maxAgentDepth (0)'),
    });
  });

  it('rejects what is not a conversation machine, and bad options, at creation', () => {
    expect(() => agentTool({} as never, { name: 'x' })).toThrow(InvalidOptionsError);
    expect(() => agentTool({} as never, { name: 'x' })).toThrow(/agentTool\(machine\): expected a conversation machine/);
    const leaf = createConversationMachine({ provider: handlerProvider(scriptedModel([]).handler) });
    expect(() => agentTool(leaf, { name: 'bad name' })).toThrow(/agentTool.name: expected a name of 1 to 64/);
    expect(() => agentTool(leaf, { name: 'x', onChildFailure: 'explode' as never })).toThrow(
      /agentTool.onChildFailure: expected "result" or "halt"/,
    );
  });
});

describe("an agent call stopped by its caller closes its child's HTTP request", () => {
  for (const how of ['timeout', 'cancel'] as const) {
    it(`on ${how}: the wire server sees the child's socket close, and the parent's run goes on or halts as usual`, async () => {
      // The child's one request never answers: the server holds it until the client lets go.
      const server = await startWireServer([async (_request, control) => control.sleep(10_000)]);
      try {
        const child = createConversationMachine({
          provider: openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-child', baseURL: `${server.url}/v1` }),
          retry: false,
        });
        const parent = scriptedModel([{ toolCalls: [{ id: 'p1', name: 'ask', args: { prompt: 'x' } }] }, { text: 'went on' }]);
        const machine = createConversationMachine({
          provider: handlerProvider(parent.handler),
          tools: [agentTool(child, { name: 'ask', ...(how === 'timeout' ? { timeoutMs: 1_000 } : {}) })],
        });
        const started = run(machine, 'go');
        if (how === 'cancel') {
          started.actor.on('agent.event', ({ event }) => {
            if (event.type === 'request.started') setTimeout(() => started.actor.send({ type: 'cancel', reason: 'user left' }), 50);
          });
        }
        const output = await started.output;
        if (how === 'timeout') expect(output).toMatchObject({ status: 'done', text: 'went on' });
        else expect(output).toMatchObject({ status: 'halted', reason: 'cancelled' });
        await server.waitForRequestSocketClosed(0);
        const finished = started.events.find((event) => event.type === 'agent.finished');
        expect(finished).toMatchObject({ output: { status: 'halted', reason: how === 'timeout' ? 'timeout' : 'cancelled' } });
      } finally {
        await server.close();
      }
    });
  }
});

describe('durable agent trees', () => {
  it('a persisted tree restores its child where it was: a finished child call never runs again, an interrupted one gets the interrupted result', async () => {
    const executions: string[] = [];
    let releaseSlow: (() => void) | undefined;
    const quick = defineTool({
      name: 'quick',
      parameters: z.object({}),
      execute: () => {
        executions.push('quick');
        return 'quick done';
      },
    });
    const slow = defineTool({
      name: 'slow',
      parameters: z.object({}),
      execute: () => {
        executions.push('slow');
        return new Promise<string>((resolve) => {
          releaseSlow = () => resolve('slow done');
        });
      },
    });
    const child = scriptedModel([
      {
        toolCalls: [
          { id: 'c1', name: 'quick', args: {} },
          { id: 'c2', name: 'slow', args: {} },
        ],
      },
      { text: 'child answer after restart' },
    ]);
    const childMachine = createConversationMachine({ provider: handlerProvider(child.handler), tools: [quick, slow] });
    const parent = scriptedModel([{ toolCalls: [{ id: 'p1', name: 'ask', args: { prompt: 'go' } }] }, { text: 'parent done' }]);
    const machine = createConversationMachine({
      provider: handlerProvider(parent.handler),
      tools: [agentTool(childMachine, { name: 'ask' })],
    });
    const first = run(machine, 'start');
    await until(() => executions.includes('slow') && executions.includes('quick'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    const persisted = JSON.parse(JSON.stringify(first.actor.getPersistedSnapshot())) as { children: Record<string, unknown> };
    expect(Object.keys(persisted.children)).toContain('agent:p1');
    first.actor.stop();
    releaseSlow?.();

    const restored = createActor(machine, { snapshot: persisted as never });
    const events: ConversationEmittedEvent[] = [];
    restored.on('*', (event) => events.push(event as ConversationEmittedEvent));
    restored.start();
    const output = (await toPromise(restored)) as RunOutput;
    expect(output).toMatchObject({ status: 'done', text: 'parent done' });
    expect(executions).toEqual(['quick', 'slow']);
    const childHistory = child.requests.at(-1)?.messages ?? [];
    const results = childHistory.filter((message) => message.role === 'tool');
    expect(JSON.stringify(results)).toContain('quick done');
    expect(JSON.stringify(results)).toContain('interrupted');
    expect(output.messages.find((message) => message.role === 'tool')?.content[0]).toMatchObject({ result: 'child answer after restart' });
    expect(events.some((event) => event.type === 'agent.finished')).toBe(true);
  });
});

describe('a child that had ended when the snapshot was taken', () => {
  it('settles its call on restore (a restored child sends no done event): the parent goes on with its answer', async () => {
    let release: (() => void) | undefined;
    const wait = defineTool({
      name: 'wait',
      parameters: z.object({}),
      execute: () => new Promise<string>((resolve) => (release = () => resolve('waited'))),
    });
    const child = createConversationMachine({
      provider: handlerProvider(scriptedModel([{ toolCalls: [{ id: 'c1', name: 'wait', args: {} }] }, { text: 'child' }]).handler),
      tools: [wait],
    });
    const parentModel = scriptedModel([{ toolCalls: [{ id: 'p1', name: 'ask', args: { prompt: 'x' } }] }, { text: 'parent got it' }]);
    const machine = createConversationMachine({
      provider: handlerProvider(parentModel.handler),
      tools: [agentTool(child, { name: 'ask' })],
    });
    const first = run(machine, 'go');
    await until(() => release);
    const persisted = JSON.parse(JSON.stringify(first.actor.getPersistedSnapshot())) as {
      children: Record<string, { snapshot: Record<string, unknown> }>;
    };
    first.actor.stop();
    release?.();
    // The child as it was when it had ended: final, with its output.
    const usage = { inputTokens: 30, outputTokens: 7, totalTokens: 37 };
    const childOutput = { status: 'done', text: 'the child answered', messages: [{ role: 'user', content: 'x' }], iterations: 1, usage };
    Object.assign(persisted.children['agent:p1']!.snapshot, { status: 'done', value: 'done', output: childOutput });
    const restored = createActor(machine, { snapshot: persisted as never });
    const events: ConversationEmittedEvent[] = [];
    restored.on('*', (event) => events.push(event as ConversationEmittedEvent));
    restored.start();
    const output = (await toPromise(restored)) as RunOutput;
    expect(output).toMatchObject({ status: 'done', text: 'parent got it' });
    expect(output.messages.find((message) => message.role === 'tool')?.content[0]).toMatchObject({
      toolCallId: 'p1',
      result: 'the child answered',
    });
    expect(events).toContainEqual(expect.objectContaining({ type: 'tool.result', toolCallId: 'p1', result: 'the child answered' }));
    expect(output.usageByAgent?.find((entry) => entry.agent === 'ask')?.usage).toEqual(usage);
  });
});

describe('a child that cannot be restored', () => {
  it("ends the parent's restored run in error naming the child; the stored snapshot is not changed", async () => {
    let release: (() => void) | undefined;
    const wait = defineTool({
      name: 'wait',
      parameters: z.object({}),
      execute: () => new Promise<string>((resolve) => (release = () => resolve('waited'))),
    });
    const child = createConversationMachine({
      provider: handlerProvider(scriptedModel([{ toolCalls: [{ id: 'c1', name: 'wait', args: {} }] }, { text: 'child' }]).handler),
      tools: [wait],
    });
    const machine = createConversationMachine({
      provider: handlerProvider(
        scriptedModel([{ toolCalls: [{ id: 'p1', name: 'ask', args: { prompt: 'x' } }] }, { text: 'never' }]).handler,
      ),
      tools: [agentTool(child, { name: 'ask' })],
    });
    const first = run(machine, 'go');
    await until(() => release);
    const persisted = JSON.parse(JSON.stringify(first.actor.getPersistedSnapshot())) as {
      children: Record<string, { snapshot: Record<string, unknown> }>;
    };
    first.actor.stop();
    release?.();
    for (const [damage, named] of [
      [{ schemaVersion: 99 }, /schemaVersion 99, written by a newer actorloop/],
      [{ value: 'dreaming' }, /state value "dreaming" is not a state/],
    ] as const) {
      const damaged = structuredClone(persisted);
      Object.assign(damaged.children['agent:p1']!.snapshot, damage);
      const before = JSON.stringify(damaged);
      const restored = createActor(machine, { snapshot: damaged as never }).start();
      const output = (await toPromise(restored)) as RunOutput;
      expect(output.status).toBe('error');
      expect(output.error?.message).toMatch(/^agent call p1 \(ask\): its child's snapshot cannot be restored/);
      expect(output.error?.message).toMatch(named);
      // The round is closed: the history stays valid for the next turn.
      expect(output.messages.at(-1)).toMatchObject({ role: 'tool', content: [{ toolCallId: 'p1', isError: true }] });
      expect(JSON.stringify(damaged)).toBe(before);
    }
  });
});

describe('approvals deep in an agent tree', () => {
  it('surface at the root with their path; tool.approve and tool.deny sent to the root reach the owning grandchild', async () => {
    const executed: string[] = [];
    const danger = defineTool({
      name: 'danger',
      parameters: z.object({ what: z.string() }),
      needsApproval: true,
      execute: ({ what }) => {
        executed.push(what);
        return `did ${what}`;
      },
    });
    const leafModel = scriptedModel([
      {
        toolCalls: [
          { id: 'g1', name: 'danger', args: { what: 'a' } },
          { id: 'g2', name: 'danger', args: { what: 'b' } },
        ],
      },
      { text: 'leaf finished' },
    ]);
    const leaf = createConversationMachine({ provider: handlerProvider(leafModel.handler), tools: [danger] });
    const middle = createConversationMachine({
      provider: handlerProvider(
        scriptedModel([{ toolCalls: [{ id: 'c1', name: 'leaf', args: { prompt: 'do it' } }] }, { text: 'middle finished' }]).handler,
      ),
      tools: [agentTool(leaf, { name: 'leaf' })],
    });
    const root = createConversationMachine({
      provider: handlerProvider(
        scriptedModel([{ toolCalls: [{ id: 'p1', name: 'middle', args: { prompt: 'go' } }] }, { text: 'root finished' }]).handler,
      ),
      tools: [agentTool(middle, { name: 'middle' })],
    });
    const { actor, events, output } = run(root, 'start');
    await until(() => actor.getSnapshot().context.agents.approvals.length === 2);
    const requested = events.filter((event) => event.type === 'tool.approval.requested');
    expect(requested).toEqual([
      { type: 'tool.approval.requested', toolCallId: 'g1', name: 'danger', args: { what: 'a' }, path: ['p1', 'c1'] },
      { type: 'tool.approval.requested', toolCallId: 'g2', name: 'danger', args: { what: 'b' }, path: ['p1', 'c1'] },
    ]);
    actor.send({ type: 'tool.approve', toolCallId: 'g1' });
    actor.send({ type: 'tool.deny', toolCallId: 'g2', reason: 'no' });
    actor.send({ type: 'tool.approve', toolCallId: 'nobody' });
    const result = await output;
    expect(result).toMatchObject({ status: 'done', text: 'root finished' });
    expect(executed).toEqual(['a']);
    expect(events.some((event) => event.type === 'event.rejected' && event.eventType === 'tool.approve')).toBe(true);
    const leafResults = leafModel.requests.at(-1)?.messages.filter((message) => message.role === 'tool');
    expect(JSON.stringify(leafResults)).toContain('denied by user: no');
    expect(actor.getSnapshot().context.agents.approvals).toEqual([]);
  });
});

describe('handoffs', () => {
  it('hand the conversation to another agent: the next request uses its system prompt, tools and provider over the same history', async () => {
    const { defineAgent } = await import('../src/index.js');
    const refunds: unknown[] = [];
    const refund = defineTool({
      name: 'refund',
      parameters: z.object({ amount: z.number() }),
      execute: ({ amount }) => {
        refunds.push(amount);
        return `refunded ${amount}`;
      },
    });
    const deskModel = scriptedModel([{ toolCalls: [{ id: 't1', name: 'transfer_to_billing', args: {} }] }, { text: 'unused' }]);
    const billingModel = scriptedModel([{ toolCalls: [{ id: 'b1', name: 'refund', args: { amount: 5 } }] }, { text: 'Refunded 5.' }]);
    const triage = defineAgent({ name: 'triage', system: 'You route.', handoffs: ['billing'] });
    const billing = defineAgent({
      name: 'billing',
      system: 'You refund.',
      tools: [refund],
      provider: handlerProvider(billingModel.handler),
      handoffs: ['triage'],
    });
    const desk = createConversationMachine({
      provider: handlerProvider(deskModel.handler),
      agents: [triage, billing],
      startAgent: 'triage',
    });
    const { events, output } = run(desk, 'I want my money back');
    const result = await output;
    expect(result).toMatchObject({ status: 'done', text: 'Refunded 5.', agent: 'billing', iterations: 2 });
    expect(refunds).toEqual([5]);
    expect(events.filter((event) => event.type === 'agent.handoff')).toEqual([{ type: 'agent.handoff', from: 'triage', to: 'billing' }]);
    expect(deskModel.requests).toHaveLength(1);
    expect(deskModel.requests[0]?.messages[0]).toMatchObject({ role: 'system', content: 'You route.' });
    expect(deskModel.requests[0]?.tools?.map((tool) => tool.function.name)).toEqual(['transfer_to_billing']);
    const billingRequest = billingModel.requests[0];
    expect(billingRequest?.messages[0]).toMatchObject({ role: 'system', content: 'You refund.' });
    expect(billingRequest?.tools?.map((tool) => tool.function.name)).toEqual(['refund', 'transfer_to_triage']);
    // The same history: the user's message and the transfer with its result.
    expect(JSON.stringify(billingRequest?.messages)).toContain('I want my money back');
    expect(JSON.stringify(billingRequest?.messages)).toContain('transferred to billing');
  });

  it('a handoff ping-pong is caught by the doom-loop rule; a call to another agent’s tool is an unknown tool', async () => {
    const { defineAgent } = await import('../src/index.js');
    const pingPong = scriptedModel(
      Array.from({ length: 12 }, (_, index) => ({
        toolCalls: [{ id: `h${index}`, name: index % 2 === 0 ? 'transfer_to_b' : 'transfer_to_a', args: {} }],
      })),
    );
    const machine = createConversationMachine({
      provider: handlerProvider(pingPong.handler),
      agents: [defineAgent({ name: 'a', handoffs: ['b'] }), defineAgent({ name: 'b', handoffs: ['a'] })],
      maxToolIterations: 20,
    });
    const result = await run(machine, 'loop').output;
    expect(result).toMatchObject({ status: 'halted', reason: 'doom_loop' });

    const secret = defineTool({ name: 'secret', parameters: z.object({}), execute: () => 'leaked' });
    const model = scriptedModel([{ toolCalls: [{ id: 's1', name: 'secret', args: {} }] }, { text: 'ok' }]);
    const guarded = createConversationMachine({
      provider: handlerProvider(model.handler),
      agents: [defineAgent({ name: 'front', handoffs: ['vault'] }), defineAgent({ name: 'vault', tools: [secret] })],
    });
    const guardedResult = await run(guarded, 'give me the secret').output;
    expect(guardedResult.messages.find((message) => message.role === 'tool')?.content[0]).toMatchObject({
      isError: true,
      result: expect.stringContaining('unknown tool "secret"'),
    });
  });

  it('rejects duplicate agent names, a handoff to an unknown agent and a startAgent not among agents, naming the value', async () => {
    const { defineAgent } = await import('../src/index.js');
    const provider = handlerProvider(scriptedModel([]).handler);
    const a = defineAgent({ name: 'a', handoffs: ['b'] });
    const b = defineAgent({ name: 'b' });
    expect(() => createConversationMachine({ provider, agents: [a, b, b] })).toThrow(
      /agents\[2\]\.name: expected an agent name no other agent has, got "b"/,
    );
    expect(() => createConversationMachine({ provider, agents: [a] })).toThrow(
      /agents\[0\]\.handoffs\[0\]: expected the name of one of the agents \(a\), got "b"/,
    );
    expect(() => createConversationMachine({ provider, agents: [a, b], startAgent: 'c' })).toThrow(
      /startAgent: expected the name of one of the agents \(a, b\), got "c"/,
    );
    expect(() => createConversationMachine({ agents: [a, b] } as never)).toThrow(
      /agents\[0\]\.provider \(or provider\): expected a Provider/,
    );
    expect(() => defineAgent({ name: 'has space' })).toThrow(/defineAgent\.name: expected an agent name/);
    expect(() => createConversationMachine({ provider, agents: [a, b], system: 'x' })).toThrow(/system: expected no value with agents/);
  });
});

describe('an agent tree on a durable host and through actorloop/rx', () => {
  it("lists a child's waiting call among pendingApprovals with its path, reports awaitingApproval, and takes the approval", async () => {
    const { createConversationHost, memoryStore } = await import('../src/index.js');
    const executed: string[] = [];
    const transfer = defineTool({
      name: 'transfer',
      parameters: z.object({ amount: z.number() }),
      needsApproval: true,
      execute: ({ amount }) => {
        executed.push(`transfer ${amount}`);
        return `sent ${amount}`;
      },
    });
    const child = createConversationMachine({
      provider: handlerProvider(
        scriptedModel([{ toolCalls: [{ id: 'c1', name: 'transfer', args: { amount: 5 } }] }, { text: 'paid' }]).handler,
      ),
      tools: [transfer],
    });
    const machine = createConversationMachine({
      provider: handlerProvider(
        scriptedModel([{ toolCalls: [{ id: 'p1', name: 'pay', args: { prompt: 'pay 5' } }] }, { text: 'done' }]).handler,
      ),
      tools: [agentTool(child, { name: 'pay', timeoutMs: 30_000 })],
    });
    const host = createConversationHost({ machine, store: memoryStore() });
    try {
      await host.send('c-1', { type: 'user.message', content: 'pay' });
      await expect.poll(async () => (await host.get('c-1'))?.status).toBe('awaitingApproval');
      const view = await host.get('c-1');
      expect(view?.pendingApprovals).toEqual([{ toolCallId: 'c1', name: 'transfer', args: { amount: 5 }, path: ['p1'] }]);
      expect(executed).toEqual([]);
      await host.send('c-1', { type: 'tool.approve', toolCallId: 'c1' });
      expect(await host.result('c-1')).toMatchObject({ status: 'done', text: 'done' });
      expect(executed).toEqual(['transfer 5']);
      expect((await host.get('c-1'))?.pendingApprovals).toEqual([]);
    } finally {
      await host.close();
    }
  });

  it('events$ streams the tree: agent.started, every agent.event, agent.finished', async () => {
    const { events$ } = await import('../src/observe/rx/index.js');
    const { lastValueFrom, toArray } = await import('rxjs');
    const leaf = createConversationMachine({ provider: handlerProvider(scriptedModel([{ text: 'leaf' }]).handler) });
    const root = createConversationMachine({
      provider: handlerProvider(
        scriptedModel([{ toolCalls: [{ id: 'p1', name: 'leaf', args: { prompt: 'x' } }] }, { text: 'root' }]).handler,
      ),
      tools: [agentTool(leaf, { name: 'leaf' })],
    });
    const actor = createActor(root, { input: { messages: [] } });
    const tree = lastValueFrom(events$(actor, 'agent.started', 'agent.event', 'agent.finished').pipe(toArray()));
    actor.start();
    actor.send({ type: 'user.message', content: 'go' });
    const seen = await tree;
    expect(seen[0]).toEqual({ type: 'agent.started', toolCallId: 'p1', agent: 'leaf' });
    expect(seen.at(-1)).toMatchObject({
      type: 'agent.finished',
      toolCallId: 'p1',
      agent: 'leaf',
      output: { status: 'done', text: 'leaf' },
    });
    const inner = seen.filter((event) => event.type === 'agent.event').map((event) => event.type === 'agent.event' && event.event.type);
    expect(inner).toEqual(expect.arrayContaining(['request.started', 'text.delta', 'usage', 'request.finished']));
  });
});
