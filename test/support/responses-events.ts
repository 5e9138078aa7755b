/**
 * Hand-built OpenAI Responses traffic in the shapes the recorded streams have (see
 * `recorded/README.md`, "OpenAI Responses"): lifecycle events, items added and done by
 * `output_index`, deltas keyed by `item_id`, a terminal event carrying the whole response. For
 * faults and cases no recording holds (a call cut off by `max_output_tokens`, `response.failed`).
 */
import { anthropicSse, jsonResponse, type WireInteraction } from './wire-server.js';

export type ItemSpec =
  | {
      type: 'message';
      id?: string;
      text: string;
      chunks?: string[];
      phase?: 'commentary' | 'final_answer';
      status?: string;
      refusal?: boolean;
    }
  | { type: 'reasoning'; id?: string; summary?: string[]; encrypted?: string }
  | {
      type: 'function_call';
      id?: string;
      callId: string;
      name: string;
      args: string;
      chunks?: string[];
      status?: 'completed' | 'incomplete';
    };

export type ResponseSpec = {
  id?: string;
  items: ItemSpec[];
  status?: 'completed' | 'incomplete' | 'failed';
  incompleteReason?: 'max_output_tokens' | 'content_filter';
  usage?: { input: number; output: number; cached?: number; reasoning?: number };
  /** Usage on a failed response (the API sends `null` there, as a rule). */
  failedUsage?: boolean;
  error?: { code: string; message: string };
  /** Leave out events from this one on (a stream cut short). */
  cutAfter?: number;
  store?: boolean;
};

type Event = { type: string } & Record<string, unknown>;

let counter = 0;
const nextId = (prefix: string) => `${prefix}_${(++counter).toString(16).padStart(8, '0')}`;

function finalItem(spec: ItemSpec, id: string): Record<string, unknown> {
  switch (spec.type) {
    case 'message':
      return {
        id,
        type: 'message',
        status: spec.status ?? 'completed',
        content: [
          spec.refusal ? { type: 'refusal', refusal: spec.text } : { type: 'output_text', annotations: [], logprobs: [], text: spec.text },
        ],
        ...(spec.phase ? { phase: spec.phase } : {}),
        role: 'assistant',
      };
    case 'reasoning':
      return {
        id,
        type: 'reasoning',
        ...(spec.encrypted ? { encrypted_content: spec.encrypted } : {}),
        summary: (spec.summary ?? []).map((text) => ({ type: 'summary_text', text })),
      };
    case 'function_call':
      return { id, type: 'function_call', status: spec.status ?? 'completed', arguments: spec.args, call_id: spec.callId, name: spec.name };
  }
}

function chunksOf(text: string, chunks: string[] | undefined): string[] {
  if (chunks) return chunks;
  if (text === '') return [];
  const size = Math.max(1, Math.ceil(text.length / 3));
  const out: string[] = [];
  for (let start = 0; start < text.length; start += size) out.push(text.slice(start, start + size));
  return out;
}

/** The events of one streamed response. */
export function responsesEvents(spec: ResponseSpec): Event[] {
  const responseId = spec.id ?? nextId('resp');
  const status = spec.status ?? 'completed';
  const ids = spec.items.map((item) => item.id ?? nextId(item.type === 'message' ? 'msg' : item.type === 'reasoning' ? 'rs' : 'fc'));
  const usage = spec.usage ?? { input: 10, output: 5 };
  const response = (state: string, output: unknown[]) => ({
    id: responseId,
    object: 'response',
    model: 'gpt-5-mini-2025-08-07',
    status: state,
    store: spec.store ?? false,
    error: state === 'failed' ? (spec.error ?? { code: 'server_error', message: 'The server had an error.' }) : null,
    incomplete_details: state === 'incomplete' ? { reason: spec.incompleteReason ?? 'max_output_tokens' } : null,
    output,
    usage:
      state === 'in_progress' || (state === 'failed' && !spec.failedUsage)
        ? null
        : {
            input_tokens: usage.input,
            input_tokens_details: { cached_tokens: usage.cached ?? 0 },
            output_tokens: usage.output,
            output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
            total_tokens: usage.input + usage.output,
          },
  });
  const events: Event[] = [
    { type: 'response.created', response: response('in_progress', []) },
    { type: 'response.in_progress', response: response('in_progress', []) },
  ];
  spec.items.forEach((item, outputIndex) => {
    const id = ids[outputIndex]!;
    const final = finalItem(item, id);
    const base = { item_id: id, output_index: outputIndex };
    switch (item.type) {
      case 'message': {
        events.push({
          type: 'response.output_item.added',
          output_index: outputIndex,
          item: { ...final, status: 'in_progress', content: [] },
        });
        events.push({ type: 'response.content_part.added', ...base, content_index: 0, part: { type: 'output_text', text: '' } });
        const deltaType = item.refusal ? 'response.refusal.delta' : 'response.output_text.delta';
        for (const delta of chunksOf(item.text, item.chunks))
          events.push({ type: deltaType, ...base, content_index: 0, delta, logprobs: [] });
        events.push({
          type: item.refusal ? 'response.refusal.done' : 'response.output_text.done',
          ...base,
          content_index: 0,
          text: item.text,
        });
        events.push({ type: 'response.content_part.done', ...base, content_index: 0, part: (final.content as unknown[])[0] });
        break;
      }
      case 'reasoning':
        events.push({ type: 'response.output_item.added', output_index: outputIndex, item: { ...final, summary: [] } });
        (item.summary ?? []).forEach((text, summaryIndex) => {
          events.push({
            type: 'response.reasoning_summary_part.added',
            ...base,
            summary_index: summaryIndex,
            part: { type: 'summary_text', text: '' },
          });
          for (const delta of chunksOf(text, undefined))
            events.push({ type: 'response.reasoning_summary_text.delta', ...base, summary_index: summaryIndex, delta });
          events.push({ type: 'response.reasoning_summary_text.done', ...base, summary_index: summaryIndex, text });
          events.push({
            type: 'response.reasoning_summary_part.done',
            ...base,
            summary_index: summaryIndex,
            part: { type: 'summary_text', text },
          });
        });
        break;
      case 'function_call':
        events.push({
          type: 'response.output_item.added',
          output_index: outputIndex,
          item: { ...final, status: 'in_progress', arguments: '' },
        });
        for (const delta of chunksOf(item.args, item.chunks))
          events.push({ type: 'response.function_call_arguments.delta', ...base, delta });
        if (item.status !== 'incomplete') events.push({ type: 'response.function_call_arguments.done', ...base, arguments: item.args });
        break;
    }
    events.push({ type: 'response.output_item.done', output_index: outputIndex, item: final });
  });
  const output = spec.items.map((item, index) => finalItem(item, ids[index]!));
  events.push({
    type: status === 'completed' ? 'response.completed' : status === 'incomplete' ? 'response.incomplete' : 'response.failed',
    response: response(status, status === 'failed' ? [] : output),
  });
  const numbered = events.map((event, index) => ({ ...event, sequence_number: index }));
  return spec.cutAfter === undefined ? numbered : numbered.slice(0, spec.cutAfter);
}

/** A streamed response (`event: <type>` + `data: <json>`, no `[DONE]`: the framing Anthropic uses too). */
export function responsesStream(spec: ResponseSpec): WireInteraction['response'] {
  return anthropicSse(responsesEvents(spec));
}

/** A non-streamed response: the terminal event's response object as the JSON body. */
export function responsesJson(spec: ResponseSpec): WireInteraction['response'] {
  const terminal = responsesEvents({ ...spec, cutAfter: undefined }).at(-1)!;
  return jsonResponse(200, terminal.response);
}

/** A text answer, streamed. */
export const textAnswer = (text: string, spec: Partial<ResponseSpec> = {}) =>
  responsesStream({ items: [{ type: 'message', text }], ...spec });

/** An `error` event inside a 200 stream (the current form: the error nested), then `response.failed`. */
export function inBandError(error: { type: string; code: string; message: string }, flat = false): WireInteraction['response'] {
  const errorEvent = flat
    ? { type: 'error', code: error.code, message: error.message, param: null }
    : { type: 'error', error: { ...error, param: null } };
  const events = responsesEvents({ items: [], status: 'failed', error: { code: error.code, message: error.message } });
  return anthropicSse([...events.slice(0, 2), errorEvent, ...events.slice(2)]);
}
