import { randomUUID } from 'node:crypto';
import type { OpenAIChatCompletionChunk, OpenAIChatMessage } from '../providers/openai-wire/chat-types.js';
import type { ChunkHandler } from '../providers/handler/handler-provider.js';

/** The model name the offline model answers with. */
export const offlineModelName = 'offline-scripted';

const wordOperators: Array<[RegExp, string]> = [
  [/\b(plus|added to)\b/gi, '+'],
  [/\b(minus|less)\b/gi, '-'],
  [/\b(times|multiplied by)\b/gi, '*'],
  [/\b(divided by|over)\b/gi, '/'],
  [/\bto the power of\b/gi, '^'],
];

/** The arithmetic in a question, e.g. `17*23` in "what is 17*23?" (words like "times" allowed). */
export function findExpression(text: string): string | undefined {
  let spelled = text;
  for (const [pattern, operator] of wordOperators) spelled = spelled.replace(pattern, ` ${operator} `);
  const candidates = spelled.match(/(?:sqrt|abs|round|floor|ceil|[\d.(),+\-*/%^×÷\s])+/gi) ?? [];
  const found = candidates
    .map((candidate) => candidate.trim().replace(/\s+/g, ' ').replace(/[,.]$/, ''))
    .find((candidate) => /\d/.test(candidate) && /[+\-*/%^×÷(]|sqrt|abs|round|floor|ceil/i.test(candidate));
  return found === '' ? undefined : found;
}

/** A unit conversion asked for, e.g. "convert 10 km to miles". */
export function findConversion(text: string): { value: number; from: string; to: string } | undefined {
  const match = /(-?\d+(?:[.,]\d+)?)\s*(°?[a-zA-Z][a-zA-Z0-9]*)\s+(?:to|in|into|as)\s+(°?[a-zA-Z][a-zA-Z0-9]*)/i.exec(text);
  if (!match) return undefined;
  return { value: Number((match[1] as string).replace(',', '.')), from: match[2] as string, to: match[3] as string };
}

/** An IANA time zone named in a question ("Europe/Oslo"), when the question is about the time. */
export function findClockQuestion(text: string): { timeZone?: string } | undefined {
  if (!/\b(time|date|clock|today|day is it|now)\b/i.test(text)) return undefined;
  const zone = /\b([A-Z][a-zA-Z]+\/[A-Z][a-zA-Z_]+)\b/.exec(text)?.[1];
  return zone === undefined ? {} : { timeZone: zone };
}

/** A wait asked for, e.g. "wait 5 seconds" or "sleep for 2 s". */
export function findWait(text: string): { seconds: number } | undefined {
  const match = /\b(?:wait|sleep|pause)\b(?:\s+for)?\s+(\d+(?:\.\d+)?)\s*(?:s|secs?|seconds?)\b/i.exec(text);
  return match ? { seconds: Number(match[1]) } : undefined;
}

type Plan = { kind: 'text'; text: string } | { kind: 'tool'; name: string; args: Record<string, unknown> };

const help =
  "I am actorloop's offline scripted model: no API key or base URL is set, so no real model is asked. " +
  'I can do arithmetic ("what is 17*23?"), tell the time ("what time is it in Europe/Oslo?"), convert units ' +
  '("convert 10 km to miles") and wait ("wait 5 seconds") with real tools. Set OPENAI_API_KEY or ANTHROPIC_API_KEY, or pass --base-url, for a real model.';

/** What the offline model does next: ask for a tool, or answer from the tool's result. */
export function planTurn(messages: OpenAIChatMessage[]): Plan {
  const last = messages.at(-1);
  if (last?.role === 'tool') {
    const content = typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
    const call = messages
      .flatMap((message) => (message.role === 'assistant' ? (message.tool_calls ?? []) : []))
      .findLast((candidate) => candidate.id === last.tool_call_id);
    if (/^(Error|tool ".*" timed out|denied|cancelled)/.test(content))
      return { kind: 'text', text: `I could not work that out: ${content}` };
    switch (call?.function.name) {
      case 'calculator':
        return { kind: 'text', text: `${(JSON.parse(call.function.arguments) as { expression: string }).expression} = ${content}` };
      case 'clock': {
        const { local, timeZone } = JSON.parse(content) as { local: string; timeZone: string };
        return { kind: 'text', text: `It is ${local} (${timeZone}).` };
      }
      case 'wait':
        return { kind: 'text', text: `I ${content}.` };
      default:
        return { kind: 'text', text: content };
    }
  }
  const question =
    typeof last?.content === 'string'
      ? last.content
      : (last?.content ?? []).map((part) => ('text' in part && typeof part.text === 'string' ? part.text : '')).join('');
  const attached = last?.role === 'user' && Array.isArray(last.content) ? last.content.filter((part) => part.type !== 'text') : [];
  const wait = findWait(question);
  if (wait) return { kind: 'tool', name: 'wait', args: wait };
  const conversion = findConversion(question);
  if (conversion) return { kind: 'tool', name: 'convert_units', args: conversion };
  const clock = findClockQuestion(question);
  if (clock) return { kind: 'tool', name: 'clock', args: clock };
  const expression = findExpression(question);
  if (expression) return { kind: 'tool', name: 'calculator', args: { expression } };
  if (attached.length > 0) {
    const kinds = attached.map((part) => (part.type === 'image_url' ? 'an image' : part.type === 'input_audio' ? 'audio' : 'a file'));
    return {
      kind: 'text',
      text: `I received ${kinds.join(', ')} with your message, but I cannot look at ${attached.length === 1 ? 'it' : 'them'}: ${help}`,
    };
  }
  return { kind: 'text', text: help };
}

let serial = 0;
const chunk = (delta: Record<string, unknown>, finishReason: string | null = null): OpenAIChatCompletionChunk => ({
  id: `offline-${serial}`,
  object: 'chat.completion.chunk',
  model: offlineModelName,
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});

// One pause per streamed chunk: its abort listener goes when the pause ends, or a long answer
// piles listeners on the request's signal (MaxListenersExceededWarning).
export const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * A deterministic stand-in for a model, so `actorloop run` works with no key and no network: it
 * reads the question, asks the real demo tools for what it cannot know (arithmetic, the time, unit
 * conversions) and answers from their results. It streams like a model, a few characters at a time.
 *
 * @example
 * ```ts
 * const provider = handlerProvider(offlineModel({ delayMs: 0 }));
 * ```
 */
export function offlineModel(options: { delayMs?: number } = {}): ChunkHandler {
  const delayMs = options.delayMs ?? 15;
  return async function* ({ messages, signal }) {
    serial += 1;
    const plan = planTurn(messages);
    await pause(delayMs * 4, signal);
    if (plan.kind === 'tool') {
      // Unique across processes: a stored conversation continued later must never repeat an id.
      const id = `call_offline_${randomUUID().slice(0, 12)}`;
      yield chunk({ role: 'assistant', tool_calls: [{ index: 0, id, type: 'function', function: { name: plan.name, arguments: '' } }] });
      yield chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(plan.args) } }] });
      yield chunk({}, 'tool_calls');
      yield usageChunk(messages, `${plan.name}${JSON.stringify(plan.args)}`);
      return;
    }
    for (const piece of plan.text.match(/.{1,12}/gs) ?? ['']) {
      if (signal.aborted) return;
      yield chunk({ content: piece });
      await pause(delayMs, signal);
    }
    yield chunk({}, 'stop');
    yield usageChunk(messages, plan.text);
  };
}

/**
 * The usage a model would report, estimated at four characters a token (the offline model has no
 * tokenizer), so usage, `--max-tokens` and budgets have something real to count.
 */
function usageChunk(messages: ReadonlyArray<{ content?: unknown }>, answer: string): OpenAIChatCompletionChunk {
  const prompt = Math.ceil(messages.reduce((sum, message) => sum + JSON.stringify(message.content ?? '').length, 0) / 4);
  const completion = Math.ceil(answer.length / 4);
  return {
    id: `offline-${serial}`,
    object: 'chat.completion.chunk',
    model: offlineModelName,
    choices: [],
    usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
  };
}
