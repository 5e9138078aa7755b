import { describe, expect, it } from 'vitest';
import { withFields } from '../src/util/with-fields.js';

describe('withFields', () => {
  it('copies the source with the fields set, as a spread would, and leaves the source as it was', () => {
    const call = { toolCallId: 'call_1', toolName: 'add', state: 'queued' as const };
    const running = withFields(call, { state: 'running' as const, deadline: 5 });
    expect(running).toEqual({ toolCallId: 'call_1', toolName: 'add', state: 'running', deadline: 5 });
    expect(Object.keys(running)).toEqual(Object.keys({ ...call, state: 'running', deadline: 5 }));
    expect(call).toEqual({ toolCallId: 'call_1', toolName: 'add', state: 'queued' });
    expect(running).not.toBe(call);
  });

  it('copies own enumerable fields only, as a spread does', () => {
    const source = Object.create({ inherited: 1 }, { own: { value: 2, enumerable: true }, hidden: { value: 3, enumerable: false } });
    expect(withFields(source as { own: number }, { added: 4 })).toEqual({ own: 2, added: 4 });
  });
});
