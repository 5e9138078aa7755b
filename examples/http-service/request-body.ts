/** Reading and checking what a client sends: a JSON object body, its fields, the ids in the path. */
import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-error.js';

/** The body as a JSON object (`{}` when empty). Too large: 413; not JSON, or not an object: 400 naming `body`. */
export async function readJsonObject(request: IncomingMessage, maxBytes: number): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpError(413, `the body is larger than ${maxBytes} bytes`, { field: 'body' });
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, 'body: expected JSON (content-type: application/json)', { field: 'body' });
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new HttpError(400, `body: expected a JSON object, got ${Array.isArray(body) ? 'an array' : JSON.stringify(body)}`, {
      field: 'body',
    });
  }
  return body as Record<string, unknown>;
}

const describe = (value: unknown) => (value === undefined ? 'nothing' : JSON.stringify(value));

/** A field that must be a non-empty string. */
export function requiredText(body: Record<string, unknown>, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value.trim() === '') {
    throw new HttpError(400, `${field}: expected a non-empty string, got ${describe(value)}`, { field });
  }
  return value;
}

/** A field that may be absent, or else a string. */
export function optionalText(body: Record<string, unknown>, field: string): string | undefined {
  const value = body[field];
  if (value !== undefined && typeof value !== 'string')
    throw new HttpError(400, `${field}: expected a string, got ${describe(value)}`, { field });
  return value;
}

/** A field that must be one of `choices`. */
export function oneOf<T extends string>(body: Record<string, unknown>, field: string, choices: readonly T[]): T {
  const value = body[field];
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    throw new HttpError(400, `${field}: expected ${choices.map((choice) => `"${choice}"`).join(' or ')}, got ${describe(value)}`, {
      field,
    });
  }
  return value as T;
}

/** Ids this service accepts in a path: letters, digits and `._:-`, up to 128 of them. */
const idPattern = /^[A-Za-z0-9._:-]{1,128}$/;

/** An id taken from the path (or a body field), checked: 400 naming `field` when it is not one. */
export function checkId(value: unknown, field: string): string {
  if (typeof value !== 'string' || !idPattern.test(value)) {
    throw new HttpError(400, `${field}: expected 1 to 128 letters, digits or . _ : -, got ${describe(value)}`, { field });
  }
  return value;
}

/** A path segment, percent-decoded; a malformed escape is a 400 naming `field`. */
export function pathSegment(raw: string, field: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new HttpError(400, `${field}: not a valid percent-encoded path segment`, { field });
  }
}
