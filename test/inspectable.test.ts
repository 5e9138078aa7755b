import { describe, expect, it } from 'vitest';
import { createActor, createMachine } from 'xstate';
import { redactContent, redacted, toInspectable } from '../src/observe/inspect/inspectable.js';

describe('toInspectable', () => {
  it('turns live values into plain JSON: errors, toJSON, maps, sets, odd numbers, functions dropped', () => {
    const value = {
      error: new TypeError('bad'),
      when: new Date(0),
      map: new Map([['a', 1]]),
      set: new Set([1, 2]),
      big: 10n,
      nan: Number.NaN,
      skip: () => 1,
      nothing: undefined,
    };
    expect(toInspectable(value)).toEqual({
      error: { name: 'TypeError', message: 'bad' },
      when: '1970-01-01T00:00:00.000Z',
      map: { a: 1 },
      set: [1, 2],
      big: '10',
      nan: 'NaN',
    });
  });

  it('cuts cycles and very deep values instead of throwing', () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    expect(toInspectable(cyclic)).toEqual({ name: 'loop', self: '[circular]' });
    let deep: Record<string, unknown> = {};
    const top = deep;
    for (let level = 0; level < 40; level++) {
      deep.next = {};
      deep = deep.next as Record<string, unknown>;
    }
    expect(JSON.stringify(toInspectable(top))).toContain('[too deep]');
  });

  it('a snapshot holding actor refs becomes JSON', () => {
    const actor = createActor(createMachine({ context: { messages: [{ role: 'user', content: 'hi' }] } })).start();
    const json = toInspectable(actor.getSnapshot());
    expect(json).toMatchObject({ status: 'active', context: { messages: [{ role: 'user', content: 'hi' }] } });
    expect(() => JSON.stringify(json)).not.toThrow();
  });
});

describe('redactContent', () => {
  it('drops content wherever it sits and keeps the shape, roles, names and ids', () => {
    const event = {
      type: '@xstate.snapshot',
      snapshot: {
        value: { requesting: 'waiting' },
        context: {
          messages: [
            { role: 'user', content: 'my secret' },
            { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', args: { account: 42 } }] },
            { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'lookup', result: 'balance 10' }] },
          ],
          sessionData: { user: 'ada' },
          finalText: null,
          usage: { totalTokens: 12 },
        },
      },
      event: { type: 'provider.delta', deltas: [{ type: 'text.delta', delta: 'hel' }] },
    };
    expect(redactContent(event)).toEqual({
      type: '@xstate.snapshot',
      snapshot: {
        value: { requesting: 'waiting' },
        context: {
          messages: [
            { role: 'user', content: redacted },
            { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', args: redacted }] },
            { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'lookup', result: redacted }] },
          ],
          sessionData: redacted,
          finalText: null,
          usage: { totalTokens: 12 },
        },
      },
      event: { type: 'provider.delta', deltas: [{ type: 'text.delta', delta: redacted }] },
    });
  });

  it('an empty value stays empty, so "no content" still reads as such', () => {
    expect(redactContent({ text: '', content: null, args: {} })).toEqual({ text: '', content: null, args: redacted });
  });
});
