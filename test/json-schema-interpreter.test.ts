/**
 * The JSON Schema interpreter (src/tools/json-schema-interpreter.ts) against ajv, which it stands in
 * for where code generation is refused (Cloudflare workerd). Both engines go through the same entry
 * points — `compileJsonSchema` (ajv's raw `ErrorObject`s: keyword, instancePath, schemaPath, params,
 * message, in order) and `compileSchema` (the messages the model reads) — and must agree exactly:
 *
 * - on random schemas over every keyword the draft-07 `Ajv` class and ajv-formats evaluate (nested,
 *   with `$ref`s to definitions, `$defs`, `$id`s and anchors, formats, boolean schemas, and the odd
 *   invalid value the meta-schema or the compiler refuses), each with values aimed at it (many valid)
 *   and near misses;
 * - on the real schemas of this repository's tests and examples, the MCP test servers' tool schemas
 *   as the MCP SDK lists them, and the draft-07 meta-schema itself;
 * - on the schemas ajv refuses, with the same message;
 * - on ajv's own quirks (its generated code's `var`s, short-circuits and lookups), each pinned by an
 *   example, so a change of ajv's shows here by name;
 * - with `Function` and `eval` unusable, where the interpreter still runs and `auto` chooses it.
 *
 * `JSON_SCHEMA_SEED=<n>` replays another sample, `JSON_SCHEMA_RUNS=<n>` changes its size (schemas,
 * ten values each), `JSON_SCHEMA_NO_SHRINK=1` reports a failure as drawn.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { Ajv } from 'ajv';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { draft07MetaSchema } from '../src/tools/json-schema/draft-07-meta-schema.js';
import {
  compileJsonSchema,
  compileSchema,
  type JSONSchema,
  type SchemaEngine,
  schemaEngine,
  setSchemaEngine,
} from '../src/tools/validate.js';

const seed = Number(process.env.JSON_SCHEMA_SEED ?? 20_261_210);
const runs = Number(process.env.JSON_SCHEMA_RUNS ?? 1200);
const valuesPerSchema = 10;

afterEach(() => setSchemaEngine('auto'));

type Outcome = { refused: string } | { results: unknown[] };

// structuredClone keeps an own `__proto__` key an own key, as JSON.parse makes it.
function clone<T>(value: T): T {
  return structuredClone(value);
}

/** ajv's raw errors for each value, or the compile error, from one engine. */
function rawOutcome(engine: SchemaEngine, schema: unknown, values: readonly unknown[]): Outcome {
  let check: (data: unknown) => unknown;
  try {
    check = compileJsonSchema(clone(schema) as JSONSchema, engine);
  } catch (error) {
    return { refused: (error as Error).message };
  }
  return { results: values.map((value) => outcomeOf(() => check(value))) };
}

// A schema that recurses without consuming data overflows the stack in both engines: that is an answer too.
function outcomeOf(validate: () => unknown): unknown {
  try {
    return validate();
  } catch (error) {
    return { threw: (error as Error).message };
  }
}

/** What compileSchema makes of the schema and values with one engine: the model's messages. */
function messageOutcome(engine: SchemaEngine, schema: unknown, values: readonly unknown[]): Outcome {
  setSchemaEngine(engine);
  try {
    const compiled = compileSchema(clone(schema), 'tools[0].parameters');
    return { results: values.map((value) => outcomeOf(() => compiled.validate(value))) };
  } catch (error) {
    return { refused: (error as Error).message };
  } finally {
    setSchemaEngine('auto');
  }
}

// JSON text compares exactly: key order of every error object, `-0` as ajv's own output shows it.
function expectSameOutcome(schema: unknown, values: readonly unknown[]): { raw: Outcome; messages: Outcome } {
  const raw = rawOutcome('ajv', schema, values);
  const messages = messageOutcome('ajv', schema, values);
  const context = `schema ${JSON.stringify(schema)}\nvalues ${JSON.stringify(values)}`;
  expect(JSON.stringify(rawOutcome('interpreter', schema, values)), `raw errors — ${context}`).toBe(JSON.stringify(raw));
  expect(JSON.stringify(messageOutcome('interpreter', schema, values)), `messages — ${context}`).toBe(JSON.stringify(messages));
  return { raw, messages };
}

// ————— the draw —————

// Without bias: fast-check's default leans to small numbers, which would skew every probability below.
const unbiasedNat = (max: number) => fc.noBias(fc.nat({ max }));

/** Choices drawn through fast-check (so a failing case shrinks), in the terms the generators need. */
class Draw {
  constructor(private readonly g: fc.GeneratorValue) {}
  /** 0 … max. */
  int(max: number): number {
    return max <= 0 ? 0 : this.g(unbiasedNat, max);
  }
  chance(probability: number): boolean {
    return this.int(999) < probability * 1000;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length - 1)] as T;
  }
  /** Some of the items, in their order. */
  some<T>(items: readonly T[], probability = 0.5): T[] {
    return items.filter(() => this.chance(probability));
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type SchemaMap = { [keyword: string]: unknown };

const propertyNames = ['a', 'b', 'c', 'a/b', '~t', 'constructor', '__proto__', ''];
const patterns = ['^a', 'b$', '^[a-c]+$', '\\d', '^\\p{L}+$', '^(a|b)$', '~', '/'];
const badPatterns = ['(', '[a-', '\\p{Nope}'];
const strings = ['a', 'b', 'c', 'ab', 'abc', 'ba', 'aaaa', '', '1', 'a1', 'é', 'ß', '😀', '😀😀', 'a/b', '~t', 'constructor', 'x'];
const numbers = [-2, -1, -0.5, 0, 0.1, 0.3, 0.5, 0.7, 1, 1.5, 2, 3, 4, 10, 2 ** 31, 2 ** 31 - 1, 1e21];
const literals: Json[] = [null, true, false, 0, 1, 2, 0.5, 'a', 'b', '', [], [1], ['a', 1], {}, { a: 1 }, { a: 1, b: [2] }];
const types = ['string', 'number', 'integer', 'boolean', 'null', 'object', 'array'];
const formatNames = [...Object.keys(fullFormats), 'x-unknown-format'];
const formatSamples: Record<string, Json[]> = {
  date: ['2020-01-01', '2020-02-30', '2024-02-29', '2021-02-29', '2020-13-01', '20200101'],
  time: ['12:00:00Z', '23:59:60Z', '12:00:00', '25:00:00Z', '12:00:00+01:00', '11:59:59.5z'],
  'date-time': ['2020-01-01T12:00:00Z', '2020-01-01 12:00:00Z', '2020-01-01T12:00:00', '2019-12-31T23:00:00-02:00', 'x'],
  'iso-time': ['12:00:00', '12:00:00Z', '1200', '09:30:00+01:00'],
  'iso-date-time': ['2020-01-01T12:00:00', '2020-01-01', '2020-01-02T00:00:00Z'],
  duration: ['P1D', 'PT1H', 'P', 'P1DT', 'P2W'],
  uri: ['http://example.com/a?b#c', 'example', 'urn:isbn:123', 'http://x y'],
  'uri-reference': ['/a/b', 'http://x y', '#frag', ''],
  'uri-template': ['/a/{b}', '/a/{b', 'http://x/{+y}'],
  url: ['http://example.com', 'ftp://x.org/y', 'nope'],
  email: ['a@example.com', 'a@b', 'not an email'],
  hostname: ['example.com', '-bad-.com', 'a'.repeat(64)],
  ipv4: ['127.0.0.1', '256.0.0.1'],
  ipv6: ['::1', ':::'],
  regex: ['^a$', '(', 'a\\Z'],
  uuid: ['123e4567-e89b-12d3-a456-426614174000', '123e4567'],
  'json-pointer': ['/a/b', 'a', '/a~2'],
  'json-pointer-uri-fragment': ['#/a', '/a'],
  'relative-json-pointer': ['0/a', '1#', '/a'],
  byte: ['aGVsbG8=', 'abc'],
  int32: [1, 2 ** 31, 2 ** 31 - 1, 1.5, -(2 ** 31)],
  int64: [1, 1.5, 2 ** 53],
  float: [1.5],
  double: [2],
};
const comparableFormats: Record<string, string[]> = {
  date: ['2020-01-01', '2021-06-15'],
  time: ['12:00:00Z', '06:00:00+01:00'],
  'date-time': ['2020-01-01T12:00:00Z', '2020-01-01T00:00:00+05:00'],
  'iso-time': ['12:00:00', '12:00:00Z'],
  'iso-date-time': ['2020-01-01T12:00:00', '2020-01-01'],
};

/** Where a subschema sits, for `$ref`s that cannot loop forever without consuming data. */
type Place = {
  /** Below a keyword that moves into the data (`properties`, `items`, …): any `$ref` is safe. */
  consumed: boolean;
  /** `$ref`s to definitions drawn before this one: safe anywhere. */
  earlier: string[];
  /** Every `$ref` form the schema offers. */
  all: string[];
  /** Numbers the `$id`s of nested schemas, which must differ. */
  ids: { next: number };
};

function drawLiteral(draw: Draw): Json {
  return clone(draw.pick(literals));
}

function drawSchema(draw: Draw, depth: number, place: Place): unknown {
  if (draw.chance(0.06)) return draw.chance(0.6);
  const schema: SchemaMap = {};
  const count = draw.int(depth > 0 ? 2 : 1) + (draw.chance(0.4) ? 1 : 0);
  for (let index = 0; index < count; index++) drawKeyword(draw, depth, place, schema);
  if (draw.chance(0.45)) schema.type = draw.pick(types);
  // An `$id` in the middle moves the base of the `$ref`s below it (a relative one then misses).
  if (draw.chance(0.03))
    schema.$id = draw.chance(0.5) ? `sub/n${place.ids.next++}.json` : `http://example.com/sub/n${place.ids.next++}.json`;
  return schema;
}

function below(place: Place): Place {
  return { ...place, consumed: true };
}

function drawSchemas(draw: Draw, depth: number, place: Place, max = 3): unknown[] {
  return Array.from({ length: 1 + draw.int(max - 1) }, () => drawSchema(draw, depth - 1, place));
}

function drawRef(draw: Draw, place: Place): string | undefined {
  if (draw.chance(0.01)) return draw.pick(['#/definitions/missing', 'missing.json', '#/$defs/missing', 'http://example.com/other.json#']);
  const safe = place.consumed ? place.all : place.earlier;
  return safe.length === 0 ? undefined : draw.pick(safe);
}

function drawKeyword(draw: Draw, depth: number, place: Place, schema: SchemaMap): void {
  const rare = draw.chance(0.004);
  const sub = (): unknown => drawSchema(draw, depth - 1, place);
  const consumed = (): unknown => drawSchema(draw, depth - 1, below(place));
  const keyword = draw.pick([
    'type',
    'type',
    'nullable',
    'const',
    'enum',
    'enum',
    'bound',
    'bound',
    'multipleOf',
    'length',
    'length',
    'pattern',
    'format',
    'format',
    'formatRange',
    'items',
    'items',
    'additionalItems',
    'contains',
    'itemCount',
    'uniqueItems',
    'uniqueItems',
    'properties',
    'properties',
    'properties',
    'patternProperties',
    'additionalProperties',
    'additionalProperties',
    'required',
    'required',
    'dependencies',
    'propertyNames',
    'propertyCount',
    'allOf',
    'anyOf',
    'anyOf',
    'oneOf',
    'oneOf',
    'not',
    'if',
    'if',
    '$ref',
    '$ref',
    '$ref',
    'noise',
    'id',
  ]);
  switch (keyword) {
    case 'type':
      schema.type = rare
        ? draw.pick<unknown>(['nonsense', [], ['string', 'string'], 7])
        : draw.chance(0.7)
          ? draw.pick(types)
          : draw.some(types, 0.3).slice(0, 3);
      if (Array.isArray(schema.type) && schema.type.length === 0 && !rare) schema.type = 'string';
      break;
    case 'nullable':
      schema.nullable = rare ? 'yes' : draw.chance(0.85);
      if (!rare) schema.type = draw.chance(0.7) ? draw.pick(types) : draw.some(types, 0.3).slice(0, 2);
      break;
    case 'const':
      schema.const = drawLiteral(draw);
      break;
    case 'enum':
      schema.enum = rare ? draw.pick<Json[]>([[], [1, 1]]) : [...new Set(Array.from({ length: 1 + draw.int(2) }, () => drawLiteral(draw)))];
      break;
    case 'bound':
      schema[draw.pick(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'])] = rare ? '1' : draw.pick([-1, 0, 0.5, 1, 2, 3, 10]);
      break;
    case 'multipleOf':
      schema.multipleOf = rare ? draw.pick([0, -1]) : draw.pick([0.5, 1, 2, 3, 0.1, 0.01]);
      break;
    case 'length':
      schema[draw.pick(['minLength', 'maxLength'])] = rare ? draw.pick([-1, 1.5]) : draw.int(4);
      break;
    case 'pattern':
      schema.pattern = rare ? draw.pick(badPatterns) : draw.pick(patterns);
      break;
    case 'format':
      schema.format = draw.pick(formatNames);
      break;
    case 'formatRange': {
      const format = rare ? draw.pick(['email', 'int32', 'x-unknown-format']) : draw.pick(Object.keys(comparableFormats));
      if (!draw.chance(0.03)) schema.format = format;
      const limits = comparableFormats[format] ?? ['2020-01-01'];
      schema[draw.pick(['formatMinimum', 'formatMaximum', 'formatExclusiveMinimum', 'formatExclusiveMaximum'])] = draw.pick(limits);
      break;
    }
    case 'items':
      schema.items = draw.chance(0.65) ? consumed() : rare ? [] : drawSchemas(draw, depth, below(place));
      break;
    case 'additionalItems':
      schema.additionalItems = draw.chance(0.4) ? draw.chance(0.7) === false : consumed();
      if (draw.chance(0.7) && !Array.isArray(schema.items)) schema.items = drawSchemas(draw, depth, below(place), 2);
      break;
    case 'contains':
      schema.contains = consumed();
      break;
    case 'itemCount':
      schema[draw.pick(['minItems', 'maxItems'])] = rare ? -1 : draw.int(3);
      break;
    case 'uniqueItems':
      schema.uniqueItems = draw.chance(0.85);
      if (draw.chance(0.5))
        schema.items = draw.chance(0.8) ? { type: draw.chance(0.5) ? draw.pick(types) : draw.some(types, 0.4) } : consumed();
      break;
    case 'properties':
      schema.properties = Object.fromEntries(draw.some(propertyNames, 0.3).map((name) => [name, consumed()]));
      break;
    case 'patternProperties':
      schema.patternProperties = Object.fromEntries(
        draw.some(rare ? [...patterns, ...badPatterns] : patterns, 0.25).map((pattern) => [pattern, consumed()]),
      );
      break;
    case 'additionalProperties':
      schema.additionalProperties = draw.chance(0.5) ? false : draw.chance(0.2) ? true : consumed();
      if (draw.chance(0.5)) schema.properties = Object.fromEntries(draw.some(propertyNames, 0.3).map((name) => [name, consumed()]));
      // More than 8 names: ajv tests them with hasOwnProperty, which sees an own `__proto__`.
      if (draw.chance(0.15)) schema.properties = Object.fromEntries([...strings, '__proto__'].map((name) => [name, true]));
      if (draw.chance(0.25))
        schema.patternProperties = Object.fromEntries(draw.some(patterns, 0.3).map((pattern) => [pattern, consumed()]));
      break;
    case 'required':
      schema.required = rare ? draw.pick<unknown>(['a', ['a', 'a']]) : draw.some(propertyNames, 0.3);
      break;
    case 'dependencies':
      schema.dependencies = Object.fromEntries(
        draw.some(propertyNames, 0.25).map((name) => [name, draw.chance(0.6) ? draw.some(propertyNames, 0.3) : sub()]),
      );
      break;
    case 'propertyNames':
      schema.propertyNames = draw.chance(0.6)
        ? draw.pick<unknown>([{ maxLength: 1 }, { pattern: '^[a-c]' }, { enum: ['a', 'b'] }, false, { not: { const: 'constructor' } }])
        : consumed();
      break;
    case 'propertyCount':
      schema[draw.pick(['minProperties', 'maxProperties'])] = draw.int(3);
      break;
    case 'allOf':
    case 'anyOf':
    case 'oneOf':
      schema[keyword] = rare ? [] : drawSchemas(draw, depth, place);
      break;
    case 'not':
      schema.not = sub();
      break;
    case 'if':
      schema.if = sub();
      // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword
      if (draw.chance(0.75)) schema.then = sub();
      if (draw.chance(0.6)) schema.else = sub();
      if (draw.chance(0.05)) delete schema.if;
      break;
    case '$ref': {
      const ref = drawRef(draw, place);
      if (ref !== undefined) schema.$ref = ref;
      break;
    }
    case 'noise': {
      // Keywords ajv does not evaluate; the meta-schema still checks the annotations' types.
      const noise = draw.pick(['$comment', 'title', 'description', 'examples', 'default', 'x-extra']);
      if (noise === 'examples') schema.examples = [{ $ref: '#/nowhere' }];
      else if (noise === 'default' || noise === 'x-extra')
        schema[noise] = rare ? { $id: 'http://example.com/x-extra.json' } : { $ref: '#/nowhere', type: 'nonsense' };
      else schema[noise] = rare ? 7 : 'note';
      break;
    }
    case 'id':
      if (rare) schema.id = 'x';
      else schema.$comment = 'no id';
      break;
  }
}

const definitionNames = ['d0', 'd1', 'a b', 'x/y', 't~z'];

function pointerSegment(name: string): string {
  return encodeURIComponent(name.replace(/~/g, '~0').replace(/\//g, '~1'));
}

/** A root schema: definitions first (each may refer to earlier ones), then the root's keywords. */
function drawRootSchema(draw: Draw): SchemaMap {
  const rootId = draw.chance(0.15) ? 'http://example.com/root.json' : undefined;
  // A pointer into the middle of a schema can close a loop that consumes no data (a stack overflow in
  // both engines, compared as such): rare.
  const consumedRefs = [
    '#',
    ...(draw.chance(0.1) ? [draw.pick(['#/properties/a', '#/properties/b', '#/definitions/d0/properties/a', '#/items'])] : []),
  ];
  // ajv holds the draft-07 meta-schema under its URI (and an alias): a schema may refer to it.
  const metaSchemaRefs = draw.chance(0.05)
    ? [
        draw.pick([
          'http://json-schema.org/draft-07/schema#',
          'http://json-schema.org/schema#',
          'http://json-schema.org/draft-07/schema#/definitions/stringArray',
        ]),
      ]
    : [];
  const earlier: string[] = [...metaSchemaRefs];
  const all: string[] = [...consumedRefs, ...metaSchemaRefs];
  const definitions: [string, unknown][] = [];
  const ids = { next: 0 };
  for (const name of draw.some(definitionNames, 0.35).slice(0, 3)) {
    const index = definitions.length;
    const schema = drawSchema(draw, 1, { consumed: false, earlier: [...earlier], all, ids });
    const forms = [`#/definitions/${pointerSegment(name)}`];
    if (rootId) forms.push(`${rootId}#/definitions/${pointerSegment(name)}`);
    if (name === 'a b' && draw.chance(0.3)) forms.push('#/definitions/a b');
    if (typeof schema === 'object' && schema !== null && draw.chance(0.2)) {
      const id = draw.chance(0.6) ? `d${index}.json` : `#anchor${index}`;
      (schema as SchemaMap).$id = id;
      forms.push(id);
      if (rootId && !id.startsWith('#')) forms.push(`http://example.com/${id}`);
    }
    definitions.push([name, schema]);
    earlier.push(...forms);
    all.push(...forms);
  }
  let defs: unknown;
  if (draw.chance(0.12)) {
    defs = { e0: drawSchema(draw, 1, { consumed: false, earlier: [], all, ids }) };
    earlier.push('#/$defs/e0');
    all.push('#/$defs/e0');
  }
  const root = drawSchema(draw, 2, { consumed: false, earlier, all, ids });
  const schema: SchemaMap = typeof root === 'object' && root !== null ? (root as SchemaMap) : {};
  if (draw.chance(0.88)) schema.type = 'object';
  if (definitions.length > 0) schema.definitions = Object.fromEntries(definitions);
  if (defs) schema.$defs = defs;
  if (rootId) schema.$id = rootId;
  if (draw.chance(0.01)) schema.$schema = draw.pick(['http://json-schema.org/draft-07/schema#', 'http://json-schema.org/draft-04/schema#']);
  return schema;
}

// ————— values aimed at a schema, and near misses —————

function randomValue(draw: Draw, depth: number): Json {
  const kind = draw.int(depth > 0 ? 6 : 4);
  switch (kind) {
    case 0:
      return draw.pick<Json>([null, true, false]);
    case 1:
    case 2:
      return draw.pick(numbers);
    case 3:
    case 4:
      return draw.pick(strings);
    case 5:
      return Array.from({ length: draw.int(3) }, () => randomValue(draw, depth - 1));
    default:
      return Object.fromEntries(draw.some(propertyNames, 0.3).map((name) => [name, randomValue(draw, depth - 1)]));
  }
}

function isMap(value: unknown): value is SchemaMap {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Follows the `$ref`s the draw makes, well enough to aim values (a miss only makes a random value). */
function resolveLocal(root: SchemaMap, ref: string): unknown {
  if (ref === '#') return root;
  const local = ref.replace('http://example.com/root.json', '');
  if (local.startsWith('#/')) {
    let target: unknown = root;
    for (const part of local.slice(2).split('/')) {
      if (!isMap(target)) return undefined;
      target = target[decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return target;
  }
  const id = ref.replace('http://example.com/', '');
  return Object.values(isMap(root.definitions) ? root.definitions : {}).find((schema) => isMap(schema) && schema.$id === id);
}

function chooseType(draw: Draw, schema: SchemaMap): string {
  if (typeof schema.type === 'string' && draw.chance(0.9)) return schema.type;
  if (Array.isArray(schema.type) && schema.type.length > 0 && draw.chance(0.9)) return String(draw.pick(schema.type));
  const has = (...keywords: string[]) => keywords.some((keyword) => schema[keyword] !== undefined);
  if (
    has(
      'properties',
      'required',
      'additionalProperties',
      'patternProperties',
      'propertyNames',
      'dependencies',
      'minProperties',
      'maxProperties',
    )
  )
    return 'object';
  if (has('items', 'contains', 'minItems', 'maxItems', 'uniqueItems', 'additionalItems')) return 'array';
  if (has('minLength', 'maxLength', 'pattern', 'format', 'formatMinimum', 'formatMaximum')) return 'string';
  if (has('minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf')) return 'number';
  return draw.pick(types);
}

function aimedValue(draw: Draw, schema: unknown, depth: number, root: SchemaMap): Json {
  if (depth <= 0 || draw.chance(0.06) || !isMap(schema)) return randomValue(draw, Math.min(depth, 2));
  if (typeof schema.$ref === 'string' && draw.chance(0.75)) {
    const target = resolveLocal(root, schema.$ref);
    if (target !== undefined) return aimedValue(draw, target, depth - 1, root);
  }
  if (schema.const !== undefined && draw.chance(0.6)) return clone(schema.const as Json);
  if (Array.isArray(schema.enum) && schema.enum.length > 0 && draw.chance(0.6)) return clone(draw.pick(schema.enum) as Json);
  for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
    const branches = schema[keyword];
    if (Array.isArray(branches) && branches.length > 0 && draw.chance(0.3)) return aimedValue(draw, draw.pick(branches), depth - 1, root);
  }
  if (schema.if !== undefined && draw.chance(0.2))
    return aimedValue(draw, draw.pick([schema.if, schema.then, schema.else]), depth - 1, root);
  const number = (integer: boolean): Json => {
    const bounds = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']
      .map((keyword) => schema[keyword])
      .filter((bound): bound is number => typeof bound === 'number');
    const near = bounds.flatMap((bound) => [bound, bound - 1, bound + 1, bound + 0.5]);
    const multiple = typeof schema.multipleOf === 'number' ? [schema.multipleOf * 3, schema.multipleOf * 7 + 0.001] : [];
    const value = draw.pick([...near, ...multiple, ...numbers]);
    return integer && draw.chance(0.8) ? Math.round(value) : value;
  };
  switch (chooseType(draw, schema)) {
    case 'object': {
      const properties = isMap(schema.properties) ? schema.properties : {};
      const patternMap = isMap(schema.patternProperties) ? schema.patternProperties : {};
      const names = new Set<string>();
      for (const name of Array.isArray(schema.required) ? schema.required : [])
        if (typeof name === 'string' && draw.chance(0.9)) names.add(name);
      for (const name of Object.keys(properties)) if (draw.chance(0.6)) names.add(name);
      if (draw.chance(0.35)) names.add(draw.pick([...propertyNames, ...strings]));
      const dependencies = isMap(schema.dependencies) ? schema.dependencies : {};
      for (const name of [...names]) {
        const needed = dependencies[name];
        if (Array.isArray(needed) && draw.chance(0.7)) for (const other of needed) names.add(String(other));
      }
      return Object.fromEntries(
        [...names].map((name) => {
          const matching = Object.keys(patternMap).find((pattern) => {
            try {
              return new RegExp(pattern, 'u').test(name);
            } catch {
              return false;
            }
          });
          const target =
            Object.hasOwn(properties, name) && name !== '__proto__'
              ? properties[name]
              : matching !== undefined
                ? patternMap[matching]
                : schema.additionalProperties;
          return [name, aimedValue(draw, target, depth - 1, root)];
        }),
      );
    }
    case 'array': {
      const tuple = Array.isArray(schema.items) ? schema.items : undefined;
      const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
      const max = typeof schema.maxItems === 'number' ? schema.maxItems : min + 3;
      const length = Math.max(0, min + draw.int(Math.max(0, max - min) + (draw.chance(0.2) ? 1 : 0)));
      const array = Array.from({ length }, (_, index) =>
        aimedValue(draw, tuple ? (index < tuple.length ? tuple[index] : schema.additionalItems) : schema.items, depth - 1, root),
      );
      if (schema.contains !== undefined && draw.chance(0.6))
        array.splice(draw.int(array.length), 0, aimedValue(draw, schema.contains, depth - 1, root));
      return array;
    }
    case 'string': {
      const samples = typeof schema.format === 'string' ? formatSamples[schema.format] : undefined;
      if (samples && draw.chance(0.85)) return draw.pick(samples);
      if (typeof schema.pattern === 'string' && draw.chance(0.7)) {
        let regExp: RegExp | undefined;
        try {
          regExp = new RegExp(schema.pattern, 'u');
        } catch {}
        const matching = strings.filter((text) => regExp?.test(text));
        if (matching.length > 0) return draw.pick(matching);
      }
      if (typeof schema.minLength === 'number' && draw.chance(0.3)) return 'é'.repeat(Math.max(0, schema.minLength));
      return draw.pick(strings);
    }
    case 'number':
      return number(false);
    case 'integer':
      return number(true);
    case 'boolean':
      return draw.chance(0.5);
    case 'null':
      return null;
    default:
      return randomValue(draw, 2);
  }
}

/** A near miss: one change somewhere in the value. */
function mutate(draw: Draw, value: Json, depth: number): Json {
  if (Array.isArray(value) && value.length > 0 && depth > 0 && draw.chance(0.5)) {
    const index = draw.int(value.length - 1);
    const copy = [...value];
    copy[index] = mutate(draw, value[index] as Json, depth - 1);
    return copy;
  }
  if (isMap(value) && Object.keys(value).length > 0 && depth > 0 && draw.chance(0.5)) {
    const name = draw.pick(Object.keys(value));
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, key === name ? mutate(draw, item as Json, depth - 1) : item]),
    ) as Json;
  }
  if (Array.isArray(value)) {
    if (value.length > 0 && draw.chance(0.4)) return [...value, clone(draw.pick(value))];
    return draw.chance(0.5) ? [...value, randomValue(draw, 1)] : value.slice(1);
  }
  if (isMap(value)) {
    const entries = Object.entries(value);
    if (entries.length > 0 && draw.chance(0.4)) return Object.fromEntries(entries.filter(() => draw.chance(0.6))) as Json;
    return Object.fromEntries([...entries, [draw.pick([...propertyNames, 'zz']), randomValue(draw, 1)]]) as Json;
  }
  if (typeof value === 'number' && draw.chance(0.6)) return value + draw.pick([-1, 1, 0.5, -0.5]);
  if (typeof value === 'string' && draw.chance(0.6)) return draw.pick([`${value}x`, value.slice(1), `é${value}`]);
  return randomValue(draw, 1);
}

function drawValues(draw: Draw, schema: SchemaMap, count: number): Json[] {
  return Array.from({ length: count }, () => {
    const value = aimedValue(draw, schema, 4, schema);
    return draw.chance(0.45) ? mutate(draw, value, 3) : value;
  });
}

// ————— the tests —————

describe('the JSON Schema interpreter answers exactly as ajv does', () => {
  it('keeps the same draft-07 meta-schema as ajv', () => {
    const path = createRequire(import.meta.url).resolve('ajv/dist/refs/json-schema-draft-07.json');
    expect(draft07MetaSchema).toEqual(JSON.parse(readFileSync(path, 'utf8')));
  });

  it(`on random schemas and values aimed at them: the same errors, messages and refusals (${runs} schemas, seed ${seed})`, () => {
    console.log(`json-schema-interpreter: seed ${seed}, ${runs} schemas — replay with JSON_SCHEMA_SEED=${seed}`);
    const tally = { refused: 0, values: 0, valid: 0, invalid: 0 };
    fc.assert(
      fc.property(fc.gen(), (g) => {
        const draw = new Draw(g);
        const schema = drawRootSchema(draw);
        const values = drawValues(draw, schema, valuesPerSchema);
        const { raw } = expectSameOutcome(schema, values);
        if ('refused' in raw) {
          tally.refused++;
          return;
        }
        tally.values += values.length;
        for (const result of raw.results) tally[result === null ? 'valid' : 'invalid']++;
      }),
      // Shrinking replays ajv's compiler many times: JSON_SCHEMA_NO_SHRINK=1 reports the first failure as drawn.
      { seed, numRuns: runs, endOnFailure: Boolean(process.env.JSON_SCHEMA_NO_SHRINK) },
    );
    console.log(
      `json-schema-interpreter: ${runs} schemas, ${tally.refused} refused; ${tally.values} values, ${tally.valid} valid, ${tally.invalid} invalid`,
    );
    // The draw reaches every side: schemas compiled and refused, values passing and failing.
    expect(tally.refused).toBeGreaterThan(runs * 0.02);
    expect(tally.refused).toBeLessThan(runs * 0.2);
    expect(tally.valid).toBeGreaterThan(tally.values * 0.25);
    expect(tally.invalid).toBeGreaterThan(tally.values * 0.25);
  });

  /** Values drawn by `draw` with the property's seed, outside a property: for schemas compiled once. */
  function sampled<T>(count: number, draw: (draw: Draw) => T): T[] {
    return fc.sample(
      fc.gen().map((g) => draw(new Draw(g))),
      { seed, numRuns: count },
    );
  }

  /** Values for a fixed schema: aimed at it and near misses; both kinds must turn up. */
  function expectSameOnDrawnValues(given: JSONSchema, extraValues: readonly unknown[] = []): void {
    // As compileSchema takes it: a `$schema` (zod's 2020-12, the MCP SDK's draft-07) is dropped.
    const { $schema: _declared, ...schema } = given;
    const values = [...sampled(100, (draw) => drawValues(draw, schema, 1)[0]), ...extraValues];
    const { raw } = expectSameOutcome(schema, values);
    if ('refused' in raw) throw new Error(`refused: ${raw.refused}`);
    expect(raw.results.filter((result) => result === null).length, 'valid values drawn').toBeGreaterThan(0);
    expect(raw.results.filter((result) => result !== null).length, 'invalid values drawn').toBeGreaterThan(0);
  }

  // The tool and answer schemas of this repository's tests and examples (their files named).
  const repositorySchemas: [string, JSONSchema, unknown[]?][] = [
    ['no arguments (many tests)', { type: 'object', properties: {} }],
    ['anything (many tests)', { type: 'object' }],
    ['nothing beside (test/tool-content.test.ts)', { type: 'object', properties: {}, additionalProperties: false }],
    [
      'add (test/conversation.test.ts, examples)',
      { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] },
    ],
    ['add, optional (test/otel.test.ts)', { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } }],
    ['lookup (test/agents.test.ts)', { type: 'object', properties: { q: { type: 'string' } } }],
    ['lookup, required (test/cross-wire.test.ts)', { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] }],
    ['n (test/property-regressions.test.ts)', { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] }],
    ['city (test/approvals)', { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }],
    [
      'weather (test/openai-network-faults.test.ts)',
      { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    ],
    [
      'item (test/conversation.test.ts)',
      { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'], additionalProperties: false },
    ],
    ['read (test/support)', { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }],
    [
      'book, formats (test/conversation.test.ts)',
      {
        type: 'object',
        properties: {
          page: { type: 'string', format: 'uri' },
          email: { type: 'string', format: 'email' },
          at: { type: 'string', format: 'date-time' },
          id: { type: 'string', format: 'uuid' },
          room: { type: 'string', format: 'x-room-code' },
        },
        required: ['page', 'email', 'at', 'id', 'room'],
      },
      [
        {
          page: 'https://example.com/a',
          email: 'ada@example.com',
          at: '2026-12-01T10:00:00Z',
          id: '123e4567-e89b-12d3-a456-426614174000',
          room: 'B-2',
        },
      ],
    ],
    [
      'add integers (test/support/runtime-app.ts)',
      {
        type: 'object',
        properties: { a: { type: 'integer' }, b: { type: 'integer', minimum: 0 } },
        required: ['a', 'b'],
        additionalProperties: false,
      },
    ],
  ];

  // The examples' zod schemas, as compileSchema's Standard Schema path converts them (examples/*.ts).
  const exampleZodSchemas: [string, z.ZodType][] = [
    ['orderId (examples/http-service/orders.ts)', z.object({ orderId: z.string().describe('The order id, like A-1') })],
    ['port (examples/fallback.ts)', z.object({ port: z.string() })],
    ['expression (examples/demo.ts)', z.object({ expression: z.string().max(200) })],
    ['folder (examples/demo.ts)', z.object({ folder: z.string().regex(/^[\w./-]+$/) })],
    ['timeZone (examples/openai.ts)', z.object({ timeZone: z.string().describe('IANA time zone name') })],
  ];

  for (const [name, schema, valid] of repositorySchemas) {
    it(`on the repository's schema: ${name}`, () => expectSameOnDrawnValues(schema, valid));
  }

  for (const [name, schema] of exampleZodSchemas) {
    it(`on an example's schema as JSON Schema: ${name}`, () => {
      const jsonSchema = z.toJSONSchema(schema, { target: 'draft-2020-12', unrepresentable: 'any' }) as JSONSchema;
      expectSameOnDrawnValues(jsonSchema, [{}, { [Object.keys(jsonSchema.properties as object)[0] as string]: 'A-1/ok' }]);
    });
  }

  it("on the MCP test servers' tool schemas, as the MCP SDK lists them (test/support/mcp-server.ts, test/mcp-options.test.ts)", async () => {
    // The same registrations as the servers', linked in memory: the SDK turns the zod shapes into what a client lists.
    const server = new McpServer({ name: 'schemas', version: '1.0.0' });
    const content = () => ({ content: [] });
    server.registerTool('add', { inputSchema: { a: z.number(), b: z.number() } }, content);
    server.registerTool('fail', { inputSchema: { why: z.string().optional() } }, content);
    server.registerTool('hang', { inputSchema: { label: z.string().optional() } }, content);
    server.registerTool('picture', { description: 'Draws a picture' }, content);
    server.registerTool('weather', { inputSchema: { city: z.string() }, outputSchema: { city: z.string(), celsius: z.number() } }, () => ({
      content: [],
      structuredContent: { city: 'Oslo', celsius: 2 },
    }));
    server.registerTool('add_tool', { inputSchema: { name: z.string() } }, content);
    server.registerTool('added', { inputSchema: { x: z.number() } }, content);
    server.registerTool('write_file', { inputSchema: { path: z.string(), text: z.string() } }, content);
    const paged = new Server({ name: 'paged', version: '1.0.0' }, { capabilities: { tools: {} } });
    const pagedTools: Tool[] = [
      { name: 'tool_00', inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } },
      { name: 'rpc_error', inputSchema: { type: 'object' } },
    ];
    paged.setRequestHandler(ListToolsRequestSchema, () => ({ tools: pagedTools }));
    const schemas: JSONSchema[] = [];
    for (const source of [server, paged]) {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await source.connect(serverSide);
      const client = new Client({ name: 'test', version: '1.0.0' });
      await client.connect(clientSide);
      const { tools } = await client.listTools();
      for (const tool of tools) {
        schemas.push(tool.inputSchema as JSONSchema);
        if (tool.outputSchema) schemas.push(tool.outputSchema as JSONSchema);
      }
      await client.close();
    }
    expect(schemas.length).toBeGreaterThanOrEqual(10);
    for (const schema of schemas) expectSameOnDrawnValues(schema);
  });

  it('on the draft-07 meta-schema itself, validating schemas good and bad', () => {
    // With its own $id it is refused by both: that id is the meta-schema ajv already holds.
    expectSameOutcome(draft07MetaSchema, [{}]);
    expect(rawOutcome('interpreter', draft07MetaSchema, [])).toEqual({
      refused: 'schema with key or id "http://json-schema.org/draft-07/schema" already exists',
    });
    const { $id: _id, ...metaSchema } = draft07MetaSchema;
    const schemas: unknown[] = [...repositorySchemas.map(([, schema]) => schema), true, 5, { type: 'nonsense' }, { minLength: -1 }];
    const values = sampled(150, (draw) => [
      drawRootSchema(draw),
      drawSchema(draw, 2, { consumed: true, earlier: [], all: ['#'], ids: { next: 0 } }),
      randomValue(draw, 3),
    ]).flat();
    const { raw } = expectSameOutcome(metaSchema, [...values, ...schemas]);
    if ('refused' in raw) throw new Error(`refused: ${raw.refused}`);
    expect(raw.results.filter((result) => result === null).length).toBeGreaterThan(100);
    expect(raw.results.filter((result) => result !== null).length).toBeGreaterThan(100);
  });

  // Schemas ajv refuses, each for one reason: the interpreter refuses them with ajv's message.
  const refusals: [string, unknown][] = [
    ['an unknown type', { type: 'object', properties: { a: { type: 'nonsense' } } }],
    ['a negative minLength', { type: 'object', properties: { a: { minLength: -1 } } }],
    ['required not a list', { type: 'object', required: 'a' }],
    ['a name required twice', { type: 'object', required: ['a', 'a'] }],
    ['an empty enum', { type: 'object', properties: { a: { enum: [] } } }],
    ['an empty anyOf', { type: 'object', anyOf: [] }],
    ['an empty tuple', { type: 'object', properties: { a: { items: [] } } }],
    ['a $ref to a missing definition', { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } }],
    ['a $ref to another document', { type: 'object', properties: { a: { $ref: 'other.json' } } }],
    ['a $ref resolved against an $id', { $id: 'http://example.com/root.json', type: 'object', properties: { a: { $ref: 'b.json' } } }],
    [
      'a $ref resolved against a subschema $id',
      {
        type: 'object',
        properties: { x: { $ref: '#/definitions/a' } },
        definitions: { a: { $id: 'http://example.com/a.json', properties: { b: { $ref: '#/definitions/c' } } }, c: { type: 'string' } },
      },
    ],
    ['nullable without type', { type: 'object', properties: { a: { nullable: true } } }],
    ['nullable false with type null', { type: 'object', properties: { a: { type: ['null', 'string'], nullable: false } } }],
    ['nullable not a boolean', { type: 'object', properties: { a: { type: 'string', nullable: 'yes' } } }],
    ['the keyword id', { type: 'object', properties: { a: { id: 'a' } } }],
    ['an invalid pattern', { type: 'object', properties: { a: { pattern: '(' } } }],
    ['an invalid Unicode pattern', { type: 'object', properties: { a: { pattern: '\\p{Nope}' } } }],
    ['an invalid patternProperties pattern', { type: 'object', patternProperties: { '[a-': { type: 'string' } } }],
    [
      'an invalid pattern met first by additionalProperties',
      { type: 'object', additionalProperties: { type: 'string' }, patternProperties: { '(': { minimum: 'x' } } },
    ],
    ['formatMinimum without format', { type: 'object', properties: { a: { formatMinimum: '2020-01-01' } } }],
    ['formatMinimum on an unordered format', { type: 'object', properties: { a: { format: 'email', formatMinimum: 'a' } } }],
    ['formatMinimum not a string', { type: 'object', properties: { a: { format: 'date', formatMinimum: 5 } } }],
    [
      'one $id on two schemas',
      {
        type: 'object',
        definitions: { a: { $id: 'http://example.com/a.json', type: 'string' }, b: { $id: 'http://example.com/a.json', type: 'number' } },
      },
    ],
    ['an invalid $anchor', { type: 'object', definitions: { a: { $anchor: '1x' } } }],
    ['a number as $id', { type: 'object', $id: 5 }],
    ['an asynchronous subschema', { type: 'object', properties: { a: { $async: true, type: 'string' } } }],
    [
      'a keyword value the meta-schema does not reach',
      { type: 'object', $defs: { a: { minimum: 'x' } }, properties: { a: { $ref: '#/$defs/a' } } },
    ],
    [
      'an empty enum the meta-schema does not reach',
      { type: 'object', $defs: { a: { enum: [] } }, properties: { a: { $ref: '#/$defs/a' } } },
    ],
    ['a malformed percent escape in a $ref', { type: 'object', properties: { a: { $ref: '#/definitions/%E0%A4%A' } }, definitions: {} }],
    ['two problems: the first one ajv meets', { type: 'object', properties: { a: { nullable: true }, b: { $ref: '#/nowhere' } } }],
  ];

  for (const [name, schema] of refusals) {
    it(`refuses what ajv refuses, with its message: ${name}`, () => {
      const { raw, messages } = expectSameOutcome(schema, [{}]);
      expect(raw).toHaveProperty('refused');
      expect(messages).toHaveProperty('refused');
    });
  }

  it('refuses $schema naming a meta-schema ajv lacks (compileSchema drops $schema: only the engine sees it)', () => {
    const schema = { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object' };
    const refused = rawOutcome('ajv', schema, []);
    expect(refused).toEqual({ refused: 'no schema with key or ref "http://json-schema.org/draft-04/schema#"' });
    expect(rawOutcome('interpreter', schema, [])).toEqual(refused);
  });

  it('refuses an asynchronous root schema with either engine: its promise would pass every call', () => {
    for (const engine of ['ajv', 'interpreter'] as const) {
      expect(messageOutcome(engine, { type: 'object', $async: true }, [])).toEqual({
        refused:
          'Invalid option tools[0].parameters: expected a JSON Schema without "$async" (actorloop validates synchronously), got true',
      });
    }
  });

  it('lets schemas with the same $id compile again, each on its own (ajv keeps no schema between compiles)', () => {
    const schema = {
      $id: 'http://example.com/tool.json',
      type: 'object',
      properties: { a: { $ref: '#/definitions/a' } },
      definitions: { a: { type: 'string' } },
    };
    for (const engine of ['ajv', 'interpreter'] as const) {
      for (let round = 0; round < 2; round++)
        expect(messageOutcome(engine, schema, [{ a: 1 }])).toEqual({ results: [{ success: false, error: 'arguments.a must be string' }] });
    }
    // Another tool cannot reach into the first one's $id.
    expect(rawOutcome('ajv', { type: 'object', properties: { b: { $ref: 'http://example.com/tool.json' } } }, [])).toEqual({
      refused: "can't resolve reference http://example.com/tool.json from id #",
    });
  });
});

describe("the interpreter keeps ajv's own quirks (each checked against ajv too)", () => {
  const manyProperties = JSON.parse(`{${[...'abcdefghi', '__proto__'].map((name) => `"${name}": {}`).join(', ')}}`);
  const quirks: [string, unknown, unknown[], (results: unknown[]) => void][] = [
    [
      '`contains` reads a `var` left by an earlier item of an enclosing loop: an empty array after a matching one passes',
      { type: 'object', properties: { lists: { items: { contains: { type: 'string' } } } } },
      [{ lists: [['a'], []] }, { lists: [[], ['a']] }],
      ([afterMatch, first]) => {
        expect(afterMatch).toBeNull();
        expect(JSON.stringify(first)).toContain('must contain at least 1 valid item(s)');
      },
    ],
    [
      'inside `not`, a tuple longer than the array skips the rest of the array keywords',
      { type: 'object', properties: { list: { not: { items: [{ type: 'string' }], contains: {} } } } },
      [{ list: [] }],
      ([empty]) => expect(JSON.stringify(empty)).toContain('must NOT be valid'),
    ],
    [
      'inside `not`, a missing property named "" is not missing',
      { type: 'object', properties: { o: { not: { required: [''] } } } },
      [{ o: { a: 1 } }],
      ([result]) => expect(JSON.stringify(result)).toContain('must NOT be valid'),
    ],
    [
      'nullable shows in the message of a `type` list, not of a single type',
      { type: 'object', properties: { list: { type: ['string'], nullable: true }, single: { type: 'string', nullable: true } } },
      [{ list: 1, single: 1 }],
      ([result]) => {
        expect(JSON.stringify(result)).toContain('must be string,null');
        expect(JSON.stringify(result)).toContain('"message":"must be string"');
      },
    ],
    [
      'an inherited name counts as present, and its value is checked',
      { type: 'object', properties: { constructor: { type: 'string' } }, required: ['toString'] },
      [{}],
      ([result]) => expect(JSON.stringify(result)).toContain('"instancePath":"/constructor"'),
    ],
    [
      'uniqueItems numbers the pair differently for scalar items and for any items',
      { type: 'object', properties: { scalar: { items: { type: 'integer' }, uniqueItems: true }, any: { uniqueItems: true } } },
      [{ scalar: [1, 2, 1], any: [1, 2, 1] }],
      ([result]) => {
        expect(JSON.stringify(result)).toContain('items ## 2 and 0 are identical');
        expect(JSON.stringify(result)).toContain('items ## 0 and 2 are identical');
      },
    ],
    [
      'oneOf stops at the second passing branch',
      { type: 'object', oneOf: [{}, { type: 'object' }, { required: [] }] },
      [{}],
      ([result]) => expect(JSON.stringify(result)).toContain('"passingSchemas":[0,1]'),
    ],
    [
      'an inlined $ref keeps its text as schemaPath, a compiled one starts over at #',
      {
        type: 'object',
        properties: { a: { $ref: '#/definitions/leaf' }, b: { $ref: '#/definitions/node' } },
        definitions: { leaf: { type: 'string' }, node: { type: 'string', properties: { n: { $ref: '#/definitions/node' } } } },
      },
      [{ a: 1, b: 1 }],
      ([result]) => {
        expect(JSON.stringify(result)).toContain('"schemaPath":"#/definitions/leaf/type"');
        expect(JSON.stringify(result)).toContain('"instancePath":"/b","schemaPath":"#/type"');
      },
    ],
    [
      'inside `not`, propertyNames on an object without properties skips the object keywords after it',
      { type: 'object', properties: { o: { not: { propertyNames: { maxLength: 1 }, properties: { constructor: { type: 'string' } } } } } },
      [{ o: {} }],
      ([result]) => expect(JSON.stringify(result)).toContain('must NOT be valid'),
    ],
    [
      'additionalProperties reads more than 8 names with hasOwnProperty, which sees an own __proto__',
      {
        type: 'object',
        properties: {
          few: { properties: { a: {} }, additionalProperties: false },
          many: { properties: manyProperties, additionalProperties: false },
        },
      },
      [JSON.parse('{"few": {"__proto__": 1}, "many": {"__proto__": 1}}')],
      ([result]) =>
        expect(JSON.stringify(result)).toBe(
          '[{"instancePath":"/few","schemaPath":"#/properties/few/additionalProperties","keyword":"additionalProperties","params":{"additionalProperty":"__proto__"},"message":"must NOT have additional properties"}]',
        ),
    ],
    [
      'an $id in a subschema is the base of the $refs below it',
      {
        $id: 'http://example.com/root.json',
        type: 'object',
        properties: { a: { $id: 'sub/a.json', properties: { b: { $ref: 'b.json' } } } },
        definitions: { b: { $id: 'http://example.com/sub/b.json', type: 'string' } },
      },
      [{ a: { b: 1 } }],
      ([result]) => expect(JSON.stringify(result)).toContain('"schemaPath":"b.json/type"'),
    ],
    [
      '`contains: {}` counts items without a loop (no stale `var`): an empty array fails even after a full one',
      { type: 'object', properties: { lists: { items: { contains: {} } } } },
      [{ lists: [[1], []] }],
      ([result]) => expect(JSON.stringify(result)).toContain('"instancePath":"/lists/1"'),
    ],
    [
      'inside `not`, a missing dependency named "" is not missing',
      { type: 'object', properties: { o: { not: { dependencies: { a: [''] } } } } },
      [{ o: { a: 1 } }],
      ([result]) => expect(JSON.stringify(result)).toContain('must NOT be valid'),
    ],
    [
      'uniqueItems over scalar items of several types: a string never equals a number',
      { type: 'object', properties: { list: { items: { type: ['string', 'number', 'null'] }, uniqueItems: true } } },
      [{ list: ['1', 1, 'null', null] }, { list: ['1', 1, '1'] }],
      ([distinct, repeated]) => {
        expect(distinct).toBeNull();
        expect(JSON.stringify(repeated)).toContain('items ## 2 and 0 are identical');
      },
    ],
    [
      'a $ref through a map with a member named $id does not take that member as a base',
      { type: 'object', properties: { $id: { type: 'string' }, a: { type: 'number' } }, additionalProperties: { $ref: '#/properties/a' } },
      [{ b: 'x' }],
      ([result]) => expect(JSON.stringify(result)).toContain('"schemaPath":"#/properties/a/type"'),
    ],
    [
      'propertyNames errors carry the name',
      { type: 'object', propertyNames: { maxLength: 1 } },
      [{ ab: 1 }],
      ([result]) => expect(JSON.stringify(result)).toContain('"propertyName":"ab"'),
    ],
    [
      'a single type with keywords of its own is reported where its group runs, after the untyped keywords',
      { type: 'object', properties: { s: { type: 'string', minLength: 1, enum: ['x'] }, t: { type: 'string', enum: ['x'] } } },
      [{ s: 5, t: 5 }],
      ([result]) => {
        const keywords = (result as { keyword: string }[]).map((error) => error.keyword);
        expect(keywords).toEqual(['enum', 'type', 'type', 'enum']);
      },
    ],
  ];

  for (const [name, schema, values, check] of quirks) {
    it(name, () => {
      const { raw } = expectSameOutcome(schema, values);
      if ('refused' in raw) throw new Error(`refused: ${raw.refused}`);
      check(raw.results);
    });
  }
});

describe('without code generation', () => {
  it('the interpreter compiles and validates with Function and eval refused, and `auto` chooses it', async () => {
    // Fresh module state: nothing compiled yet (the meta-schema included), the runtime not asked yet.
    vi.resetModules();
    const fresh = await import('../src/tools/validate.js');
    const schema = {
      type: 'object',
      properties: {
        at: { type: 'string', format: 'date-time', formatMinimum: '2020-01-01T00:00:00Z' },
        code: { type: 'string', pattern: '^[A-Z]{2}\\d+$' },
        tags: { type: 'array', items: { $ref: '#/definitions/tag' }, uniqueItems: true },
        node: { $ref: '#/definitions/node' },
      },
      required: ['at'],
      definitions: {
        tag: { enum: ['a', 'b'] },
        node: { type: 'object', properties: { next: { $ref: '#/definitions/node' } }, additionalProperties: false },
      },
    };
    const values = [
      { at: '2021-05-01T10:00:00Z', code: 'AB12', tags: ['a', 'b'], node: { next: {} } },
      { at: 'soon', code: 'x', tags: ['a', 'a', 'c'], node: { next: { x: 1 } } },
    ];
    const realFunction = globalThis.Function;
    // biome-ignore lint/security/noGlobalEval: replaced, to show nothing calls it
    const realEval = globalThis.eval;
    // A constructible function, as `new Function(…)` calls it: it fails as workerd's Function does.
    const refuse = function refuse(): never {
      throw new EvalError('Code generation from strings disallowed for this context');
    };
    let engine: SchemaEngine;
    let results: unknown[];
    let ajvCompile: unknown;
    globalThis.Function = refuse as unknown as FunctionConstructor;
    globalThis.eval = refuse as typeof eval;
    try {
      engine = fresh.schemaEngine();
      const compiled = fresh.compileSchema(clone(schema), 'tools[0].parameters');
      results = values.map((value) => compiled.validate(value));
      ajvCompile = outcomeOf(() => new Ajv({ logger: false }).compile({ type: 'string' }));
    } finally {
      globalThis.Function = realFunction;
      globalThis.eval = realEval;
    }
    // The stub bites: ajv cannot compile behind it.
    expect(ajvCompile).toEqual({ threw: 'Code generation from strings disallowed for this context' });
    expect(engine).toBe('interpreter');
    expect(results).toEqual((messageOutcome('ajv', schema, values) as { results: unknown[] }).results);
    expect(results[0]).toEqual({ success: true, value: values[0] });
  });

  it('on Node, `auto` is ajv', () => {
    setSchemaEngine('auto');
    expect(schemaEngine()).toBe('ajv');
  });
});
