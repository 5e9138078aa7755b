/**
 * The building blocks of context compaction (docs: DESIGN §12 "Context window"): the token estimate,
 * the prompt size from the last reported usage, the split into oldest messages and kept tail, the
 * history that replaces them (valid for both wires whatever the split), the summary request, and
 * the summarize and strategy actors.
 */
import fc from 'fast-check';
import { createActor, toPromise } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createStrategyLogic, createSummarizeLogic } from '../src/actors/summarize-call.js';
import { type StepInfo, type StepJournal, setStepJournal } from '../src/actors/step-journal.js';
import {
  compactedMessages,
  droppedMessagesNotice,
  planCompaction,
  promptTokens,
  strategyResultProblem,
  summaryHeading,
  summaryMessage,
  summaryProblem,
  summaryRequest,
  summarySystemPrompt,
} from '../src/machines/controls/compaction-plan.js';
import { ProviderError } from '../src/model/errors/provider-error.js';
import { estimateMessageTokens, estimateTokens } from '../src/model/estimate-tokens.js';
import type { AssistantContentPart, Message } from '../src/model/messages.js';
import type { Provider, ToolDescription } from '../src/model/provider.js';
import { type ChunkHandler, handlerProvider } from '../src/providers/handler/handler-provider.js';
import type { OpenAIChatCompletionChunk } from '../src/providers/openai/index.js';
import { expectValidForBothWires } from './support/history.js';

const call = (id: string, toolName: string, args: unknown): Message => ({
  role: 'assistant',
  content: [{ type: 'tool-call', toolCallId: id, toolName, args }],
});
const result = (id: string, toolName: string, value: unknown): Message => ({
  role: 'tool',
  content: [{ type: 'tool-result', toolCallId: id, toolName, result: value }],
});
const said = (text: string): Message => ({ role: 'assistant', content: [{ type: 'text', text }] });

describe('estimateTokens', () => {
  it('counts 4 characters a token, 4 tokens a message and 3 a part', () => {
    expect(estimateMessageTokens({ role: 'user', content: 'What is 2+3?' })).toBe(4 + 3);
    expect(estimateMessageTokens({ role: 'user', content: [{ type: 'text', text: 'What is 2+3?' }] })).toBe(4 + 3 + 3);
    // 'add' + '{"a":2,"b":3}' = 3 + 13 characters.
    expect(estimateMessageTokens(call('c1', 'add', { a: 2, b: 3 }))).toBe(4 + 3 + 4);
    expect(estimateMessageTokens(result('c1', 'add', '5'))).toBe(4 + 3 + 1);
    expect(estimateMessageTokens(result('c1', 'add', { sum: 5 }))).toBe(4 + 3 + Math.ceil('{"sum":5}'.length / 4));
    expect(estimateMessageTokens({ role: 'system', content: '' })).toBe(4);
  });

  it('reasoning text and redacted data count; signatures and provider metadata do not', () => {
    const message: Message = {
      role: 'assistant',
      content: [
        {
          type: 'reasoning',
          text: 'abcdefgh',
          signature: 'x'.repeat(400),
          providerMetadata: { openai: { encryptedContent: 'y'.repeat(400) } },
        },
        { type: 'redacted-reasoning', data: 'abcd' },
      ],
    };
    expect(estimateMessageTokens(message)).toBe(4 + 2 * 3 + 3);
  });

  it('a part of a kind it does not know counts 1,000 tokens', () => {
    const withImage = { role: 'user', content: [{ type: 'image', url: 'https://example.com/cat.png' }] } as unknown as Message;
    expect(estimateMessageTokens(withImage)).toBe(4 + 3 + 1000);
  });

  it('adds the system prompt as a message and each tool with its schema', () => {
    const tool: ToolDescription = { name: 'add', description: 'Adds', inputSchema: { type: 'object' } };
    const messages: Message[] = [{ role: 'user', content: 'What is 2+3?' }];
    expect(estimateTokens(messages)).toBe(7);
    expect(estimateTokens(messages, { system: 'You are terse.' })).toBe(7 + 4 + 4);
    expect(estimateTokens(messages, { tools: [tool] })).toBe(7 + 8 + Math.ceil((3 + 4 + '{"type":"object"}'.length) / 4));
  });

  it('is deterministic and quick on a long history with large arguments', () => {
    const big = { rows: Array.from({ length: 200 }, (_, index) => ({ index, name: `row ${index}`, value: index * 1.5 })) };
    const history: Message[] = [];
    for (let index = 0; index < 2000; index++) {
      history.push(
        { role: 'user', content: `question ${index}` },
        call(`c${index}`, 'query', big),
        result(`c${index}`, 'query', big),
        said('ok'),
      );
    }
    const first = estimateTokens(history);
    const started = performance.now();
    for (let round = 0; round < 10; round++) expect(estimateTokens(history)).toBe(first);
    // Ten estimates of 8,000 messages: the arguments were serialized once, on the first.
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('promptTokens', () => {
  const messages: Message[] = [{ role: 'user', content: 'What is 2+3?' }, call('c1', 'add', { a: 2, b: 3 }), result('c1', 'add', '5')];
  const system = 'You are terse.';

  it('without reported usage, estimates the whole prompt', () => {
    expect(promptTokens({ messages, system })).toBe(estimateTokens(messages, { system }));
    expect(promptTokens({ messages, system, lastInputTokens: 0, lastMessageCount: 1 })).toBe(estimateTokens(messages, { system }));
  });

  it('with reported usage, adds the messages since that prompt to its count', () => {
    expect(promptTokens({ messages, system, lastInputTokens: 500, lastMessageCount: 1 })).toBe(500 + estimateTokens(messages.slice(1)));
    expect(promptTokens({ messages, lastInputTokens: 500, lastMessageCount: 3 })).toBe(500);
  });

  it('a history shorter than the reported prompt (compacted since) is estimated whole', () => {
    expect(promptTokens({ messages, system, lastInputTokens: 90_000, lastMessageCount: 40 })).toBe(estimateTokens(messages, { system }));
  });
});

describe('planCompaction', () => {
  const history: Message[] = [
    { role: 'system', content: 'Answer in French.' },
    { role: 'user', content: 'What is 2+3?' },
    call('c1', 'add', { a: 2, b: 3 }),
    result('c1', 'add', '5'),
    said('5'),
    { role: 'user', content: 'And 4+4?' },
    call('c2', 'add', { a: 4, b: 4 }),
    result('c2', 'add', '8'),
    said('8'),
  ];

  it('nothing to compact when the prompt fits', () => {
    expect(planCompaction(history, { keepLast: 2, maxInputTokens: 1000, promptTokens: 999 })).toBeNull();
    expect(planCompaction(history, { keepLast: 2, maxInputTokens: 1000, promptTokens: 1001 })).not.toBeNull();
  });

  it('without a size, compacts whatever the size (the provider said the prompt is too long)', () => {
    expect(planCompaction(history, { keepLast: 4 })).toEqual({ system: [history[0]], oldest: history.slice(1, 5), kept: history.slice(5) });
  });

  it('a tail that would start with tool results starts at the call they answer', () => {
    const plan = planCompaction(history, { keepLast: 2 });
    expect(plan?.kept).toEqual(history.slice(6));
    expect(plan?.kept[0]).toBe(history[6]);
    expect(plan?.oldest).toEqual(history.slice(1, 6));
  });

  it('system messages before the tail stay, wherever they are', () => {
    const withRule: Message[] = [...history.slice(0, 5), { role: 'system', content: 'Be brief.' }, ...history.slice(5)];
    const plan = planCompaction(withRule, { keepLast: 4 });
    expect(plan?.system).toEqual([withRule[0], withRule[5]]);
    expect(plan?.oldest.some((message) => message.role === 'system')).toBe(false);
  });

  it('null when nothing but system messages is before the tail', () => {
    expect(planCompaction(history, { keepLast: 8 })).toBeNull();
    expect(planCompaction(history, { keepLast: 100 })).toBeNull();
    expect(planCompaction([], { keepLast: 0 })).toBeNull();
  });
});

describe('compactedMessages', () => {
  const history: Message[] = [
    { role: 'system', content: 'Answer in French.' },
    { role: 'user', content: 'What is 2+3?' },
    call('c1', 'add', { a: 2, b: 3 }),
    result('c1', 'add', '5'),
    said('5'),
    { role: 'user', content: 'And 4+4?' },
    call('c2', 'add', { a: 4, b: 4 }),
    result('c2', 'add', '8'),
    said('8'),
  ];

  it('summary: system messages, the summary as a user message, the tail', () => {
    const plan = planCompaction(history, { keepLast: 4 });
    if (!plan) throw new Error('expected a plan');
    const next = compactedMessages(plan, [summaryMessage('  The user asked 2+3; it is 5.  ')]);
    expect(next).toEqual([history[0], { role: 'user', content: `${summaryHeading}\nThe user asked 2+3; it is 5.` }, ...history.slice(5)]);
    expectValidForBothWires(next);
  });

  it('drop with a tail that starts with the assistant: the notice goes first (Anthropic wants a user message first)', () => {
    const plan = planCompaction(history, { keepLast: 2 });
    if (!plan) throw new Error('expected a plan');
    const next = compactedMessages(plan, []);
    expect(next).toEqual([history[0], droppedMessagesNotice, ...history.slice(6)]);
    expectValidForBothWires(next);
  });

  it('drop with a tail that starts with the user: nothing added', () => {
    const plan = planCompaction(history, { keepLast: 4 });
    if (!plan) throw new Error('expected a plan');
    expect(compactedMessages(plan, [])).toEqual([history[0], ...history.slice(5)]);
  });

  it('drop of everything leaves the notice, so the request has a message', () => {
    const plan = planCompaction(history, { keepLast: 0 });
    if (!plan) throw new Error('expected a plan');
    expect(compactedMessages(plan, [])).toEqual([history[0], droppedMessagesNotice]);
  });
});

describe('summary and strategy results', () => {
  it('summaryProblem: text with something in it', () => {
    expect(summaryProblem('The user wants a trip to Lisbon.')).toBeUndefined();
    expect(summaryProblem('')).toMatch(/empty/);
    expect(summaryProblem(' \n\t ')).toMatch(/empty/);
    expect(summaryProblem(undefined)).toMatch(/must be text/);
  });

  it('strategyResultProblem: well-formed messages, every call with its results', () => {
    expect(strategyResultProblem([])).toBeUndefined();
    expect(strategyResultProblem([{ role: 'user', content: 'Earlier: 2+3 is 5.' }])).toBeUndefined();
    expect(strategyResultProblem([call('c1', 'add', {}), result('c1', 'add', '5')])).toBeUndefined();
    expect(strategyResultProblem('a summary')).toMatch(/must return an array of messages, got string/);
    expect(strategyResultProblem([{ role: 'robot', content: 'x' }])).toMatch(/^the strategy's messages\[0\]: role must be/);
    expect(strategyResultProblem([call('c1', 'add', {})])).toMatch(/messages\[0\] calls tools \(c1\)/);
    expect(strategyResultProblem([call('c1', 'add', {}), result('c2', 'add', '5')])).toMatch(/messages\[0\] calls tools/);
    expect(strategyResultProblem([result('c1', 'add', '5')])).toMatch(/messages\[0\] holds tool results without/);
  });
});

describe('summaryRequest', () => {
  it('a system prompt and the oldest messages as one plain-text transcript', () => {
    const oldest: Message[] = [
      { role: 'user', content: 'What is 2+3?' },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'private scratch work', signature: 'sig' },
          { type: 'text', text: 'Adding.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'add', args: { a: 2, b: 3 } },
        ],
      },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'add', result: 'overflow', isError: true }] },
      { role: 'system', content: 'Answer in French.' },
    ];
    const request = summaryRequest(oldest);
    expect(request.system).toBe(summarySystemPrompt);
    expect(request.messages).toHaveLength(1);
    const text = request.messages[0]?.content as string;
    expect(text).toContain('User: What is 2+3?');
    expect(text).toContain('Assistant: Adding.');
    expect(text).toContain('Assistant called tool add (call c1) with: {"a":2,"b":3}');
    expect(text).toContain('Error from tool add (call c1): overflow');
    expect(text).toContain('System instruction: Answer in French.');
    expect(text).not.toContain('private scratch work');
    expectValidForBothWires(request.messages);
  });

  it('valid for the wire even when the oldest messages hold a call without its result', () => {
    expectValidForBothWires(summaryRequest([call('c1', 'add', {})]).messages);
  });

  it('cuts long values and keeps the latest entries within maxTokens', () => {
    const long = summaryRequest([result('c1', 'read', 'x'.repeat(10_000))]).messages[0]?.content as string;
    expect(long).toContain('(6000 more characters left out)');
    const many: Message[] = Array.from({ length: 100 }, (_, index) => ({ role: 'user', content: `message number ${index}` }));
    const kept = summaryRequest(many, { maxTokens: 50 }).messages[0]?.content as string;
    expect(kept).toContain('User: message number 99');
    expect(kept).not.toContain('User: message number 0\n');
    expect(kept).toMatch(/\((\d+) earlier entries left out\)/);
    expect(kept.length).toBeLessThan(400);
    const huge = summaryRequest([{ role: 'user', content: 'y'.repeat(10_000) }], { maxTokens: 100 }).messages[0]?.content as string;
    expect(huge).toContain('(0 earlier entries left out)');
    expect(huge.length).toBeLessThan(1000);
  });
});

/** Random histories as runs make them: turns of a user message, tool rounds, an answer; system messages and notices between. */
type RoundSpec = { calls: number; text: boolean; reasoning: boolean; error: boolean; notice: boolean; argsSize: number };
type TurnSpec = { system: boolean; parts: boolean; rounds: RoundSpec[]; answer: boolean };

const roundArb: fc.Arbitrary<RoundSpec> = fc.record({
  calls: fc.integer({ min: 1, max: 3 }),
  text: fc.boolean(),
  reasoning: fc.boolean(),
  error: fc.boolean(),
  notice: fc.integer({ min: 0, max: 4 }).map((value) => value === 0),
  argsSize: fc.integer({ min: 0, max: 300 }),
});
const turnArb: fc.Arbitrary<TurnSpec> = fc.record({
  system: fc.integer({ min: 0, max: 4 }).map((value) => value === 0),
  parts: fc.boolean(),
  rounds: fc.array(roundArb, { maxLength: 3 }),
  answer: fc.integer({ min: 0, max: 4 }).map((value) => value !== 0),
});

function buildHistory(turns: TurnSpec[]): Message[] {
  const messages: Message[] = [];
  let ids = 0;
  turns.forEach((turn, turnIndex) => {
    if (turn.system) messages.push({ role: 'system', content: `Rule ${turnIndex}.` });
    const question = `Question ${turnIndex}?`;
    messages.push({ role: 'user', content: turn.parts ? [{ type: 'text', text: question }] : question });
    for (const round of turn.rounds) {
      const content: AssistantContentPart[] = [];
      if (round.reasoning) content.push({ type: 'reasoning', text: 'Thinking.', signature: `sig${ids}` });
      if (round.text) content.push({ type: 'text', text: 'Let me look.' });
      const callIds = Array.from({ length: round.calls }, () => `call_${++ids}`);
      for (const id of callIds)
        content.push({ type: 'tool-call', toolCallId: id, toolName: 'lookup', args: { q: 'x'.repeat(round.argsSize) } });
      messages.push({ role: 'assistant', content });
      messages.push({
        role: 'tool',
        content: callIds.map((id) => ({
          type: 'tool-result',
          toolCallId: id,
          toolName: 'lookup',
          result: round.error ? 'Error: not found' : { found: id },
          ...(round.error ? { isError: true } : {}),
        })),
      });
      if (round.notice) messages.push({ role: 'user', content: 'You are repeating the same tool calls.' });
    }
    if (turn.answer) messages.push(said(`Answer ${turnIndex}.`));
  });
  return messages;
}

const historyArb = fc.array(turnArb, { minLength: 1, maxLength: 8 }).map(buildHistory);

function callIdsOf(messages: Message[]): string[] {
  return messages.flatMap((message) =>
    message.role === 'assistant' ? message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : [])) : [],
  );
}
function resultIdsOf(messages: Message[]): string[] {
  return messages.flatMap((message) => (message.role === 'tool' ? message.content.map((part) => part.toolCallId) : []));
}

describe('compaction of random histories (property)', () => {
  it('the generated histories are valid to begin with', () => {
    fc.assert(
      fc.property(historyArb, (history) => expectValidForBothWires(history)),
      { numRuns: 100 },
    );
  });

  it('summary, drop and a strategy result each give a history valid for both wires; keepLast holds; no call loses its result', () => {
    fc.assert(
      fc.property(historyArb, fc.integer({ min: 0, max: 12 }), (history, keepLast) => {
        const plan = planCompaction(history, { keepLast });
        const minimumTail = Math.min(keepLast, history.length);
        if (plan === null) {
          // Only system messages (or nothing) before a tail of at least keepLast messages.
          let start = Math.max(0, history.length - keepLast);
          while (start > 0 && history[start]?.role === 'tool') start--;
          expect(history.slice(0, start).every((message) => message.role === 'system')).toBe(true);
          return;
        }
        const { system, oldest, kept } = plan;
        expect(kept.length).toBeGreaterThanOrEqual(minimumTail);
        expect(kept[0]?.role).not.toBe('tool');
        // The tail is the history's end, the same objects; the rest is split without loss or reorder.
        const start = history.length - kept.length;
        kept.forEach((message, index) => {
          expect(message).toBe(history[start + index]);
        });
        expect(system).toEqual(history.slice(0, start).filter((message) => message.role === 'system'));
        expect(oldest).toEqual(history.slice(0, start).filter((message) => message.role !== 'system'));
        expect(oldest.length).toBeGreaterThan(0);
        // A call and its results are on one side of the split.
        expect(new Set(callIdsOf(oldest))).toEqual(new Set(resultIdsOf(oldest)));
        expect(new Set(callIdsOf(kept))).toEqual(new Set(resultIdsOf(kept)));

        const strategyResult: Message[] = [said('Earlier we looked things up.')];
        expect(strategyResultProblem(strategyResult)).toBeUndefined();
        for (const replacement of [[summaryMessage('The user asked questions; lookups were made.')], [], strategyResult]) {
          const next = compactedMessages(plan, replacement);
          expectValidForBothWires(next);
          expect(next.slice(next.length - kept.length)).toEqual(kept);
          expect(next.slice(0, system.length)).toEqual(system);
          expect(new Set(callIdsOf(next))).toEqual(new Set(resultIdsOf(next)));
          expect(next.find((message) => message.role !== 'system')?.role).toBe('user');
        }
        // The summary request of any split is valid on the wire too.
        expectValidForBothWires(summaryRequest(oldest).messages);
      }),
      { numRuns: 300 },
    );
  });
});

const chunk = (content: string, finish: string | null = null): OpenAIChatCompletionChunk =>
  ({ model: 'gpt-4o-mini-2024-07-18', choices: [{ index: 0, delta: { content }, finish_reason: finish }] }) as OpenAIChatCompletionChunk;
const usageChunk = {
  choices: [],
  usage: { prompt_tokens: 120, completion_tokens: 9, total_tokens: 129 },
} as unknown as OpenAIChatCompletionChunk;

const oldest: Message[] = [{ role: 'user', content: 'I am planning a trip to Lisbon.' }, said('When do you travel?')];

function answering(text: string[]): { provider: Provider; requests: Parameters<ChunkHandler>[0][] } {
  const requests: Parameters<ChunkHandler>[0][] = [];
  const provider = handlerProvider(async function* (request) {
    requests.push(request);
    for (const [index, piece] of text.entries()) yield chunk(piece, index === text.length - 1 ? 'stop' : null);
    yield usageChunk;
  });
  return { provider, requests };
}

/** A provider whose request waits until its signal aborts; `started` resolves when it was asked. */
function hanging(): { provider: Provider; started: Promise<AbortSignal> } {
  let reportStart: (signal: AbortSignal) => void = () => {};
  const started = new Promise<AbortSignal>((resolve) => {
    reportStart = resolve;
  });
  const provider = handlerProvider(({ signal }) => {
    reportStart(signal);
    return (async function* () {
      await new Promise<never>((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      yield chunk('never');
    })();
  });
  return { provider, started };
}

async function actorError(actor: { start(): unknown }, promise: Promise<unknown>): Promise<unknown> {
  actor.start();
  return promise.then(
    () => {
      throw new Error('expected the actor to fail');
    },
    (error: unknown) => error,
  );
}

describe('the summarize actor', () => {
  it('asks the provider with the summary request and no tools; resolves with the text, usage and model', async () => {
    const { provider, requests } = answering(['The user plans ', 'a trip to Lisbon.']);
    const asked: Array<[string | undefined, number]> = [];
    const logic = createSummarizeLogic((agent, index) => {
      asked.push([agent, index]);
      return provider;
    });
    const actor = createActor(logic, { input: { messages: oldest, agent: 'planner', sessionData: { tenant: 't1' }, provider: 1 } });
    actor.start();
    const output = await toPromise(actor);
    expect(output).toEqual({
      text: 'The user plans a trip to Lisbon.',
      usage: { inputTokens: 120, outputTokens: 9, totalTokens: 129 },
      model: 'gpt-4o-mini-2024-07-18',
      finishReason: 'stop',
    });
    expect(asked).toEqual([['planner', 1]]);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.tools).toEqual([]);
    expect(requests[0]?.sessionData).toEqual({ tenant: 't1' });
    expect(requests[0]?.messages[0]).toEqual({ role: 'system', content: summarySystemPrompt });
    expect(requests[0]?.messages[1]).toMatchObject({
      role: 'user',
      content: expect.stringContaining('User: I am planning a trip to Lisbon.'),
    });
  });

  it('stopping the actor aborts the request', async () => {
    const { provider, started } = hanging();
    const actor = createActor(
      createSummarizeLogic(() => provider),
      { input: { messages: oldest } },
    );
    actor.start();
    const signal = await started;
    expect(signal.aborted).toBe(false);
    actor.stop();
    expect(signal.aborted).toBe(true);
  });

  it('a failure is a classified ProviderError: a 429 is retryable, a prompt too long is context_length', async () => {
    for (const [thrown, expected] of [
      [Object.assign(new Error('slow down'), { status: 429 }), { code: 'rate_limit', retryable: true, status: 429 }],
      [
        Object.assign(new Error('prompt is too long: 210000 tokens > 200000 maximum'), { status: 400 }),
        { code: 'context_length', retryable: false },
      ],
    ] as const) {
      const provider = handlerProvider(() => {
        throw thrown;
      });
      const actor = createActor(
        createSummarizeLogic(() => provider),
        { input: { messages: oldest } },
      );
      const error = await actorError(actor, toPromise(actor));
      expect(ProviderError.isInstance(error)).toBe(true);
      expect(error).toMatchObject(expected);
    }
  });

  it('a stream without its final response is a retryable incomplete stream', async () => {
    const provider: Provider = {
      name: 'cut',
      async *stream() {
        yield { type: 'text.delta', delta: 'The user' };
      },
    };
    const actor = createActor(
      createSummarizeLogic(() => provider),
      { input: { messages: oldest } },
    );
    expect(await actorError(actor, toPromise(actor))).toMatchObject({ code: 'incomplete_stream', retryable: true });
  });

  it('with a step journal: one request step, recorded; a replay gets the record without asking', async () => {
    const steps: StepInfo[] = [];
    const records: unknown[] = [];
    const recording: StepJournal = {
      async step(info, action, signal) {
        steps.push(info);
        const value = await action(signal);
        records.push(value);
        return { status: 'done', value };
      },
    };
    const { provider, requests } = answering(['Lisbon trip.']);
    const first = createActor(
      createSummarizeLogic(() => provider),
      { input: { messages: oldest } },
    );
    setStepJournal(first.system, recording);
    first.start();
    const output = await toPromise(first);
    expect(output.text).toBe('Lisbon trip.');
    expect(steps).toEqual([{ kind: 'request' }]);
    expect(records).toEqual([{ output }]);
    expect(JSON.parse(JSON.stringify(records[0]))).toEqual(records[0]);

    const replaying: StepJournal = { step: async <T>() => ({ status: 'done' as const, value: records[0] as T }) };
    const replay = createActor(
      createSummarizeLogic(() => provider),
      { input: { messages: oldest } },
    );
    setStepJournal(replay.system, replaying);
    replay.start();
    expect(await toPromise(replay)).toEqual(output);
    expect(requests).toHaveLength(1);
  });

  it('with a step journal: a failure is recorded and replayed as the same error; the timeout is decided in the step', async () => {
    const records: unknown[] = [];
    const recording: StepJournal = {
      async step(_info, action, signal) {
        const value = await action(signal);
        records.push(value);
        return { status: 'done', value };
      },
    };
    const { provider } = hanging();
    const actor = createActor(
      createSummarizeLogic(() => provider, { requestTimeoutMs: 50 }),
      { input: { messages: oldest } },
    );
    setStepJournal(actor.system, recording);
    const error = await actorError(actor, toPromise(actor));
    expect(error).toMatchObject({ code: 'timeout', retryable: true, message: 'no response from the provider for 50 ms' });
    expect(records).toEqual([{ error: { message: 'no response from the provider for 50 ms', code: 'timeout', retryable: true } }]);

    const replay = createActor(
      createSummarizeLogic(() => provider),
      { input: { messages: oldest } },
    );
    setStepJournal(replay.system, { step: async <T>() => ({ status: 'done' as const, value: records[0] as T }) });
    expect(await actorError(replay, toPromise(replay))).toMatchObject({ code: 'timeout', retryable: true });
  });

  it('with a step journal: stopping the actor aborts the step', async () => {
    const { provider, started } = hanging();
    const journal: StepJournal = { step: async (_info, action, signal) => ({ status: 'done', value: await action(signal) }) };
    const actor = createActor(
      createSummarizeLogic(() => provider),
      { input: { messages: oldest } },
    );
    setStepJournal(actor.system, journal);
    actor.start();
    const signal = await started;
    actor.stop();
    expect(signal.aborted).toBe(true);
  });
});

describe('the strategy actor', () => {
  it('hands the oldest messages and a signal to the strategy; resolves with what it returns', async () => {
    const seen: Message[][] = [];
    const actor = createActor(
      createStrategyLogic(async (messages, { signal }) => {
        seen.push(messages);
        expect(signal.aborted).toBe(false);
        return [{ role: 'user', content: 'Earlier: a trip to Lisbon.' }];
      }),
      { input: { messages: oldest } },
    );
    actor.start();
    expect(await toPromise(actor)).toEqual({ messages: [{ role: 'user', content: 'Earlier: a trip to Lisbon.' }] });
    expect(seen).toEqual([oldest]);
  });

  it('a result that is not valid messages is an error naming the problem', async () => {
    const actor = createActor(createStrategyLogic((() => [call('c1', 'add', {})]) as never), { input: { messages: oldest } });
    const error = await actorError(actor, toPromise(actor));
    expect(error).toBeInstanceOf(TypeError);
    expect((error as Error).message).toMatch(/^context\.strategy: the strategy's messages\[0\] calls tools \(c1\)/);
  });

  it('stopping the actor aborts the strategy signal', async () => {
    let seen: AbortSignal | undefined;
    const actor = createActor(
      createStrategyLogic((_messages, { signal }) => {
        seen = signal;
        return new Promise<Message[]>(() => {});
      }),
      { input: { messages: oldest } },
    );
    actor.start();
    await Promise.resolve();
    actor.stop();
    expect(seen?.aborted).toBe(true);
  });
});
