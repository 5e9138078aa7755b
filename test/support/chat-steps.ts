/**
 * Model answers as the local wire server serves them (Chat Completions chunks over SSE), for the
 * UI protocol's suites: text (with reasoning), tool calls whose arguments stream in two pieces,
 * and a text answer that holds after its first words until a gate opens (a reload or a resume
 * happens "mid-answer" at a known point, not after a guessed delay).
 */
import { openaiSse, type WireStep } from './wire-server.js';

let chunkSerial = 0;

/** One `chat.completion.chunk` with `delta`. */
export const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: `chatcmpl-${++chunkSerial}`,
  object: 'chat.completion.chunk',
  created: 1_700_000_000,
  model: 'gpt-test',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/** The usage chunk that ends an answer. */
export const usageChunk = () => ({ ...chunk({}), choices: [], usage: { prompt_tokens: 30, completion_tokens: 6, total_tokens: 36 } });

/** Text as a model streams it: a word (and its trailing space) at a time. */
export const words = (text: string) => text.split(/(?<= )/);

/** An answer of tool calls (after `text`, if any), each call's arguments in two pieces. */
export function toolCallsStep(calls: Array<{ id: string; name: string; args: unknown }>, text = ''): WireStep {
  return openaiSse([
    chunk({ role: 'assistant', content: text === '' ? null : '' }),
    ...(text === '' ? [] : words(text).map((piece) => chunk({ content: piece }))),
    ...calls.flatMap((call, index) => {
      const args = JSON.stringify(call.args);
      const half = Math.ceil(args.length / 2);
      return [
        chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: args.slice(0, half) } }] }),
        chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }),
      ];
    }),
    chunk({}, 'tool_calls'),
    usageChunk(),
  ]);
}

/** A text answer, after `reasoning` (`reasoning_content`) if given. */
export function textStep(text: string, reasoning?: string): WireStep {
  return openaiSse([
    chunk({ role: 'assistant', content: '' }),
    ...(reasoning ? words(reasoning).map((piece) => chunk({ reasoning_content: piece })) : []),
    ...words(text).map((piece) => chunk({ content: piece })),
    chunk({}, 'stop'),
    usageChunk(),
  ]);
}

/** A text answer whose first words stream at once and the rest once `gate` opens. */
export function gatedTextStep(first: string, rest: string, gate: Promise<void>): WireStep {
  return async (_request, control) => {
    control.res.writeHead(200, { 'content-type': 'text/event-stream' });
    const write = (value: unknown) => control.res.write(`data: ${JSON.stringify(value)}\n\n`);
    write(chunk({ role: 'assistant', content: '' }));
    for (const piece of words(first)) write(chunk({ content: piece }));
    await Promise.race([gate, control.clientClosed]);
    if (control.res.destroyed) return;
    for (const piece of words(rest)) write(chunk({ content: piece }));
    write(chunk({}, 'stop'));
    write(usageChunk());
    control.res.end('data: [DONE]\n\n');
  };
}
