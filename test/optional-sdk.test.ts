import { describe, expect, it } from 'vitest';
import { lazySdkClient } from '../src/providers/optional-sdk.js';

describe('lazySdkClient: a client from an optional peer SDK', () => {
  it('starts loading at once, creates the client once, and reuses it', async () => {
    let loads = 0;
    let creations = 0;
    const getClient = lazySdkClient(
      async () => {
        loads++;
        return { make: (n: number) => ({ n }) };
      },
      (module) => {
        creations++;
        return module.make(7);
      },
      'needs the sdk',
    );
    expect(loads).toBe(1);
    const [first, second] = await Promise.all([getClient(), getClient()]);
    expect(first).toEqual({ n: 7 });
    expect(second).toBe(first);
    expect(await getClient()).toBe(first);
    expect([loads, creations]).toEqual([1, 1]);
  });

  it('a missing SDK fails the request with a clear, non-retryable error, and is tried again next time', async () => {
    let loads = 0;
    const getClient = lazySdkClient(
      () => {
        loads++;
        return loads < 3 ? Promise.reject(new Error("Cannot find package 'openai'")) : Promise.resolve({ ok: true });
      },
      (module) => module,
      'openaiProvider needs the `openai` package',
    );
    // The eager load fails unobserved: the no-crash guard fails this test if that rejection escapes.
    await expect(getClient()).rejects.toMatchObject({
      name: 'ProviderError',
      code: 'unknown',
      retryable: false,
      message: 'openaiProvider needs the `openai` package',
    });
    expect(loads).toBe(1);
    await expect(getClient()).rejects.toMatchObject({ code: 'unknown' });
    expect(loads).toBe(2);
    await expect(getClient()).resolves.toEqual({ ok: true });
    expect(loads).toBe(3);
  });

  it('a client that cannot be created (no API key) is not cached either', async () => {
    let attempts = 0;
    const getClient = lazySdkClient(
      async () => ({}),
      () => {
        attempts++;
        if (attempts === 1) throw new Error('missing API key');
        return { ready: true };
      },
      'needs the sdk',
    );
    await expect(getClient()).rejects.toThrow('missing API key');
    await expect(getClient()).resolves.toEqual({ ready: true });
  });
});
