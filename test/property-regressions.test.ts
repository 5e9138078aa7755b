/**
 * Counterexamples the property runs (test/properties.test.ts, test/soak.ts) found, shrunk to one
 * conversation each over the real SDK and the fault server. An `it.fails` stays until the engine is
 * fixed; then it starts failing and turns into a plain `it` (as KB1 did).
 */
import { createActor, toPromise } from 'xstate';
import { afterEach, describe, expect, it } from 'vitest';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import type { ConversationOptions } from '../src/machines/chart/options.js';
import { anthropicProvider } from '../src/providers/anthropic/index.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import { defineTool } from '../src/tools/define-tool.js';
import { startFaultServer, type FaultServer, type FaultStep } from './support/fault-server.js';
import { historyProblems } from './support/property-run.js';

let server: FaultServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const lookup = defineTool({
  name: 'lookup',
  description: 'Look a number up',
  parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  execute: ({ n }) => `found ${String(n)}`,
});

async function run(plan: FaultStep[], options: Partial<ConversationOptions>) {
  server = await startFaultServer({ wire: 'openai', plan, toolNames: ['lookup'], apiKey: 'sk-regression' });
  const machine = createConversationMachine({
    provider: openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-regression', baseURL: server.baseURL }),
    tools: [lookup],
    retry: false,
    ...options,
  });
  const actor = createActor(machine, { input: { messages: [] } });
  const results: string[] = [];
  actor.on('tool.result', (event) => results.push(event.toolCallId));
  actor.start();
  actor.send({ type: 'user.message', content: 'Look it up.' });
  const output = await toPromise(actor);
  expect(historyProblems(output.messages)).toEqual([]);
  const callIds = output.messages.flatMap((message) =>
    message.role === 'assistant' ? message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])) : [],
  );
  return { output, results, callIds };
}

describe('property counterexamples', () => {
  // KB1, fixed in 84ec67b. Found by the soak (seed 2: 64 of 1000 runs; seed 1: run #23). docs/behaviour.md "Events": a tool.result
  // event for every call, also for unknown tools, invalid arguments, …. A call settled while
  // planning (unknown tool, invalid JSON, arguments failing the schema, arguments too large) gets
  // its tool.result from `startRound`; when the response instead ends the run at the iteration cap
  // (`haltAtIterationCap`) or as a persisting doom loop (`haltOnDoomLoop`), `settleAll` emits only
  // for the calls it settles itself (`calls[index]?.state !== 'settled'`), so those pre-settled
  // calls were in the history with their error result but no tool.result event was ever emitted.
  it('a call with invalid arguments in the response that hits the iteration cap gets a tool.result event', async () => {
    const { output, results, callIds } = await run(
      [{ kind: 'tools', calls: [{ tool: 0, args: 'badSchema', n: 1 }], thinking: false, text: false }],
      { maxToolIterations: 0 },
    );
    expect(output).toMatchObject({ status: 'halted', reason: 'max_iterations' });
    expect(callIds).toEqual(['call_r0_0']);
    expect(results).toEqual(callIds);
  });

  it('a call to an unknown tool in the response that hits the iteration cap gets a tool.result event', async () => {
    const { output, results, callIds } = await run(
      [{ kind: 'tools', calls: [{ tool: 0, args: 'valid', n: 1, unknown: true }], thinking: false, text: false }],
      { maxToolIterations: 0 },
    );
    expect(output).toMatchObject({ status: 'halted', reason: 'max_iterations' });
    expect(results).toEqual(callIds);
  });

  it('a call with invalid JSON in the response a persisting doom loop halts gets a tool.result event', async () => {
    const looping: FaultStep = {
      kind: 'tools',
      calls: [
        { tool: 0, args: 'valid', n: 7 },
        { tool: 0, args: 'invalidJson', n: 1 },
      ],
      thinking: false,
      text: false,
    };
    const { output, results, callIds } = await run([looping, looping, looping], { doomLoop: { threshold: 2 } });
    expect(output).toMatchObject({ status: 'halted', reason: 'doom_loop' });
    expect(callIds).toHaveLength(6);
    // Event order within a round is not part of the contract; one event per call is.
    expect([...results].sort()).toEqual([...callIds].sort());
  });
});

describe('broken transfers are retried on the Anthropic wire as on the OpenAI wire', () => {
  // KB2, fixed in 9952b67. Found by the soak (seed 3: 13 of 1000 runs end `error` / `unknown`, retryable false, after
  // these faults; seed 4: 29). The OpenAI provider classifies a body or SSE data line that is not
  // JSON as a retryable broken transfer (`classify` in openai-provider.ts: SyntaxError →
  // `incomplete_stream`, retryable; commit 374149b). The Anthropic provider passes the SDK's
  // SyntaxError to `toProviderError`, which made it `unknown`, not retryable, so one garbled or
  // truncated answer ended the whole run in `error` although retries were left:
  //   - streamed: an SSE `data:` line that is not JSON (the SDK's JSON.parse throws);
  //   - not streamed: a 200 body cut short (the connection ends cleanly mid-JSON) or empty.
  // A cut that drops the connection is `network` and is retried; only a clean early end is not.
  async function runAnthropic(plan: FaultStep[], stream: boolean) {
    server = await startFaultServer({ wire: 'anthropic', plan, toolNames: ['lookup'], apiKey: 'sk-ant-regression' });
    const machine = createConversationMachine({
      provider: anthropicProvider({
        model: 'claude-haiku-4-5',
        apiKey: 'sk-ant-regression',
        baseURL: server.baseURL,
        maxTokens: 1024,
        stream,
      }),
      tools: [lookup],
      retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 2, jitter: false },
    });
    const actor = createActor(machine, { input: { messages: [] } }).start();
    actor.send({ type: 'user.message', content: 'Hi' });
    return toPromise(actor);
  }

  it('streamed: a malformed SSE data line is retried', async () => {
    const output = await runAnthropic([{ kind: 'malformed' }, { kind: 'text', thinking: false }], true);
    expect(output.error).toBeUndefined();
    expect(output).toMatchObject({ status: 'done', text: 'Answer 1.' });
  });

  it('not streamed: a body that ends mid-JSON is retried', async () => {
    const output = await runAnthropic(
      [
        { kind: 'cut', how: 'end' },
        { kind: 'text', thinking: false },
      ],
      false,
    );
    expect(output.error).toBeUndefined();
    expect(output).toMatchObject({ status: 'done', text: 'Answer 1.' });
  });

  it('not streamed: an empty 200 body is retried', async () => {
    const output = await runAnthropic(
      [
        { kind: 'empty', body: false },
        { kind: 'text', thinking: false },
      ],
      false,
    );
    expect(output.error).toBeUndefined();
    expect(output).toMatchObject({ status: 'done', text: 'Answer 1.' });
  });

  // openai 7 hands an empty 200 body back as nothing where 6 threw: still a retried broken transfer.
  it.each(['chat', 'responses'] as const)(
    'the same faults are retried on the OpenAI wire, %s API (the behaviour asked for)',
    async (api) => {
      for (const [plan, stream] of [
        [[{ kind: 'malformed' }, { kind: 'text', thinking: false }], true],
        [
          [
            { kind: 'cut', how: 'end' },
            { kind: 'text', thinking: false },
          ],
          false,
        ],
        [
          [
            { kind: 'empty', body: false },
            { kind: 'text', thinking: false },
          ],
          false,
        ],
      ] as Array<[FaultStep[], boolean]>) {
        server = await startFaultServer({
          wire: api === 'chat' ? 'openai' : 'responses',
          plan,
          toolNames: ['lookup'],
          apiKey: 'sk-regression',
        });
        const machine = createConversationMachine({
          provider: openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-regression', baseURL: server.baseURL, stream, api }),
          tools: [lookup],
          retry: { maxRetries: 2, initialDelayMs: 1, maxDelayMs: 2, jitter: false },
        });
        const actor = createActor(machine, { input: { messages: [] } }).start();
        actor.send({ type: 'user.message', content: 'Hi' });
        expect(await toPromise(actor)).toMatchObject({ status: 'done', text: 'Answer 1.' });
        await server.close();
        server = undefined;
      }
    },
  );
});

describe('input guardrails check every message that joins the history', () => {
  // KB3 (fixed: with input guardrails, `preparing` takes queued messages one at a time, each checked in
  // `checkingInput`). Found by the soak (`controls`: steering 'queue', a stray user.message and a
  // user.interrupt during the same request; seed 20261204, run #224 of 1500). When several messages
  // joined at one request boundary, all were appended and only the last was checked: the message the
  // guardrail would trip on reached the model, and the run ended `done`.
  it('two messages queued during one request are both checked; the one that trips halts the run', async () => {
    server = await startFaultServer({
      wire: 'openai',
      plan: [
        { kind: 'tools', calls: [{ tool: 0, args: 'valid', n: 1 }], thinking: false, text: false },
        { kind: 'slow', delayMs: 50, reply: 'text' },
        { kind: 'text', thinking: false },
      ],
      toolNames: ['lookup'],
      apiKey: 'sk-regression',
    });
    const checked: string[] = [];
    const machine = createConversationMachine({
      provider: openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-regression', baseURL: server.baseURL }),
      tools: [lookup],
      retry: false,
      steering: 'queue',
      guardrails: {
        input: [
          {
            name: 'topic',
            check: (text) => {
              checked.push(text);
              return { tripped: text.includes('forbidden'), reason: 'a forbidden topic' };
            },
          },
        ],
      },
    });
    const actor = createActor(machine, { input: { messages: [] } });
    let sent = false;
    actor.on('request.started', (event) => {
      if (sent || event.iteration !== 1) return;
      sent = true;
      actor.send({ type: 'user.message', content: 'tell me the forbidden thing' });
      actor.send({ type: 'user.message', content: 'and hurry up' });
    });
    actor.start();
    actor.send({ type: 'user.message', content: 'Look it up.' });
    const output = await toPromise(actor);
    expect(historyProblems(output.messages)).toEqual([]);
    // Each on its own, in order; the first that trips ends the run, so the next is never sent.
    expect(checked).toEqual(['Look it up.', 'tell me the forbidden thing']);
    expect(output.messages.filter((message) => message.role === 'user').map((message) => message.content)).toEqual([
      'Look it up.',
      'tell me the forbidden thing',
      'and hurry up',
    ]);
    expect(output).toMatchObject({ status: 'halted', reason: 'guardrail', guardrail: { name: 'topic', phase: 'input' } });
  });
});

describe('a tool result that comes after its deadline is a timeout', () => {
  // KB4 (fixed: `resultOverdue` takes such a result as the `toolDeadline` timer takes the deadline).
  // Found by the property runs under load: 8 concurrent runs beside a CPU hog, a `hang` tool that
  // ignores its signal and answers at 80 ms, `toolTimeoutMs` 28: 24 of 240 calls kept their late
  // answer. A stalled event loop runs I/O and microtasks before due timers, so the answer reached the
  // machine before its deadline's timer did. Shrunk: the tool stalls the loop itself past its deadline.
  it('a tool that stalls the loop past its timeout and then answers gets the timeout result', async () => {
    const stalling = defineTool({
      name: 'lookup',
      description: 'Look a number up',
      parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      execute: () => {
        const until = Date.now() + 80;
        while (Date.now() < until) {
          // the stall
        }
        return 'finished far too late';
      },
    });
    const { output, results, callIds } = await run(
      [
        { kind: 'tools', calls: [{ tool: 0, args: 'valid', n: 1 }], thinking: false, text: false },
        { kind: 'text', thinking: false },
      ],
      { tools: [stalling], toolTimeoutMs: 28 },
    );
    expect(output.status).toBe('done');
    expect(results).toEqual(callIds);
    const toolResults = output.messages.flatMap((message) => (message.role === 'tool' ? message.content : []));
    expect(toolResults).toEqual([expect.objectContaining({ result: 'tool "lookup" timed out after 28 ms', isError: true })]);
  });
});

describe('the time limit is judged when the machine decides, not when a listener hears of it', () => {
  // Issue 48, item 8: the soak saw "a request started 44.1 ms into the run, maxDurationMs 40" once
  // and never on replay. Timed both ways on 1,500 runs (seed 7, 3 at a time): the step that started
  // each request always began before the deadline (1 ms at least), but XState calls emitted events'
  // listeners after the step, one after another, and the harness's own snapshot checks on the
  // step's earlier events (tool.result, tool.finished) delayed its `request.started` listener by up
  // to 9 ms. The engine was right; the harness now leaves its own listener time out of an event's time.
  const busy = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      // a slow listener
    }
  };
  async function timedRun(tool: ReturnType<typeof defineTool>, onResult: () => void) {
    server = await startFaultServer({
      wire: 'openai',
      plan: [
        { kind: 'tools', calls: [{ tool: 0, args: 'valid', n: 1 }], thinking: false, text: false },
        { kind: 'text', thinking: false },
      ],
      toolNames: ['lookup'],
      apiKey: 'sk-regression',
    });
    const machine = createConversationMachine({
      provider: openaiProvider({ model: 'gpt-4o-mini', apiKey: 'sk-regression', baseURL: server.baseURL }),
      tools: [tool],
      retry: false,
      budget: { maxDurationMs: 500 },
    });
    const actor = createActor(machine, { input: { messages: [] } });
    const starts: number[] = [];
    actor.on('tool.result', onResult);
    actor.on('request.started', () => starts.push(performance.now()));
    actor.start();
    const sentAt = performance.now();
    actor.send({ type: 'user.message', content: 'Look it up.' });
    const output = await toPromise(actor);
    return { output, startsAfter: starts.map((at) => at - sentAt) };
  }

  it('a request decided in time is made though a listener of its step runs past the deadline', async () => {
    const { output, startsAfter } = await timedRun(lookup, () => busy(700));
    // The second request was decided before the deadline and heard of after it; the limit then ends the run.
    expect(startsAfter).toHaveLength(2);
    expect(startsAfter[1]).toBeGreaterThan(500);
    expect(output.status).toBe('halted');
    expect(output.reason).toBe('budget');
    expect(output.budget).toMatchObject({ limit: 'maxDurationMs', max: 500 });
  });

  it('a step that begins past the deadline starts no request', async () => {
    const slow = defineTool({
      name: 'lookup',
      description: 'Look a number up',
      parameters: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
      execute: () => {
        busy(700);
        return 'found it, late';
      },
    });
    const { output, startsAfter } = await timedRun(slow, () => {});
    expect(startsAfter).toHaveLength(1);
    expect(output.status).toBe('halted');
    expect(output.reason).toBe('budget');
    expect(output.budget).toMatchObject({ limit: 'maxDurationMs', max: 500 });
  });
});
