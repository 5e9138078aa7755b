/**
 * The provider-call actor stops talking to its parent once it is stopped, also in the middle of
 * one batch: a listener that cancels the run on a delta must not be followed by the `finish` of
 * that same batch reaching a stopped actor.
 */
import { createActor, toPromise } from 'xstate';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import type { Provider } from '../src/model/provider.js';
import { emptyUsage } from '../src/model/usage.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('provider call', () => {
  it('a cancel sent from a delta listener ends the run before the finish of the same batch, and nothing reaches the stopped run', async () => {
    const warnings: string[] = [];
    vi.spyOn(console, 'warn').mockImplementation((...args: unknown[]) => void warnings.push(String(args[0])));
    // Deltas and the finish in one go, as a Responses stream gives them at its terminal event.
    const provider: Provider = {
      name: 'burst',
      async *stream() {
        yield { type: 'text.delta', delta: 'Hel' };
        yield { type: 'text.delta', delta: 'lo' };
        yield { type: 'finish', content: [{ type: 'text', text: 'Hello' }], finishReason: 'stop', usage: emptyUsage() };
      },
    };
    const actor = createActor(createConversationMachine({ provider }), { input: { messages: [] } });
    actor.on('text.delta', () => actor.send({ type: 'cancel', reason: 'seen enough' }));
    actor.start();
    actor.send({ type: 'user.message', content: 'Hi' });
    const output = await toPromise(actor);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(output).toMatchObject({ status: 'halted', reason: 'cancelled' });
    expect(warnings.filter((warning) => warning.includes('stopped actor'))).toEqual([]);
  });
});
