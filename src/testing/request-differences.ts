import type { JsonValue } from '../model/json.js';
import type { CassetteRequest } from './cassette.js';
import type { CassetteDifference } from './cassette-mismatch-error.js';

/** How many differences a mismatch collects: enough to see a pattern, bounded for a whole changed history. */
const maximumDifferences = 50;
/** How much of a value a difference shows. */
const shownCharacters = 100;

const absent = Symbol('absent');
type Compared = JsonValue | typeof absent;

function keyPath(at: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${at}.${key}` : `${at}[${JSON.stringify(key)}]`;
}

function cut(text: string): string {
  return text.length > shownCharacters ? `${text.slice(0, shownCharacters)}…` : text;
}

/**
 * A value as short JSON text. Two long strings are shown around their first differing character,
 * where the change is, not from their common start.
 */
function shown(value: Compared, other: Compared): string {
  if (value === absent) return '(absent)';
  if (typeof value === 'string' && typeof other === 'string' && value.length + other.length > shownCharacters) {
    let at = 0;
    while (at < value.length && at < other.length && value[at] === other[at]) at++;
    const start = Math.max(0, at - 30);
    const window = value.slice(start, start + shownCharacters);
    const text = JSON.stringify(window);
    return `${start > 0 ? '…' : ''}${text}${start + shownCharacters < value.length ? '…' : ''} (character ${at} of ${value.length})`;
  }
  return cut(JSON.stringify(value) ?? String(value));
}

function isObject(value: Compared): value is { [key: string]: JsonValue } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function compare(expected: Compared, received: Compared, at: string, out: CassetteDifference[]): void {
  if (out.length >= maximumDifferences) return;
  if (Array.isArray(expected) && Array.isArray(received)) {
    for (let index = 0; index < Math.max(expected.length, received.length); index++) {
      compare(
        index < expected.length ? (expected[index] as JsonValue) : absent,
        index < received.length ? (received[index] as JsonValue) : absent,
        `${at}[${index}]`,
        out,
      );
    }
    return;
  }
  if (isObject(expected) && isObject(received)) {
    // Key order is the client's serialiser's business, not a difference: compare by name.
    const keys = [...Object.keys(expected), ...Object.keys(received).filter((key) => !Object.hasOwn(expected, key))];
    for (const key of keys) {
      compare(
        Object.hasOwn(expected, key) ? (expected[key] as JsonValue) : absent,
        Object.hasOwn(received, key) ? (received[key] as JsonValue) : absent,
        keyPath(at, key),
        out,
      );
    }
    return;
  }
  if (expected === received) return;
  out.push({ path: at, expected: shown(expected, received), received: shown(received, expected) });
}

/**
 * Where a request sent now differs from the recorded one: method, path, query, then the body as
 * JSON (key order ignored, every other difference counted). A recorded body of `null` (not
 * recorded) is not compared.
 */
export function requestDifferences(recorded: CassetteRequest, sent: CassetteRequest): CassetteDifference[] {
  const differences: CassetteDifference[] = [];
  if (recorded.method.toUpperCase() !== sent.method.toUpperCase()) {
    differences.push({ path: 'method', expected: recorded.method, received: sent.method });
  }
  if (recorded.path !== sent.path)
    differences.push({ path: 'path', expected: JSON.stringify(recorded.path), received: JSON.stringify(sent.path) });
  if ((recorded.query ?? '') !== (sent.query ?? '')) {
    differences.push({ path: 'query', expected: JSON.stringify(recorded.query ?? ''), received: JSON.stringify(sent.query ?? '') });
  }
  if (recorded.body !== null) compare(recorded.body, sent.body, 'body', differences);
  return differences;
}
