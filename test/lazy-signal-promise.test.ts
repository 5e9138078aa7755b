import { afterEach, describe, expect, it } from 'vitest';
import { assign, createActor, createMachine, toPromise } from 'xstate';
import { fromLazySignalPromise } from '../src/actors/from-lazy-signal-promise.js';

const Original = globalThis.AbortController;
let made = 0;
/** Counts the controllers made while a test runs. */
function countControllers(): void {
  made = 0;
  globalThis.AbortController = class extends Original {
    constructor() {
      super();
      made++;
    }
  };
}
afterEach(() => {
  globalThis.AbortController = Original;
});

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('fromLazySignalPromise: fromPromise whose signal is made when read', () => {
  it('makes no AbortController for a promise that never reads its signal, and ends as fromPromise does', async () => {
    countControllers();
    const actor = createActor(
      fromLazySignalPromise<number, { a: number }>(async ({ input }) => input.a + 1),
      { input: { a: 1 } },
    );
    actor.start();
    expect(await toPromise(actor)).toBe(2);
    expect(actor.getSnapshot()).toMatchObject({ status: 'done', output: 2, input: undefined });
    expect(made).toBe(0);
  });

  it('aborts a signal that was read when the actor is stopped', async () => {
    countControllers();
    let signal: AbortSignal | undefined;
    const actor = createActor(
      fromLazySignalPromise<string, undefined>((args) => {
        signal = args.signal;
        return new Promise(() => {});
      }),
    );
    actor.start();
    expect(made).toBe(1);
    expect(signal?.aborted).toBe(false);
    actor.stop();
    expect(signal?.aborted).toBe(true);
    expect(actor.getSnapshot().status).toBe('stopped');
  });

  it('gives a signal first read after the stop already aborted, and ignores what the promise does then', async () => {
    let release: (() => void) | undefined;
    let late: AbortSignal | undefined;
    const actor = createActor(
      fromLazySignalPromise<string, undefined>(async (args) => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        late = args.signal;
        return 'too late';
      }),
    );
    actor.start();
    actor.stop();
    release?.();
    await settle();
    expect(late?.aborted).toBe(true);
    expect(actor.getSnapshot()).toMatchObject({ status: 'stopped', output: undefined });
  });

  it('ends in error on a rejection and on a creator that throws at once', async () => {
    const rejecting = createActor(
      fromLazySignalPromise<string, undefined>(async () => {
        throw new Error('no');
      }),
    );
    rejecting.subscribe({ error: () => {} });
    rejecting.start();
    await settle();
    expect(rejecting.getSnapshot()).toMatchObject({ status: 'error', error: new Error('no') });
    const throwing = createActor(
      fromLazySignalPromise<string, undefined>(() => {
        throw new Error('at once');
      }),
    );
    throwing.subscribe({ error: () => {} });
    throwing.start();
    await settle();
    expect(throwing.getSnapshot()).toMatchObject({ status: 'error', error: new Error('at once') });
  });

  it('is invoked by a machine like fromPromise: its output in onDone, stopped (and aborted) when the state is left', async () => {
    let signal: AbortSignal | undefined;
    const machine = createMachine({
      types: {} as { context: { got: string } },
      context: { got: '' },
      initial: 'slow',
      states: {
        slow: {
          invoke: {
            src: fromLazySignalPromise<string, undefined>((args) => {
              signal = args.signal;
              return new Promise(() => {});
            }),
          },
          on: { skip: 'fast' },
        },
        fast: {
          invoke: {
            src: fromLazySignalPromise<string, { text: string }>(async ({ input }) => input.text),
            input: { text: 'answer' },
            onDone: { target: 'done', actions: assign({ got: ({ event }) => event.output }) },
          },
        },
        done: { type: 'final' },
      },
    });
    const actor = createActor(machine).start();
    actor.send({ type: 'skip' });
    expect(signal?.aborted).toBe(true);
    await toPromise(actor);
    expect(actor.getSnapshot().context.got).toBe('answer');
  });
});
