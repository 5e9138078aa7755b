import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { pause } from '../src/cli/offline-model.js';

describe('the offline model pauses between chunks', () => {
  it('leaves no abort listener on the signal after many pauses (no MaxListenersExceededWarning)', async () => {
    const controller = new AbortController();
    for (let index = 0; index < 50; index += 1) await pause(0, controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('ends at once when the signal aborts, and removes its listener', async () => {
    const controller = new AbortController();
    const waiting = pause(60_000, controller.signal);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    controller.abort();
    await waiting;
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });
});
