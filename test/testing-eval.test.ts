/**
 * Evals (DESIGN §19, docs/testing.md "Evals"): `evaluate` over a machine and a dataset (an array or
 * a JSONL file) with the built-in scorers and `llmJudge`; what counts as an error (never a pass);
 * concurrency, a budget for the whole eval, timeouts and abort.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createConversationMachine, defineTool, emptyUsage, InvalidOptionsError, type Message, type Provider } from '../src/index.js';
import { DatasetError, evaluate, JudgeVerdictError, llmJudge, parseDataset, type Scorer, scorers } from '../src/testing/index.js';

const lastUserText = (messages: readonly Message[]) => {
  const last = messages.findLast((message) => message.role === 'user');
  if (!last) return '';
  return typeof last.content === 'string' ? last.content : last.content.map((part) => ('text' in part ? part.text : '')).join('');
};

/** A model that answers from a table by the last user message (items run at once must not share a script). */
function tableModel(
  answers: Record<string, string | { toolCall: { name: string; args: unknown } }>,
  options: { delayMs?: number; tokens?: number } = {},
): Provider & { seen: string[]; inFlight: number; maxInFlight: number } {
  const model = {
    name: 'table',
    model: 'table-1',
    seen: [] as string[],
    inFlight: 0,
    maxInFlight: 0,
    async *stream({ messages, signal }: Parameters<Provider['stream']>[0]) {
      model.inFlight++;
      model.maxInFlight = Math.max(model.maxInFlight, model.inFlight);
      try {
        const asked = lastUserText(messages);
        model.seen.push(asked);
        if (options.delayMs) {
          await new Promise<void>((resolve, reject) => {
            const timer = setTimeout(resolve, options.delayMs);
            const stop = () => {
              clearTimeout(timer);
              reject(signal.reason);
            };
            signal.addEventListener('abort', stop, { once: true });
          });
        }
        const usage = { ...emptyUsage(), inputTokens: options.tokens ?? 10, outputTokens: 5, totalTokens: (options.tokens ?? 10) + 5 };
        const lastIsTool = messages.at(-1)?.role === 'tool';
        const answer = answers[asked] ?? `no idea about ${asked}`;
        if (typeof answer === 'object' && !lastIsTool) {
          const args = JSON.stringify(answer.toolCall.args);
          yield { type: 'tool.call.delta' as const, toolCallId: 'call-1', name: answer.toolCall.name, argsDelta: args };
          yield {
            type: 'finish' as const,
            content: [{ type: 'tool-call' as const, toolCallId: 'call-1', toolName: answer.toolCall.name, argsText: args }],
            finishReason: 'tool-calls' as const,
            usage,
          };
          return;
        }
        const text = typeof answer === 'string' ? answer : 'done with the tool';
        yield { type: 'text.delta' as const, delta: text };
        yield { type: 'finish' as const, content: [{ type: 'text' as const, text }], finishReason: 'stop' as const, usage };
      } finally {
        model.inFlight--;
      }
    },
  };
  return model;
}

const capitals = tableModel({ 'Capital of France?': 'Paris.', 'Capital of Italy?': 'Rome, of course.', 'Capital of Spain?': 'Lisbon.' });
const capitalsMachine = createConversationMachine({ provider: capitals });
const capitalItems = [
  { id: 'fr', input: 'Capital of France?', expected: 'Paris.' },
  { id: 'it', input: 'Capital of Italy?', expected: 'Rome' },
  { id: 'es', input: 'Capital of Spain?', expected: 'Madrid' },
];

describe('evaluate', () => {
  it('scores each item with each scorer, and gives the means by item, by scorer and overall', async () => {
    const report = await evaluate({ machine: capitalsMachine, dataset: capitalItems, scorers: [scorers.exact(), scorers.includes()] });
    expect(report.items.map(({ id, scores, mean }) => ({ id, scores, mean }))).toEqual([
      { id: 'fr', scores: { exact: 1, includes: 1 }, mean: 1 },
      { id: 'it', scores: { exact: 0, includes: 1 }, mean: 0.5 },
      { id: 'es', scores: { exact: 0, includes: 0 }, mean: 0 },
    ]);
    expect(report.mean).toBeCloseTo(0.5);
    expect(report.scorers).toEqual({ exact: { mean: 1 / 3, scored: 3 }, includes: { mean: 2 / 3, scored: 3 } });
    expect(report.items[2]).toMatchObject({ status: 'done', text: 'Lisbon.', reasons: { includes: 'missing "Madrid"' } });
    expect(report.usage.totalTokens).toBe(45);
    expect(report.stopped).toBeUndefined();
  });

  it('reads a JSONL dataset, naming a bad line by its number', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'actorloop-eval-'));
    const good = join(dir, 'good.jsonl');
    writeFileSync(good, `${capitalItems.map((item) => JSON.stringify(item)).join('\n')}\n\n// a comment\n`);
    const report = await evaluate({ machine: capitalsMachine, dataset: good, scorers: [scorers.includes()] });
    expect(report.items.map((item) => item.id)).toEqual(['fr', 'it', 'es']);
    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '{"input":"a"}\n{"input": oops}\n');
    await expect(evaluate({ machine: capitalsMachine, dataset: bad, scorers: [scorers.includes()] })).rejects.toThrow(
      /bad\.jsonl line 2: not JSON/,
    );
    expect(() => parseDataset('{"input":"a"}\n\n{"expected":"b"}', 'cases.jsonl')).toThrow(/cases\.jsonl line 3: expected an "input"/);
    expect(() => parseDataset('{"id":"x","input":"a"}\n{"id":"x","input":"b"}', 'cases.jsonl')).toThrow(/line 2: "id": "x" is taken/);
    expect(() => parseDataset('[1,2]', 'cases.jsonl')).toThrow(DatasetError);
    expect(parseDataset('{"input":"a"}\n{"id":7,"input":"b"}')).toEqual([
      { id: 'item-1', input: 'a' },
      { id: '7', input: 'b' },
    ]);
  });

  it('regex, JSON schema, tool used, token and cost ceilings, status and latency', async () => {
    const weather = defineTool({
      name: 'weather',
      description: 'The weather in a city',
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => `sunny in ${city}`,
    });
    const model = tableModel(
      { 'Weather in Paris?': { toolCall: { name: 'weather', args: { city: 'Paris' } } }, 'As JSON': '{"city":"Paris","celsius":21}' },
      { tokens: 100 },
    );
    const machine = createConversationMachine({
      provider: model,
      tools: [weather],
      prices: { 'table-1': { input: 1, output: 2 } },
    });
    const report = await evaluate({
      machine,
      dataset: [
        { id: 'tool', input: 'Weather in Paris?' },
        { id: 'json', input: 'As JSON' },
      ],
      scorers: [
        scorers.regex(/done|Paris/),
        scorers.jsonSchema(z.object({ city: z.string(), celsius: z.number() })),
        scorers.toolUsed('weather', { args: (args) => (args as { city?: string }).city === 'Paris' }),
        scorers.maxTokens(150),
        scorers.maxCost(0.0002),
        scorers.status('done'),
        scorers.maxLatency(60_000),
      ],
    });
    const [tool, json] = report.items;
    expect(tool?.scores).toEqual({
      regex: 1,
      jsonSchema: 0,
      'toolUsed(weather)': 1,
      'maxTokens(150)': 0,
      'maxCost(0.0002)': 0,
      'status(done)': 1,
      'maxLatency(60000)': 1,
    });
    expect(tool?.reasons).toMatchObject({ jsonSchema: 'the answer is not JSON', 'maxTokens(150)': '210 tokens > 150' });
    expect(json?.scores).toMatchObject({ regex: 1, jsonSchema: 1, 'toolUsed(weather)': 0, 'maxTokens(150)': 1, 'maxCost(0.0002)': 1 });
    expect(json?.reasons['toolUsed(weather)']).toBe('weather was not called');
    expect(report.costUsd).toBeGreaterThan(0);
  });

  it('a scorer that throws or scores outside 0..1 gives its item an error, counted 0, never a pass', async () => {
    const broken: Scorer = { name: 'broken', score: () => 1.5 };
    const throwing: Scorer = { name: 'throwing', score: () => Promise.reject(new Error('no network')) };
    const report = await evaluate({
      machine: capitalsMachine,
      dataset: capitalItems.slice(0, 1),
      scorers: [scorers.exact(), broken, throwing],
    });
    expect(report.items[0]).toMatchObject({ id: 'fr', scores: { exact: 1 }, mean: 0 });
    expect(report.items[0]?.error).toMatch(/broken: .*a score from 0 to 1.*1\.5/);
    expect(report.items[0]?.error).toMatch(/throwing: Error: no network/);
    expect(report.mean).toBe(0);
    // An item without `expected` for a scorer that needs it: named.
    const missing = await evaluate({ machine: capitalsMachine, dataset: [{ input: 'Capital of France?' }], scorers: [scorers.exact()] });
    expect(missing.items[0]?.error).toMatch(/exact: item "item-1"\.expected.*a string or an array of strings/);
  });

  it('runs `concurrency` items at once, keeps the dataset order in the report, and calls onItem as each ends', async () => {
    const slow = tableModel({ a: 'A', b: 'B', c: 'C', d: 'D', e: 'E' }, { delayMs: 30 });
    const progress: string[] = [];
    const report = await evaluate({
      machine: createConversationMachine({ provider: slow }),
      dataset: ['a', 'b', 'c', 'd', 'e'].map((input) => ({ id: input, input, expected: input.toUpperCase() })),
      scorers: [scorers.exact()],
      concurrency: 2,
      onItem: (_result, { done, total }) => progress.push(`${done}/${total}`),
    });
    expect(slow.maxInFlight).toBe(2);
    expect(report.items.map((item) => item.id)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(report.mean).toBe(1);
    expect(progress).toEqual(['1/5', '2/5', '3/5', '4/5', '5/5']);
  });

  it('a budget stops items from starting once spent; those left get an error', async () => {
    const model = tableModel({}, { tokens: 100 });
    const report = await evaluate({
      machine: createConversationMachine({ provider: model }),
      dataset: ['a', 'b', 'c', 'd'].map((input) => ({ input, expected: 'x' })),
      scorers: [scorers.includes()],
      concurrency: 1,
      budget: { maxTokens: 200 },
    });
    expect(model.seen).toEqual(['a', 'b']);
    expect(report.stopped).toBe('budget');
    expect(report.items.slice(2).map((item) => item.error)).toEqual([
      'not run: the eval budget was spent',
      'not run: the eval budget was spent',
    ]);
    expect(report.usage.totalTokens).toBe(210);
  });

  it('a timed-out item and an aborted eval end their runs and say so', async () => {
    const slow = tableModel({}, { delayMs: 5_000 });
    const machine = createConversationMachine({ provider: slow });
    const timedOut = await evaluate({ machine, dataset: [{ input: 'a' }], scorers: [scorers.status()], itemTimeoutMs: 50 });
    expect(timedOut.items[0]).toMatchObject({ status: 'halted', error: 'timed out after 50 ms', mean: 0 });
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 50);
    const started = performance.now();
    const aborted = await evaluate({
      machine,
      dataset: [{ input: 'a' }, { input: 'b' }],
      scorers: [scorers.status()],
      concurrency: 1,
      signal: abort.signal,
    });
    expect(performance.now() - started).toBeLessThan(4_000);
    expect(aborted.stopped).toBe('aborted');
    expect(aborted.items.map((item) => item.error)).toEqual([
      'stopped: the eval was aborted during this run',
      'not run: the eval was aborted',
    ]);
    expect(aborted.items[0]?.status).toBe('halted');
  });

  it('evaluates a workflow: its input as given, its output scored', async () => {
    const { setup, assign } = await import('xstate');
    const workflow = setup({ types: { input: {} as { n: number }, context: {} as { n: number } } }).createMachine({
      context: ({ input }) => ({ n: input.n }),
      initial: 'doubling',
      states: { doubling: { entry: assign({ n: ({ context }) => context.n * 2 }), always: 'done' }, done: { type: 'final' } },
      output: ({ context }) => `${context.n}`,
    });
    const report = await evaluate({
      machine: workflow,
      dataset: [
        { input: { n: 2 }, expected: '4' },
        { input: { n: 3 }, expected: '7' },
      ],
      scorers: [scorers.exact()],
    });
    expect(report.items.map((item) => item.scores.exact)).toEqual([1, 0]);
    expect(report.items[0]?.text).toBe('4');
  });

  it('names wrong options', async () => {
    await expect(evaluate({ machine: {} as never, dataset: [], scorers: [scorers.exact()] })).rejects.toThrow(
      /evaluate\(options\)\.machine/,
    );
    await expect(evaluate({ machine: capitalsMachine, dataset: [], scorers: [] })).rejects.toThrow(/scorers: expected a non-empty array/);
    await expect(evaluate({ machine: capitalsMachine, dataset: [], scorers: [scorers.exact(), scorers.exact()] })).rejects.toThrow(
      /scorers\[1\]\.name.*"exact" is taken/,
    );
    await expect(evaluate({ machine: capitalsMachine, dataset: [], scorers: [scorers.exact()], concurrency: 0 })).rejects.toThrow(
      InvalidOptionsError,
    );
    await expect(
      evaluate({ machine: capitalsMachine, dataset: [], scorers: [scorers.exact()], budget: { maxTokens: -1 } }),
    ).rejects.toThrow(/budget\.maxTokens/);
    expect(() => scorers.regex('x' as never)).toThrow(/scorers\.regex\(pattern\)/);
    expect(() => scorers.maxCost(-1)).toThrow(/scorers\.maxCost\(usd\)/);
    expect(() => llmJudge({ provider: capitals, rubric: '' })).toThrow(/rubric/);
  });
});

describe('llmJudge', () => {
  /** A judge that answers each request with the text `verdict(prompt)` returns. */
  function judgeModel(verdict: (prompt: string) => string): Provider & { prompts: string[] } {
    const prompts: string[] = [];
    return {
      name: 'judge',
      prompts,
      async *stream({ messages }) {
        const prompt = lastUserText(messages);
        prompts.push(prompt);
        const text = verdict(prompt);
        yield { type: 'text.delta', delta: text };
        yield {
          type: 'finish',
          content: [{ type: 'text', text }],
          finishReason: 'stop',
          usage: { ...emptyUsage(), inputTokens: 5, outputTokens: 2, totalTokens: 7 },
        };
      },
    };
  }

  it('scores by the verdict the judge gives, reading the rubric, the task, the reference and the answer', async () => {
    const judge = judgeModel((prompt) =>
      prompt.includes('answer:\nParis.') ? '{"score":1,"reason":"names Paris"}' : '{"score":0.25,"reason":"wrong city"}',
    );
    const report = await evaluate({
      machine: capitalsMachine,
      dataset: capitalItems,
      scorers: [llmJudge({ provider: judge, rubric: 'Names the right capital.' })],
    });
    expect(report.items.map((item) => item.scores.judge)).toEqual([1, 0.25, 0.25]);
    expect(report.items[0]?.reasons.judge).toBe('names Paris');
    // What judging spent is in the eval's totals (and its budget), apart as scoringUsage too.
    expect(report.scoringUsage.totalTokens).toBe(21);
    expect(report.usage.totalTokens).toBe(45 + 21);
    expect(judge.prompts[0]).toContain('Rubric:\nNames the right capital.');
    expect(judge.prompts[0]).toContain('The task the assistant was given:\nCapital of France?');
    expect(judge.prompts[0]).toContain('Reference answer:\nParis.');
  });

  it('an unparseable verdict is an error for that item, never a pass', async () => {
    const judge = judgeModel(() => 'Looks great to me!');
    const report = await evaluate({
      machine: capitalsMachine,
      dataset: capitalItems.slice(0, 1),
      scorers: [scorers.exact(), llmJudge({ provider: judge, rubric: 'Right capital.', maxRepairs: 1 })],
    });
    expect(report.items[0]).toMatchObject({ scores: { exact: 1 }, mean: 0 });
    expect(report.items[0]?.scores.judge).toBeUndefined();
    expect(report.items[0]?.error).toMatch(/^judge: JudgeVerdictError: judge "judge": its run ended error/);
    // Asked once, then once more to repair (maxRepairs: 1): no more.
    expect(judge.prompts).toHaveLength(2);
    expect(JudgeVerdictError.isInstance(new JudgeVerdictError('j', 'm'))).toBe(true);
    // A score outside 0..1 fails the verdict's schema the same way.
    const generous = judgeModel(() => '{"score":7,"reason":"great"}');
    const out = await evaluate({
      machine: capitalsMachine,
      dataset: capitalItems.slice(0, 1),
      scorers: [llmJudge({ provider: generous, rubric: 'r' })],
    });
    expect(out.items[0]?.error).toMatch(/JudgeVerdictError/);
  });
});
