import { serializeResult } from '../util/serialize-result.js';
import { utf8Length } from '../util/utf8-length.js';

/** The message of anything a tool threw, Error or not. */
export function thrownMessage(thrown: unknown): string {
  if (thrown instanceof Error)
    return thrown.message === '' ? thrown.name : `${thrown.name === 'Error' ? '' : `${thrown.name}: `}${thrown.message}`;
  if (typeof thrown === 'string') return thrown;
  const text = serializeResult(thrown);
  return text === '' ? String(thrown) : text;
}

/** The error result of a call whose tool did not finish within its timeout. */
export function timedOutText(toolName: string, timeoutMs: number): string {
  return `tool "${toolName}" timed out after ${timeoutMs} ms`;
}

/** The error result of a call that was running when its process stopped, and whose tool is not `idempotent`. */
export const interruptedText = 'interrupted by a restart; not run again';

const encoder = new TextEncoder();

/**
 * Caps a text fed back to the model at `maxBytes` of UTF-8, cutting on a character boundary and
 * saying so, so one runaway tool cannot blow the context window or the process's memory.
 */
export function capText(text: string, maxBytes: number): string {
  // Three bytes per UTF-16 unit is the most UTF-8 needs, so shorter texts cannot be over.
  if (text.length * 3 <= maxBytes) return text;
  const total = utf8Length(text);
  if (total <= maxBytes) return text;
  const buffer = new Uint8Array(maxBytes);
  const { read } = encoder.encodeInto(text, buffer);
  const kept = text.slice(0, read);
  return `${kept}\n…[truncated: ${total - utf8Length(kept)} of ${total} bytes not shown]`;
}
