import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createConversationMachine, type ConversationOptions, handlerProvider, InvalidOptionsError } from '../src/index.js';
import { closestName, option, resolveOptionsWith } from '../src/util/option-schema.js';
import { scriptedModel } from './support/scripted-model.js';

function problemOf(run: () => unknown): { option: string; message: string } {
  try {
    run();
  } catch (error) {
    if (InvalidOptionsError.isInstance(error)) return { option: error.option, message: error.message };
    throw error;
  }
  throw new Error('expected an InvalidOptionsError');
}

describe('option schemas', () => {
  const viewer = option.object({
    port: option.withDefault(option.integer({ minimum: 0, maximum: 65_535 }), 0),
    title: option.optional(option.string()),
    retry: option.absentAs(option.orFalse(option.object({ times: option.withDefault(option.integer({ minimum: 0 }), 2) })), {}),
    tags: option.withDefault(option.array(option.string({ nonEmpty: true })), []),
    limits: option.optional(option.record(option.number({ minimum: 0 }))),
    mode: option.withDefault(option.choice(['full', 'normal']), 'full'),
    apiKey: option.optional(option.secret(option.string({ nonEmpty: true }))),
  });

  it('applies defaults and keeps what is given', () => {
    expect(resolveOptionsWith(viewer, {})).toEqual({
      port: 0,
      title: undefined,
      retry: { times: 2 },
      tags: [],
      limits: undefined,
      mode: 'full',
      apiKey: undefined,
    });
    expect(resolveOptionsWith(viewer, { port: 8080, retry: false, tags: ['a'], limits: { x: 1 }, mode: 'normal' })).toMatchObject({
      port: 8080,
      retry: false,
      tags: ['a'],
      limits: { x: 1 },
      mode: 'normal',
    });
  });

  it.each([
    [{ port: 70_000 }, 'port', 'Invalid option port: expected an integer from 0 to 65535, got 70000'],
    [{ port: '80' }, 'port', 'Invalid option port: expected an integer from 0 to 65535, got "80"'],
    [{ title: 3 }, 'title', 'Invalid option title: expected a string, got 3'],
    [
      { retry: { times: -1 } },
      'retry.times',
      'Invalid option retry.times: expected an integer ≥ -9007199254740991'.replace('-9007199254740991', '0'),
    ],
    [{ retry: 'yes' }, 'retry', 'Invalid option retry: expected an object { times } or false, got "yes"'],
    [{ tags: ['a', ''] }, 'tags[1]', 'Invalid option tags[1]: expected a non-empty string, got ""'],
    [{ tags: 'a' }, 'tags', 'Invalid option tags: expected an array of a non-empty string, got "a"'],
    [{ limits: { x: -1 } }, 'limits.x', 'Invalid option limits.x: expected a number ≥ 0, got -1'],
    [{ mode: 'fast' }, 'mode', 'Invalid option mode: expected "full" or "normal", got "fast"'],
    [
      { titel: 'x' },
      'titel',
      'Invalid option titel: expected a known option (port, title, retry, tags, limits, mode, apiKey), not an unknown one; did you mean title?',
    ],
    [null, 'options', 'Invalid option options: expected an object { port, title, retry, tags, limits, mode, apiKey }, got null'],
  ])('names the option, what was expected and what it got: %j', (value, path, message) => {
    const problem = problemOf(() => resolveOptionsWith(viewer, value));
    expect(problem.option).toBe(path);
    expect(problem.message.startsWith(message)).toBe(true);
  });

  it('never echoes a secret', () => {
    const problem = problemOf(() => resolveOptionsWith(viewer, { apiKey: 'sk-live-123456'.slice(0, 0) }));
    expect(problem).toEqual({ option: 'apiKey', message: 'Invalid option apiKey: expected a non-empty string' });
    expect(problemOf(() => resolveOptionsWith(viewer, { apiKey: 42 })).message).not.toContain('42');
  });

  it('ignores undeclared keys only when told to, and skips keys set to undefined', () => {
    const loose = option.object({ a: option.optional(option.string()) }, { unknownKeys: 'ignore' });
    expect(resolveOptionsWith(loose, { a: 'x', extra: 1 })).toEqual({ a: 'x' });
    expect(resolveOptionsWith(viewer, { extra: undefined })).toMatchObject({ port: 0 });
  });

  it('names the label of a whole object and nested paths under a prefix', () => {
    const provider = option.object({ model: option.string({ nonEmpty: true }) }, { label: 'openaiProvider(options)' });
    expect(problemOf(() => resolveOptionsWith(provider, 'gpt', 'openaiProvider')).option).toBe('openaiProvider(options)');
    expect(problemOf(() => resolveOptionsWith(provider, { model: '' }, 'openaiProvider')).option).toBe('openaiProvider.model');
  });

  it('suggests the closest known name for a typo, and none for a stranger', () => {
    expect(closestName('maxIterations', ['maxToolIterations', 'maxConcurrentTools'])).toBe('maxToolIterations');
    expect(closestName('provder', ['provider', 'prices'])).toBe('provider');
    expect(closestName('banana', ['provider', 'prices'])).toBeUndefined();
  });
});

describe('createConversationMachine options, fuzzed', () => {
  const provider = handlerProvider(scriptedModel([]).handler);
  const anyValue = fc.oneof(
    fc.constant(undefined),
    fc.constant(null),
    fc.boolean(),
    fc.integer({ min: -5, max: 300_000 }),
    fc.double(),
    fc.string({ maxLength: 4 }),
    fc.array(fc.integer(), { maxLength: 2 }),
    fc.dictionary(
      fc.constantFrom('maxRetries', 'threshold', 'initialDelayMs', 'maxDelayMs', 'jitter', 'x'),
      fc.oneof(fc.integer({ min: -2, max: 40_000 }), fc.boolean()),
      {
        maxKeys: 3,
      },
    ),
  );
  const key = fc.constantFrom(
    'maxToolIterations',
    'maxConcurrentTools',
    'retry',
    'doomLoop',
    'toolTimeoutMs',
    'requestTimeoutMs',
    'maxToolResultBytes',
    'maxToolArgsBytes',
    'middleware',
    'prices',
    'system',
    'tools',
    'output',
    'maxIterations',
  );

  it('either builds a machine or throws an InvalidOptionsError naming a key it was given', () => {
    fc.assert(
      fc.property(fc.dictionary(key, anyValue, { maxKeys: 4 }), (extra) => {
        try {
          createConversationMachine({ provider, ...extra } as ConversationOptions);
        } catch (error) {
          if (!InvalidOptionsError.isInstance(error)) throw error;
          const root = error.option.split(/[.[]/)[0] as string;
          expect(Object.keys(extra)).toContain(root);
          expect(error.message).toMatch(/^Invalid option \S+: expected /);
        }
      }),
      { numRuns: 400 },
    );
  });
});
