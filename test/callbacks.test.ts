/** withCallbacks (docs/tracing-and-shaping.md "Callbacks"): payloads, validation at attach time, failures reported, never breaking the run. */
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine, defineTool, HaltError, handlerProvider, InvalidOptionsError, withCallbacks } from '../src/index.js';
import { scriptedModel, type ScriptedTurn } from './support/scripted-model.js';

const add = defineTool({
  name: 'add',
  parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
  execute: async ({ a, b }) => Number(a) + Number(b),
});
const stop = defineTool({
  name: 'stop',
  parameters: { type: 'object', properties: {} },
  execute: () => {
    throw new HaltError('stopped by the tool');
  },
});

function start(turns: ScriptedTurn[]) {
  const model = scriptedModel(turns);
  const machine = createConversationMachine({
    provider: handlerProvider(model.handler),
    tools: [add, stop],
    retry: { initialDelayMs: 1, maxDelayMs: 1, jitter: false },
  });
  return createActor(machine, { input: {} });
}

describe('withCallbacks', () => {
  it('hands each callback one object with what it is about', async () => {
    const actor = start([
      { toolCalls: [{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }] },
      { error: Object.assign(new Error('busy'), { status: 503 }) },
      { text: 'It is 5.' },
    ]);
    const seen: Array<[string, unknown]> = [];
    const record = (name: string) => (value: unknown) => {
      seen.push([name, value]);
    };
    withCallbacks(actor, {
      onRequest: record('onRequest'),
      onToolCall: record('onToolCall'),
      onToolUse: record('onToolUse'),
      onRetry: record('onRetry'),
      onComplete: record('onComplete'),
      onDone: record('onDone'),
      onHalt: record('onHalt'),
      onError: record('onError'),
    });
    actor.start();
    actor.send({ type: 'user.message', content: 'What is 2+3?' });
    const output = await toPromise(actor);
    await Promise.resolve();
    expect(seen.map(([name]) => name)).toEqual([
      'onRequest',
      'onToolCall',
      'onToolUse',
      'onRequest',
      'onRetry',
      'onRequest',
      'onComplete',
      'onDone',
    ]);
    expect(seen[0]![1]).toEqual({ iteration: 0, attempt: 1, provider: 'handler' });
    expect(seen[2]![1]).toMatchObject({ toolCallId: 'c1', name: 'add', args: { a: 2, b: 3 }, result: '5', isError: false });
    expect((seen[2]![1] as { durationMs: number }).durationMs).toBeGreaterThanOrEqual(0);
    expect(seen[4]![1]).toMatchObject({ attempt: 2, error: { status: 503 } });
    expect(seen[6]![1]).toEqual({ output, messages: output.messages, usage: output.usage });
    expect(seen[7]![1]).toMatchObject({ text: 'It is 5.' });
  });

  it('onHalt and onError fire for those endings, onComplete for every ending', async () => {
    const halted = start([{ toolCalls: [{ id: 'h', name: 'stop', args: {} }] }]);
    const failed = start([{ error: Object.assign(new Error('bad key'), { status: 401 }) }]);
    const ends: string[] = [];
    withCallbacks(halted, {
      onHalt: ({ reason }) => ends.push(`halt:${reason}`),
      onComplete: ({ output }) => ends.push(`complete:${output.status}`),
    });
    withCallbacks(failed, {
      onError: ({ error }) => ends.push(`error:${error.status}`),
      onComplete: ({ output }) => ends.push(`complete:${output.status}`),
    });
    for (const actor of [halted, failed]) {
      actor.start();
      actor.send({ type: 'user.message', content: 'go' });
      await toPromise(actor);
    }
    expect(ends).toEqual(['complete:halted', 'halt:tool_halt', 'complete:error', 'error:401']);
  });

  it('rejects an unknown key naming it and what it may have meant, and a non-function value', () => {
    const actor = start([{ text: 'x' }]);
    expect(() => withCallbacks(actor, { onComplet: () => undefined } as never)).toThrow(
      /^Invalid option callbacks\.onComplet: expected a known callback \(did you mean onComplete\? one of onRequest, .*\), got "an unknown key"$/,
    );
    expect(() => withCallbacks(actor, { onError: 'log' } as never)).toThrow(InvalidOptionsError);
    expect(() => withCallbacks(actor, { onError: 'log' } as never)).toThrow(/callbacks\.onError: expected a function/);
    expect(() => withCallbacks(actor, [] as never)).toThrow(
      expect.objectContaining({
        option: 'callbacks',
        message: expect.stringMatching(/^Invalid option callbacks: expected an object of callbacks \(onRequest, .*\), got an array$/),
      }),
    );
  });

  it('rejects options that are wrong, naming them', () => {
    const actor = start([{ text: 'x' }]);
    expect(() => withCallbacks(actor, {}, null as never)).toThrow(
      expect.objectContaining({ option: 'options', message: 'Invalid option options: expected an object, got null' }),
    );
    expect(() => withCallbacks(actor, {}, { onCallbackError: 'log' } as never)).toThrow(
      expect.objectContaining({
        option: 'onCallbackError',
        message: 'Invalid option onCallbackError: expected a function (error, { callback }) => void, got "log"',
      }),
    );
  });

  it('a callback that throws or rejects is reported and never breaks the run', async () => {
    const actor = start([{ toolCalls: [{ id: 'c1', name: 'add', args: { a: 1, b: 1 } }] }, { text: 'two' }]);
    const reported: Array<{ callback: string; message: string }> = [];
    withCallbacks(
      actor,
      {
        onToolUse: () => {
          throw new Error('metrics down');
        },
        onComplete: async () => {
          throw new Error('webhook failed');
        },
      },
      { onCallbackError: (error, { callback }) => reported.push({ callback, message: (error as Error).message }) },
    );
    actor.start();
    actor.send({ type: 'user.message', content: '1+1?' });
    const output = await toPromise(actor);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(output).toMatchObject({ status: 'done', text: 'two' });
    expect(reported).toEqual([
      { callback: 'onToolUse', message: 'metrics down' },
      { callback: 'onComplete', message: 'webhook failed' },
    ]);
  });

  it('attached after the run ended, the end is still reported once; detached, nothing is', async () => {
    const ended = start([{ text: 'done already' }]);
    ended.start();
    ended.send({ type: 'user.message', content: 'hi' });
    await toPromise(ended);
    const late: string[] = [];
    withCallbacks(ended, { onComplete: ({ output }) => late.push(output.text) });
    await Promise.resolve();
    expect(late).toEqual(['done already']);

    const detachedActor = start([{ text: 'quiet' }]);
    const calls: string[] = [];
    const detach = withCallbacks(detachedActor, { onRequest: () => calls.push('request'), onComplete: () => calls.push('complete') });
    detach();
    detachedActor.start();
    detachedActor.send({ type: 'user.message', content: 'hi' });
    await toPromise(detachedActor);
    await Promise.resolve();
    expect(calls).toEqual([]);
  });
});
