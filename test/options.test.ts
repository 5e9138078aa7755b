import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createConversationMachine, defineTool, handlerProvider, InvalidOptionsError, type ConversationOptions } from '../src/index.js';
import { scriptedModel } from './support/scripted-model.js';

const provider = handlerProvider(scriptedModel([]).handler);
const tool = defineTool({ name: 'echo', parameters: z.object({ text: z.string() }), execute: ({ text }) => text });

function creationError(options: unknown): InvalidOptionsError {
  try {
    createConversationMachine(options as ConversationOptions);
  } catch (error) {
    if (InvalidOptionsError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected createConversationMachine to throw');
}

describe('createConversationMachine validates its options at creation', () => {
  const cases: Array<[string, unknown, string, RegExp]> = [
    ['negative cap', { provider, maxToolIterations: -1 }, 'maxToolIterations', /an integer ≥ 0, got -1/],
    ['fractional cap', { provider, maxToolIterations: 2.5 }, 'maxToolIterations', /an integer ≥ 0, got 2\.5/],
    ['string cap', { provider, maxToolIterations: '3' }, 'maxToolIterations', /got "3"/],
    ['missing provider', {}, 'provider', /expected a Provider/],
    ['duplicate tool names', { provider, tools: [tool, tool] }, 'tools[1].name', /not used by another tool, got "echo"/],
    ['tool without name', { provider, tools: [{ parameters: z.object({}), execute: () => 1 }] }, 'tools[0].name', /a name of 1 to 64/],
    [
      'tool with a bad name',
      { provider, tools: [{ name: 'has space', parameters: z.object({}), execute: () => 1 }] },
      'tools[0].name',
      /got "has space"/,
    ],
    ['tool without execute', { provider, tools: [{ name: 'x', parameters: z.object({}) }] }, 'tools[0].execute', /a function/],
    [
      'schema neither zod nor JSON Schema',
      { provider, tools: [{ name: 'x', parameters: 'string', execute: () => 1 }] },
      'tools[0].parameters',
      /a zod \(≥ 4.2\) or other Standard Schema, or a JSON Schema object, got "string"/,
    ],
    [
      'non-object zod schema',
      { provider, tools: [{ name: 'x', parameters: z.string(), execute: () => 1 }] },
      'tools[0].parameters',
      /an object schema \(tool arguments are a JSON object\), not a zod string schema$/,
    ],
    [
      'non-object JSON Schema',
      { provider, tools: [{ name: 'x', parameters: { type: 'string' }, execute: () => 1 }] },
      'tools[0].parameters',
      /type "object"/,
    ],
    [
      'invalid JSON Schema',
      { provider, tools: [{ name: 'x', parameters: { type: 'object', properties: { a: { type: 'nonsense' } } }, execute: () => 1 }] },
      'tools[0].parameters',
      /a valid JSON Schema/,
    ],
    ['tools not an array', { provider, tools: tool }, 'tools', /an array/],
    ['negative retries', { provider, retry: { maxRetries: -1 } }, 'retry.maxRetries', /an integer ≥ 0/],
    ['retry delays inverted', { provider, retry: { initialDelayMs: 100, maxDelayMs: 10 } }, 'retry.maxDelayMs', /≥ retry.initialDelayMs/],
    ['doom loop threshold 1', { provider, doomLoop: { threshold: 1 } }, 'doomLoop.threshold', /an integer ≥ 2/],
    ['zero concurrency', { provider, maxConcurrentTools: 0 }, 'maxConcurrentTools', /an integer ≥ 1/],
    ['zero tool timeout', { provider, toolTimeoutMs: 0 }, 'toolTimeoutMs', /milliseconds/],
    ['infinite request timeout', { provider, requestTimeoutMs: Number.POSITIVE_INFINITY }, 'requestTimeoutMs', /milliseconds/],
    [
      'tool timeout on the tool',
      { provider, tools: [{ name: 'x', parameters: z.object({}), execute: () => 1, timeoutMs: -5 }] },
      'tools[0].timeoutMs',
      /positive/,
    ],
    [
      'idempotent not a boolean',
      { provider, tools: [{ name: 'x', parameters: z.object({}), execute: () => 1, idempotent: 'yes' }] },
      'tools[0].idempotent',
      /a boolean/,
    ],
    [
      'a Standard Schema that cannot convert itself to JSON Schema',
      {
        provider,
        tools: [
          { name: 'x', parameters: { '~standard': { version: 1, vendor: 'acme', validate: () => ({ value: {} }) } }, execute: () => 1 },
        ],
      },
      'tools[0].parameters',
      /Standard JSON Schema: zod ≥ 4.2\) or a plain JSON Schema; this acme schema has no ~standard.jsonSchema/,
    ],
    ['unknown option', { provider, maxIterations: 3 }, 'maxIterations', /a known option/],
    ['system not a string', { provider, system: 42 }, 'system', /a string/],
  ];
  for (const [name, options, option, message] of cases) {
    it(`${name} → ${option}`, () => {
      const error = creationError(options);
      expect(error.name).toBe('InvalidOptionsError');
      expect(error.option).toBe(option);
      expect(error.message).toContain(`Invalid option ${option}`);
      expect(error.message).toMatch(message);
    });
  }

  it('accepts the full option set of docs/behaviour.md "Options"', () => {
    expect(() =>
      createConversationMachine({
        provider,
        tools: [tool],
        system: 'You are terse.',
        maxToolIterations: 10,
        retry: { maxRetries: 2, initialDelayMs: 500, maxDelayMs: 30_000 },
        doomLoop: { threshold: 3 },
        toolTimeoutMs: 60_000,
        requestTimeoutMs: 120_000,
        maxConcurrentTools: 4,
      }),
    ).not.toThrow();
    expect(() => createConversationMachine({ provider, retry: false, doomLoop: false })).not.toThrow();
  });

  it('defineTool validates on its own too', () => {
    expect(() => defineTool({ name: '', parameters: z.object({}), execute: () => 1 })).toThrow(/Invalid option tool\.name/);
    expect(() => handlerProvider('nope' as never)).toThrow(
      /^Invalid option handlerProvider\(handler\): expected a function \(request\) => AsyncIterable of chat.completion.chunk objects, got "nope"$/,
    );
  });
});
