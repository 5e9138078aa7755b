import { HttpProblemError } from './http-problem-error.js';
import { describeValue } from './problem.js';
import { type UserContent, userContentProblem } from '../model/user-content.js';

/** A JSON Schema (2020-12, as OpenAPI 3.1 takes it), as plain data. */
export type JsonSchema = { [key: string]: unknown };

/**
 * One field of a request — in its body, its query or its path: what it accepts (`read` gives the
 * value, or `undefined` when it is not one), the words a problem uses for it, and its JSON
 * Schema for the OpenAPI document. The router and the document are built from the same fields.
 *
 * @example
 * ```ts
 * const reason: RequestField<string> = fields.text('Why the run is cancelled', { maxLength: 2_000 });
 * ```
 */
export type RequestField<T> = {
  readonly expected: string;
  readonly schema: JsonSchema;
  readonly required: boolean;
  /** The field's value, or `undefined` when what came is not one. Query and path values come as strings. */
  readonly read: (value: unknown) => { value: T } | undefined;
  /** What is wrong with a value `read` refused, when the field can say more than `expected` does. */
  readonly why?: (value: unknown) => string | undefined;
};

/** The fields of a body or a query, by name. */
export type RequestFields = Record<string, RequestField<unknown>>;

/** What a set of fields reads to: required ones always there, optional ones maybe. */
export type FieldValues<Fields extends RequestFields> = {
  [Name in keyof Fields as Fields[Name] extends { required: true } ? Name : never]: FieldValue<Fields[Name]>;
} & {
  [Name in keyof Fields as Fields[Name] extends { required: true } ? never : Name]?: FieldValue<Fields[Name]>;
};
type FieldValue<F> = F extends RequestField<infer T> ? T : never;

/** Conversation ids in a path: letters, digits and `._:-`, 1 to 128 of them, not `.` or `..`. */
export const conversationIdPattern = /^(?!\.{1,2}$)[A-Za-z0-9._:-]{1,128}$/;

const mediaData = { type: 'string', minLength: 1, description: 'base64, a data: URL (data:<type>;base64,<data>) or an https: URL' };
/** One part of a user message's content, as JSON Schema (docs/rich-content.md). */
const userContentPartSchema: JsonSchema = {
  oneOf: [
    { type: 'object', properties: { type: { const: 'text' }, text: { type: 'string' } }, required: ['type', 'text'] },
    {
      type: 'object',
      properties: {
        type: { const: 'image' },
        data: mediaData,
        mediaType: { type: 'string', description: 'image/png, image/jpeg, image/gif, image/webp' },
      },
      required: ['type', 'data'],
    },
    {
      type: 'object',
      properties: {
        type: { const: 'file' },
        data: mediaData,
        mediaType: { type: 'string', description: 'application/pdf, text/plain, audio/wav, audio/mpeg, …' },
        filename: { type: 'string' },
      },
      required: ['type', 'data', 'mediaType'],
    },
  ],
};

const required = <T>(field: Omit<RequestField<T>, 'required'>): RequestField<T> & { required: true } => ({ ...field, required: true });

/**
 * The kinds of field a route takes.
 *
 * @example
 * ```ts
 * const body = { content: fields.text('What the user says'), sessionData: fields.optional(fields.json('Per-run data')) };
 * ```
 */
export const fields = {
  /** A string with something in it besides spaces, of at most `maxLength` characters. */
  text(description: string, settings: { maxLength?: number } = {}) {
    const { maxLength } = settings;
    return required<string>({
      expected: maxLength === undefined ? 'a non-empty string' : `a non-empty string of at most ${maxLength} characters`,
      schema: { type: 'string', minLength: 1, ...(maxLength === undefined ? {} : { maxLength }), description },
      read: (value) =>
        typeof value === 'string' && value.trim() !== '' && (maxLength === undefined || value.length <= maxLength) ? { value } : undefined,
    });
  },
  /**
   * What a user says: a non-empty string, or an array of text, image and file parts (media as
   * base64, a `data:` URL or an `https:` URL). The size of a part is the run's to check
   * (`maxMediaBytes`, answered as `event-rejected`); the body's is `maxBodyBytes`.
   */
  userContent(description: string) {
    const checked = (value: unknown) => userContentProblem(value, Number.POSITIVE_INFINITY);
    return required<UserContent>({
      expected: 'a non-empty string, or a non-empty array of text, image and file parts',
      schema: {
        oneOf: [
          { type: 'string', minLength: 1 },
          { type: 'array', minItems: 1, items: userContentPartSchema },
        ],
        description,
      },
      read: (value) => (checked(value) === undefined ? { value: value as UserContent } : undefined),
      why: (value) => (Array.isArray(value) ? checked(value) : undefined),
    });
  },
  /** Any JSON value. */
  json(description: string) {
    return required<unknown>({ expected: 'any JSON value', schema: { description }, read: (value) => ({ value }) });
  },
  /** A conversation id (see {@link conversationIdPattern}). */
  conversationId(description: string) {
    return required<string>({
      expected: '1 to 128 letters, digits or . _ : - (not . or ..)',
      schema: { type: 'string', pattern: conversationIdPattern.source, description },
      read: (value) => (typeof value === 'string' && conversationIdPattern.test(value) ? { value } : undefined),
    });
  },
  /** A whole number from `minimum` to `maximum`, written in decimal (a query parameter). */
  integer(description: string, settings: { minimum: number; maximum: number }) {
    const { minimum, maximum } = settings;
    return required<number>({
      expected: `an integer from ${minimum} to ${maximum}`,
      schema: { type: 'integer', minimum, maximum, description },
      read: (value) => {
        const number = typeof value === 'string' && /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
        return Number.isSafeInteger(number) && number >= minimum && number <= maximum ? { value: number } : undefined;
      },
    });
  },
  /** A whole number from `minimum` to `maximum`, as a JSON number (a body field). */
  wholeNumber(description: string, settings: { minimum: number; maximum: number }) {
    const { minimum, maximum } = settings;
    return required<number>({
      expected: `an integer from ${minimum} to ${maximum}`,
      schema: { type: 'integer', minimum, maximum, description },
      read: (value) =>
        Number.isSafeInteger(value) && (value as number) >= minimum && (value as number) <= maximum
          ? { value: value as number }
          : undefined,
    });
  },
  /** One of `values`. */
  choice<const T extends string>(description: string, values: readonly T[]) {
    return required<T>({
      expected: values.map((value) => JSON.stringify(value)).join(' or '),
      schema: { type: 'string', enum: values, description },
      read: (value) => ((values as readonly unknown[]).includes(value) ? { value: value as T } : undefined),
    });
  },
  /** A string `accepts` takes. */
  matching(description: string, settings: { expected: string; maxLength: number; accepts: (value: string) => boolean }) {
    const { expected, maxLength, accepts } = settings;
    return required<string>({
      expected,
      schema: { type: 'string', maxLength, description },
      read: (value) => (typeof value === 'string' && value.length <= maxLength && accepts(value) ? { value } : undefined),
    });
  },
  /** The field may be left out. */
  optional<T>(field: RequestField<T>): RequestField<T> & { required: false } {
    return { ...field, required: false };
  },
};

/**
 * Reads `fields` from `source` (a parsed body, or a query as an object): every required field
 * there and right, every field it has known, else an `HttpProblemError` naming the first field
 * that is not (`where` prefixes the name a problem shows, `query.limit`). Only own properties are
 * read, so a `__proto__` or `constructor` key is an unknown field like any other.
 *
 * @example
 * ```ts
 * const { content } = readFields({ content: fields.text('What the user says') }, await readJsonBody(request, limits) ?? {});
 * ```
 */
export function readFields<Fields extends RequestFields>(
  fieldsOf: Fields,
  source: Record<string, unknown>,
  settings: { where?: string; unknown?: 'reject' | 'ignore' } = {},
): FieldValues<Fields> {
  const name = (key: string) => (settings.where === undefined ? key : `${settings.where}.${key}`);
  if (settings.unknown !== 'ignore') {
    for (const key of Object.keys(source)) {
      if (!Object.hasOwn(fieldsOf, key)) {
        const known = Object.keys(fieldsOf);
        const shown = key.length > 60 ? `${key.slice(0, 60)}…` : key;
        throw new HttpProblemError(
          'invalid-field',
          `${name(shown)}: expected no such field (known: ${known.length === 0 ? 'none' : known.join(', ')})`,
          { field: name(shown) },
        );
      }
    }
  }
  const values: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(fieldsOf)) {
    const given = Object.hasOwn(source, key) ? source[key] : undefined;
    if (given === undefined) {
      if (field.required)
        throw new HttpProblemError('invalid-field', `${name(key)}: expected ${field.expected}, got nothing`, { field: name(key) });
      continue;
    }
    const read = field.read(given);
    if (!read) {
      const why = field.why?.(given);
      const got = why === undefined ? describeValue(given) : `${describeValue(given)} where ${why}`;
      throw new HttpProblemError('invalid-field', `${name(key)}: expected ${field.expected}, got ${got}`, { field: name(key) });
    }
    values[key] = read.value;
  }
  return values as FieldValues<Fields>;
}

/**
 * The JSON Schema of an object with `fields` (no other properties), for the OpenAPI document.
 *
 * @example
 * ```ts
 * objectSchema({ toolCallId: fields.text('The call to approve') });
 * // { type: 'object', properties: { toolCallId: {…} }, required: ['toolCallId'], additionalProperties: false }
 * ```
 */
export function objectSchema(fieldsOf: RequestFields): JsonSchema {
  const requiredNames = Object.entries(fieldsOf)
    .filter(([, field]) => field.required)
    .map(([key]) => key);
  return {
    type: 'object',
    properties: Object.fromEntries(Object.entries(fieldsOf).map(([key, field]) => [key, field.schema])),
    ...(requiredNames.length === 0 ? {} : { required: requiredNames }),
    additionalProperties: false,
  };
}
