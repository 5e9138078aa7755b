import type { Message, ToolCallPart } from '../../model/messages.js';

/** A tool call reduced to what makes two calls "the same": name and canonical arguments. */
export type CallSignature = { name: string; args: unknown; key: string };

/** JSON with object keys sorted, so `{a,b}` and `{b,a}` are the same arguments. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What makes two calls the same: the name and the canonical arguments, in one string. */
function signatureKey(name: string, args: unknown): string {
  return `${name}\u0000${canonicalJson(args)}`;
}

export function signatureOf(name: string, args: unknown): CallSignature {
  return { name, args, key: signatureKey(name, args) };
}

// History parts are never mutated, so a call's key is computed once, not once per round it stays
// within the detector's window (canonical JSON of the arguments dominated the check's cost). Only
// the key is kept: it lives as long as the history, and the signature around it is made per check.
const keys = new WeakMap<ToolCallPart, string>();

/** The signature of a tool-call part; its key is remembered for as long as the part lives. */
export function signatureOfPart(part: ToolCallPart): CallSignature {
  let key = keys.get(part);
  if (key === undefined) {
    key = signatureKey(part.toolName, part.args);
    keys.set(part, key);
  }
  return { name: part.toolName, args: part.args, key };
}

/** The longest pattern (in calls) the detector looks for; longer cycles are not "the same call again". */
export const maxDoomLoopPeriod = 8;

/**
 * The last `limit` tool calls of a history, oldest first. Scans from the end so the cost per round
 * stays flat however long the conversation grows.
 */
export function recentCallSignatures(messages: Message[], limit: number): CallSignature[] {
  const found: CallSignature[] = [];
  for (let index = messages.length - 1; index >= 0 && found.length < limit; index--) {
    const message = messages[index];
    if (message?.role !== 'assistant') continue;
    for (let part = message.content.length - 1; part >= 0 && found.length < limit; part--) {
      const content = message.content[part];
      if (content?.type === 'tool-call') found.push(signatureOfPart(content));
    }
  }
  return found.reverse();
}

/** A pattern that repeats at the tail of the call history. */
export type Repetition = { pattern: CallSignature[]; repeats: number };

/**
 * Finds the shortest pattern whose repetitions make up the tail of `calls` at least `threshold`
 * times (A,A,A or A,B,A,B,A,B for 3), counting how many times it repeats in a row.
 */
export function findRepetition(calls: CallSignature[], threshold: number): Repetition | null {
  const total = calls.length;
  for (let period = 1; period <= maxDoomLoopPeriod && period * threshold <= total; period++) {
    let repeats = 1;
    while ((repeats + 1) * period <= total) {
      let same = true;
      for (let offset = 0; offset < period && same; offset++) {
        same = calls[total - 1 - offset]?.key === calls[total - 1 - offset - repeats * period]?.key;
      }
      if (!same) break;
      repeats++;
    }
    if (repeats >= threshold) return { pattern: calls.slice(total - period), repeats };
  }
  return null;
}

/** The user-role notice the model gets once when it is looping. */
export function doomLoopNotice(repetition: Repetition): string {
  const calls = repetition.pattern.map((call) => `${call.name}(${canonicalJson(call.args)})`).join(', then ');
  return (
    `Notice: you have repeated the same tool calls ${repetition.repeats} times in a row: ${calls}. ` +
    'They keep giving the same results. Do not call them again with the same arguments: ' +
    'use the results you already have, try a different approach, or answer the user.'
  );
}
