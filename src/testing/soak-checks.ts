import { findMessagesProblem, type Message } from '../model/messages.js';
import type { SoakCheck } from './soak-violation.js';

/** A broken guarantee, before it is tied to its run. */
export type Problem = { check: SoakCheck; message: string };

const statuses = new Set(['done', 'halted', 'error']);

/** True for a value shaped as a conversation's `RunOutput` (a workflow's output may be one too). */
export function looksLikeRunOutput(value: unknown): value is { status: string; messages: unknown } {
  return typeof value === 'object' && value !== null && 'status' in value && 'messages' in value && Array.isArray(value.messages);
}

/**
 * The checks of DESIGN §3 on a conversation's output: a valid end (`done`, `halted` with a
 * reason, `error` with an error, and an error only then), `halted` / `cancelled` after a cancel, a
 * history valid to send again (every tool call answered once, right after it, in order) and
 * non-negative usage.
 */
export function outputProblems(output: unknown, where: string, cancelled: boolean): Problem[] {
  const problems: Problem[] = [];
  if (typeof output !== 'object' || output === null)
    return [{ check: 'output', message: `${where}: the output is ${String(output)}, not a RunOutput` }];
  const run = output as Record<string, unknown>;
  const status = run.status;
  if (typeof status !== 'string' || !statuses.has(status))
    problems.push({ check: 'output', message: `${where}: status ${JSON.stringify(status)} is not done, halted or error` });
  if (status === 'error' && run.error === undefined) problems.push({ check: 'output', message: `${where}: ended error without an error` });
  if (status !== 'error' && run.error !== undefined)
    problems.push({ check: 'output', message: `${where}: ended ${String(status)} with an error (${JSON.stringify(run.error)})` });
  if (status === 'halted' && (typeof run.reason !== 'string' || run.reason === ''))
    problems.push({ check: 'output', message: `${where}: ended halted without a reason` });
  if (cancelled && (status !== 'halted' || run.reason !== 'cancelled'))
    problems.push({
      check: 'cancel',
      message: `${where}: cancelled before its end, yet ended ${String(status)}${run.reason ? ` (${String(run.reason)})` : ''}`,
    });
  for (const message of historyProblems(run.messages)) problems.push({ check: 'history', message: `${where}: ${message}` });
  const usage = run.usage;
  if (typeof usage === 'object' && usage !== null) {
    for (const [name, value] of Object.entries(usage))
      if (typeof value === 'number' && !(value >= 0)) problems.push({ check: 'output', message: `${where}: usage.${name} is ${value}` });
  } else problems.push({ check: 'output', message: `${where}: no usage` });
  return problems;
}

/** Every tool call answered once, right after its message, in call order; tool messages nowhere else. */
export function historyProblems(messages: unknown): string[] {
  const structural = findMessagesProblem(messages);
  if (structural) return [`history malformed: ${structural}`];
  const history = messages as Message[];
  const problems: string[] = [];
  const seen = new Set<string>();
  history.forEach((message, index) => {
    if (message.role === 'tool' && history[index - 1]?.role !== 'assistant')
      problems.push(`message ${index}: tool results not right after an assistant message`);
    if (message.role !== 'assistant') return;
    const calls = message.content.flatMap((part) => (part.type === 'tool-call' ? [part.toolCallId] : []));
    for (const id of calls) {
      if (seen.has(id)) problems.push(`tool call ${id} appears twice`);
      seen.add(id);
    }
    if (calls.length === 0) return;
    const next = history[index + 1];
    if (next?.role !== 'tool') {
      problems.push(`message ${index}: tool calls ${calls.join(', ')} are not answered`);
      return;
    }
    const results = next.content.map((part) => part.toolCallId);
    if (results.join('\u0000') !== calls.join('\u0000'))
      problems.push(`message ${index + 1}: results ${results.join(', ')} do not answer calls ${calls.join(', ')} once each, in order`);
  });
  return problems;
}

/** The ids of the tool calls a persisted snapshot already holds results for, anywhere in its tree. */
export function answeredCallIds(persisted: unknown): Set<string> {
  const ids = new Set<string>();
  const seen = new Set<object>();
  const walk = (value: unknown) => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) {
      for (const item of value) walk(item);
      return;
    }
    const record = value as Record<string, unknown>;
    if (record.type === 'tool-result' && typeof record.toolCallId === 'string') ids.add(record.toolCallId);
    for (const item of Object.values(record)) walk(item);
  };
  walk(persisted);
  return ids;
}
