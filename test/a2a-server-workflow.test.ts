/**
 * `actorloop/a2a` serving a hosted workflow (docs/a2a.md, "Workflows behind A2A"): the official
 * `@a2a-js/sdk` client over real sockets, the workflow's conversations on the real `openaiProvider`
 * against the planned OpenAI wire server. A task is a run: input from a data part or a text, an
 * inner conversation's approval as `input-required` (answered and routed to it), the output as an
 * artifact, streamed progress, the workflow's own events, failure, cancel, and refusals.
 */
import { assign, setup } from 'xstate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type A2AServer, createA2AHandler, serveA2A } from '../src/protocols/a2a/index.js';
import {
  type AnyConversationHost,
  conversationInput,
  createConversationHost,
  createConversationMachine,
  defineTool,
  memoryStore,
  openaiProvider,
  type RunOutput,
} from '../src/index.js';
import {
  type A2ATestClient,
  a2aClient,
  asTask,
  canceled,
  completed,
  data,
  drain,
  failedState,
  fetchWithToken,
  inputRequired,
  partData,
  partText,
  send,
  text,
  until,
  working,
} from './support/a2a-client.js';
import type { PlanStep } from './support/planned-model.js';
import { type PlannedAnswer, type PlannedWireServer, startPlannedWireServer } from './support/planned-wire-server.js';

/** Conversations (by their first message) whose model responses wait until the test releases them. */
const held = new Set<string>();

/** Each request answered from its own history: the writer drafts, the payer asks to charge, then says what the charge gave. */
const plan = (step: PlanStep): PlannedAnswer => {
  if (step.conversation === 'write: explode') throw new Error('model on fire');
  if (step.conversation.startsWith('pay: ')) {
    if (step.round === 0) return { toolCalls: [{ id: 'charge-1', name: 'charge', args: { cents: 8900 } }] };
    const tool = step.messages.findLast((message) => message.role === 'tool');
    return { text: `Result: ${typeof tool?.content === 'string' ? tool.content : JSON.stringify(tool?.content)}` };
  }
  return { text: `Draft about ${step.conversation.slice('write: '.length)} in four words` };
};

let model: PlannedWireServer;
let charges = 0;

type OrderInput = { topic?: string; message?: string; confirm?: boolean };
type OrderOutput = { status: 'done' | 'error'; topic: string; draft: string; payment: string; message?: string };

/** Write, then pay (the charge needs approval), then — when the input asks — wait for a person's `order.confirm`. */
function orderWorkflow() {
  const provider = openaiProvider({ model: 'planned', apiKey: 'test', baseURL: `${model.url}/v1` });
  const charge = defineTool({
    name: 'charge',
    description: 'Charges the card.',
    parameters: z.object({ cents: z.number() }),
    needsApproval: true,
    execute: ({ cents }) => {
      charges++;
      return `charged ${cents}`;
    },
  });
  const writer = createConversationMachine({ provider, retry: { maxRetries: 0 } });
  const payer = createConversationMachine({ provider, tools: [charge], retry: { maxRetries: 0 } });
  const outputOf = (event: unknown) => (event as { output: RunOutput }).output;
  const failed = { target: 'failed', actions: 'recordFailure' as const };
  return setup({
    types: {
      context: {} as { topic: string; confirm: boolean; draft: string; payment: string; failure?: string },
      input: {} as OrderInput,
      events: {} as { type: 'order.confirm' } | { type: 'order.explode' },
      output: {} as OrderOutput,
    },
    actors: { writer, payer },
    guards: { finished: ({ event }) => outputOf(event).status === 'done' },
    actions: { recordFailure: assign({ failure: ({ event }) => `${outputOf(event).status}: ${outputOf(event).error?.message ?? ''}` }) },
  }).createMachine({
    id: 'order',
    // A text-only A2A message starts the run with `{ message }`: the topic then.
    context: ({ input }) => ({ topic: input.topic ?? input.message ?? '', confirm: input.confirm === true, draft: '', payment: '' }),
    initial: 'writing',
    states: {
      writing: {
        invoke: {
          id: 'writer',
          src: 'writer',
          input: ({ context }) => conversationInput(`write: ${context.topic}`),
          onDone: [{ guard: 'finished', target: 'paying', actions: assign({ draft: ({ event }) => event.output.text }) }, failed],
        },
      },
      paying: {
        invoke: {
          id: 'payer',
          src: 'payer',
          input: ({ context }) => conversationInput(`pay: ${context.topic}`),
          onDone: [{ guard: 'finished', target: 'paid', actions: assign({ payment: ({ event }) => event.output.text }) }, failed],
        },
      },
      paid: { always: [{ guard: ({ context }) => context.confirm, target: 'confirming' }, { target: 'done' }] },
      confirming: {
        on: {
          'order.confirm': 'done',
          // The machine itself fails: the run ends `error` with no output.
          'order.explode': {
            actions: () => {
              throw new Error('the confirm action exploded');
            },
          },
        },
      },
      done: { type: 'final' },
      failed: { type: 'final' },
    },
    output: ({ context }) => ({
      status: context.failure ? ('error' as const) : ('done' as const),
      topic: context.topic,
      draft: context.draft,
      payment: context.payment,
      ...(context.failure ? { message: context.failure } : {}),
    }),
  });
}

const token = 'Bearer letmein';
const authorize = (request: Request) => {
  if (request.headers.get('authorization') !== token) throw new Error('no token');
  return true;
};
const clientOf = (server: A2AServer) => a2aClient(`${server.url}/orders/`, fetchWithToken(token));
const getTask = (client: A2ATestClient, id: string) => client.getTask({ tenant: '', id, historyLength: undefined });

describe('actorloop/a2a serving a hosted workflow', () => {
  let host: AnyConversationHost;
  let server: A2AServer;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    model = await startPlannedWireServer(plan, { holdResponses: ({ step }) => held.has(step.conversation) });
    host = createConversationHost({ machine: orderWorkflow(), store: memoryStore() });
    const handler = await createA2AHandler(host, {
      card: { name: 'Orders', description: 'Runs the order workflow.', version: '1.0.0' },
      authorize,
      basePath: '/orders',
    });
    server = await serveA2A(handler, { port: 0 });
  });
  afterAll(async () => {
    await server.close();
    await host.close();
    await model.close();
    process.off('unhandledRejection', onUnhandled);
    expect(unhandled).toEqual([]);
  });

  it('a data part is the input; an inner approval is input-required naming the conversation; the answer goes to it; the output is the artifact', async () => {
    const client = await clientOf(server);
    const before = charges;
    const waiting = asTask(await client.sendMessage(send([data({ topic: 'lamps' })])));
    expect(waiting.status?.state).toBe(inputRequired);
    expect(partText(waiting.status?.message?.parts)).toContain('charge({"cents":8900}) [charge-1] in conversation payer');
    expect(partData(waiting.status?.message?.parts)).toEqual({
      pendingApprovals: [{ toolCallId: 'charge-1', name: 'charge', args: { cents: 8900 }, conversation: ['payer'], path: ['payer'] }],
    });
    // The task is the run: same id in the host, the writer's part already done.
    expect((await host.get(waiting.id))?.conversations?.map((conversation) => conversation.path)).toEqual([['payer']]);

    // Not an answer: refused, nothing charged.
    await expect(client.sendMessage(send([text('maybe later')], waiting.id))).rejects.toThrow(/waits for approval of charge-1/);
    expect(charges).toBe(before);

    const done = asTask(await client.sendMessage(send([data({ approve: true, toolCallId: 'charge-1' })], waiting.id)));
    expect(done.status?.state).toBe(completed);
    expect(charges).toBe(before + 1);
    const output = { status: 'done', topic: 'lamps', draft: 'Draft about lamps in four words', payment: 'Result: charged 8900' };
    expect(partData(done.status?.message?.parts)).toEqual(output);
    expect(done.artifacts.map((artifact) => [artifact.artifactId, partData(artifact.parts)])).toEqual([['output', output]]);
    const got = await getTask(client, waiting.id);
    expect(got.status?.state).toBe(completed);
    expect(partData(got.artifacts[0]?.parts)).toEqual(output);

    // A finished run takes no more messages: it does not take turns.
    await expect(client.sendMessage(send([text('again please')], waiting.id))).rejects.toThrow(
      /has ended \(done\): a workflow run does not take further messages/,
    );
  });

  it('streams a text-started run: working, each inner reply as progress, input-required; the streamed denial runs it to completed', async () => {
    const client = await clientOf(server);
    const before = charges;
    const first = await drain(client.sendMessageStream(send([text('chairs')])));
    expect(first.states).toEqual([working, working, inputRequired]);
    // The text became the input { message }: the workflow took it as its topic.
    expect(first.progress).toEqual(['[writer] Draft about chairs in four words']);
    const id = (first.events[0]?.payload?.$case === 'task' && first.events[0].payload.value.id) || '';
    expect((await host.get(id))?.status).toBe('awaitingApproval');

    // A resubscription to a task that waits for input has nothing more to stream.
    expect((await drain(client.resubscribeTask({ tenant: '', id }))).states).toEqual([inputRequired]);

    const second = await drain(client.sendMessageStream(send([text('deny: too pricey')], id)));
    // The task as the denial left it (working again), the payer's reply as progress, then the end.
    expect(second.states).toEqual([working, working, completed]);
    expect(second.progress).toEqual(['[payer] Result: denied by user: too pricey']);
    expect(partData(second.artifacts.get('output'))).toMatchObject({ topic: 'chairs', payment: 'Result: denied by user: too pricey' });
    expect(charges).toBe(before);
  });

  it("a workflow's own event goes to its chart as a data part { event }; one it does not take now is refused", async () => {
    const client = await clientOf(server);
    const waiting = asTask(await client.sendMessage(send([data({ topic: 'desks', confirm: true })])));
    expect(waiting.status?.state).toBe(inputRequired);
    // Waiting for a person's event, the run is working: the approval answer returns at once.
    const approved = asTask(await client.sendMessage(send([text('approve')], waiting.id, true)));
    expect(approved.status?.state).toBe(working);
    await until(async () => (await host.get(waiting.id))?.value === ('confirming' as unknown));
    expect((await getTask(client, waiting.id)).status?.state).toBe(working);

    await expect(client.sendMessage(send([data({ event: { type: 'order.ship' } })], waiting.id))).rejects.toThrow(
      /does not take order\.ship/,
    );
    await expect(client.sendMessage(send([text('hurry up')], waiting.id))).rejects.toThrow(/is working: .*\{ "event": \{ "type"/);

    const done = asTask(await client.sendMessage(send([data({ event: { type: 'order.confirm' } })], waiting.id)));
    expect(done.status?.state).toBe(completed);
    expect(partData(done.artifacts[0]?.parts)).toMatchObject({ topic: 'desks', payment: 'Result: charged 8900' });
  });

  it('a run that fails is failed saying why, with its output; CancelTask cancels a working run', async () => {
    const client = await clientOf(server);
    const failed = asTask(await client.sendMessage(send([data({ topic: 'explode' })])));
    expect(failed.status?.state).toBe(failedState);
    expect(partText(failed.status?.message?.parts)).toMatch(/^error: error: .*500/);
    expect(partData(failed.status?.message?.parts)).toMatchObject({ status: 'error', topic: 'explode' });
    expect(failed.artifacts).toEqual([]);

    held.add('write: slow');
    try {
      const started = asTask(await client.sendMessage(send([data({ topic: 'slow' })], '', true)));
      expect(started.status?.state).toBe(working);
      const cancelled = await client.cancelTask({ tenant: '', id: started.id, metadata: undefined });
      expect(cancelled.status?.state).toBe(canceled);
      expect((await host.get(started.id))?.status).toBe('halted');
    } finally {
      held.delete('write: slow');
    }
  });

  it('SubscribeToTask joins a working run and streams the rest; a machine that fails is failed saying why', async () => {
    const client = await clientOf(server);
    held.add('write: tables');
    try {
      const started = asTask(await client.sendMessage(send([data({ topic: 'tables', confirm: true })], '', true)));
      expect(started.status?.state).toBe(working);
      const joined = await drain(client.resubscribeTask({ tenant: '', id: started.id }), (event) => {
        if (event.payload?.$case === 'task') held.delete('write: tables');
      });
      expect(joined.states).toEqual([working, working, inputRequired]);
      expect(joined.progress).toEqual(['[writer] Draft about tables in four words']);

      await client.sendMessage(send([text('approve')], started.id, true));
      await until(async () => (await host.get(started.id))?.value === ('confirming' as unknown));
      const exploded = asTask(await client.sendMessage(send([data({ event: { type: 'order.explode' } })], started.id)));
      expect(exploded.status?.state).toBe(failedState);
      expect(partText(exploded.status?.message?.parts)).toMatch(/^error: .*the confirm action exploded/);
      expect((await getTask(client, started.id)).status?.state).toBe(failedState);
    } finally {
      held.delete('write: tables');
    }
  });

  it('a new task without input is refused with -32602 saying what a workflow task takes', async () => {
    const answer = await fetch(`${server.url}/orders`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: token },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'SendMessage',
        params: { message: { role: 'ROLE_USER', messageId: 'x', parts: [{ text: '   ' }] } },
      }),
    });
    const json = (await answer.json()) as { error?: { code: number; message: string } };
    expect(json.error?.code).toBe(-32602);
    expect(json.error?.message).toMatch(/a workflow task starts with its input: a data part/);
  });
});
