import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool, type Tool } from '../tools/define-tool.js';
import { calculate } from './calculate.js';
import { convertUnits, knownUnits } from './convert-units.js';

/** Rounds away floating-point noise (0.1 + 0.2) without hiding real digits. */
const tidy = (value: number) => Number.parseFloat(value.toPrecision(12));

/** `calculator`: evaluates an arithmetic expression exactly as written (no `eval`). */
export const calculatorTool = defineTool({
  name: 'calculator',
  description: 'Evaluate an arithmetic expression: numbers, + - * / % ^, parentheses, sqrt abs round floor ceil.',
  parameters: {
    type: 'object',
    properties: { expression: { type: 'string', description: 'e.g. 17*23' } },
    required: ['expression'],
    additionalProperties: false,
  },
  idempotent: true,
  execute: ({ expression }) => String(tidy(calculate(String(expression)))),
});

/** `clock`: the current date and time, in a time zone. */
export const clockTool = defineTool({
  name: 'clock',
  description: 'The current date and time, optionally in an IANA time zone such as Europe/Oslo.',
  parameters: {
    type: 'object',
    properties: { timeZone: { type: 'string', description: 'IANA time zone; default UTC' } },
    additionalProperties: false,
  },
  idempotent: true,
  execute: ({ timeZone }) => {
    const zone = typeof timeZone === 'string' && timeZone !== '' ? timeZone : 'UTC';
    const now = new Date();
    const local = new Intl.DateTimeFormat('en-GB', { dateStyle: 'full', timeStyle: 'long', timeZone: zone }).format(now);
    return JSON.stringify({ timeZone: zone, local, iso: now.toISOString() });
  },
});

/** `convert_units`: converts a value between units of length, mass, volume, time or temperature. */
export const convertUnitsTool = defineTool({
  name: 'convert_units',
  description: `Convert a value between units of one kind (length, mass, volume, time, temperature). Units: ${knownUnits.join(', ')} (and their names).`,
  parameters: {
    type: 'object',
    properties: { value: { type: 'number' }, from: { type: 'string' }, to: { type: 'string' } },
    required: ['value', 'from', 'to'],
    additionalProperties: false,
  },
  idempotent: true,
  execute: ({ value, from, to }) => `${value} ${from} = ${tidy(convertUnits(Number(value), String(from), String(to)))} ${to}`,
});

/** The longest `wait`, under the machine's default tool timeout (60 s). */
export const maxWaitSeconds = 30;

/**
 * `wait`: waits a number of seconds — a tool that takes its time, to see Ctrl-C cancel a running
 * tool, or a killed run shown `interrupted` and then resumed or cancelled (docs/cli.md).
 */
export const waitTool = defineTool({
  name: 'wait',
  description: `Wait a number of seconds (at most ${maxWaitSeconds}) before going on, e.g. before trying again.`,
  parameters: {
    type: 'object',
    properties: { seconds: { type: 'number', minimum: 0, maximum: maxWaitSeconds } },
    required: ['seconds'],
    additionalProperties: false,
  },
  idempotent: true,
  execute: async ({ seconds }, { signal }) => {
    await sleep(Number(seconds) * 1000, undefined, { signal });
    return `waited ${seconds} seconds`;
  },
});

/** The tools `actorloop run` offers the model. */
export const demoTools: Array<Tool<never, unknown>> = [calculatorTool, clockTool, convertUnitsTool, waitTool] as Array<
  Tool<never, unknown>
>;
