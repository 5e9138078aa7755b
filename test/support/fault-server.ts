/**
 * A fault-injecting model server for property tests, built on {@link startWireServer}: it speaks the
 * OpenAI Chat Completions wire (`POST /v1/chat/completions`) and the Anthropic Messages wire
 * (`POST /v1/messages`), streamed or not (it reads `stream` from each request body), and answers
 * the n-th request with the n-th step of a plan — a normal text or tool-call response, or a fault.
 * Requests past the end of the plan get a plain text answer, so every run can finish. Servers given
 * one `log` (the providers of a fallback list, on the same wire or another) share the plan: each
 * request takes the next step, whichever server it reached.
 *
 * Everything it sends is valid for the real `openai` and `@anthropic-ai/sdk` clients except where
 * the step is a fault on purpose. It logs per request what it injected, when the request arrived,
 * when the answer was written and whether the connection was released, so a property can check
 * retry timing and leaked connections.
 *
 * @example
 * ```ts
 * const server = await startFaultServer({ wire: 'openai', plan: planFromSeed(42, 'openai', ['add']), toolNames: ['add'], apiKey });
 * const provider = openaiProvider({ model: 'gpt-4o-mini', apiKey, baseURL: server.baseURL });
 * // … run a conversation …
 * const leaks = await server.unreleased(1_000); // [] when every request's connection was let go
 * await server.close();
 * ```
 */
import type { Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import {
  splitSseEvents,
  startWireServer,
  type ReceivedRequest,
  type StepControl,
  type WireInteraction,
  type WireServer,
  type WireStep,
} from './wire-server.js';
import { prng } from '../../src/testing/fault-plan.js';

export type Wire = 'openai' | 'anthropic' | 'responses';

/** How one tool call of a response is formed. */
export type CallSpec = {
  /** Index into the run's tool names (modulo their count). */
  tool: number;
  /** `invalidJson` cannot be sent by a non-streamed Anthropic response (`input` is an object there): it becomes `badSchema`. */
  args: 'valid' | 'invalidJson' | 'badSchema' | 'huge';
  /** Call a tool that does not exist. */
  unknown?: boolean;
  /** The `n` argument. */
  n: number;
};

/** What the server answers one request with. */
export type FaultStep =
  | { kind: 'text'; thinking: boolean }
  | { kind: 'tools'; calls: CallSpec[]; thinking: boolean; text: boolean }
  /** The same call (first tool, `{ n: 7 }`) every time: repeated, this is a doom loop. */
  | { kind: 'repeat' }
  | { kind: 'empty'; body: boolean }
  | { kind: 'rateLimit'; retryAfter: null | { header: 'retry-after' | 'retry-after-ms'; ms: number }; echoKey: boolean }
  | { kind: 'status'; status: 400 | 401 | 500 | 502 | 503 | 529; echoKey: boolean }
  /** Anthropic: `event: error` overloaded_error inside a 200 stream; OpenAI: an in-band `{error}` chunk. */
  | { kind: 'inStreamError'; echoKey: boolean }
  | { kind: 'reset' }
  | { kind: 'cut'; how: 'destroy' | 'end' }
  | { kind: 'malformed' }
  /** Part of a stream, then silence until the client gives up. */
  | { kind: 'stall' }
  | { kind: 'slow'; delayMs: number; reply: 'text' | 'tools' };

/** What the server did with one request. */
export type RequestLog = {
  /** Position in the plan: requests are numbered in arrival order over every server sharing the log. */
  index: number;
  /** The wire of the server that got it (servers sharing a log may speak different wires). */
  wire: Wire;
  /** The `model` of the request body: which provider of a fallback list sent it. */
  model?: string;
  /** The assistant text the answer carried or began (a partial answer's too), '' when none. */
  text: string;
  /** `performance.now()` when the request body had arrived. */
  arrivedAt: number;
  /** When the answer was completely written (or the fault done); for a 429, when writing began. */
  respondedAt?: number;
  stream: boolean;
  path: string;
  /** The fault and response kinds injected, e.g. `429 retry-after-ms`, `reset`, `parallel calls`. */
  injected: string[];
  /** The `retry-after` this answer asked for, in ms. */
  retryAfterMs?: number;
  /** The answer was written to the end (the connection may stay open for keep-alive). */
  finished: boolean;
  /** The server itself destroyed the connection (a reset or a cut). */
  destroyedByServer: boolean;
  socket: Socket;
  /** Thinking blocks sent (Anthropic), to check they come back verbatim. */
  thinking: Array<{ thinking: string; signature: string } | { redacted: string }>;
  /** Tool call ids sent. */
  callIds: string[];
};

export type FaultServerOptions = {
  wire: Wire;
  plan: FaultStep[];
  /** The run's tool names; calls pick from them. */
  toolNames: string[];
  /** The run's API key, echoed in error bodies whose step says `echoKey` (the client must redact it). */
  apiKey: string;
  /** Most requests the server will answer (default: plan length + 64). */
  maxRequests?: number;
  /** How long a stalled answer waits for the client to give up (default 3 s). */
  stallMs?: number;
  /**
   * A log shared with other fault servers (e.g. the providers of a fallback list, on the same or
   * another wire): the plan is then consumed in arrival order over all of them, one step a request,
   * and each server's `log` is this one.
   */
  log?: RequestLog[];
};

export interface FaultServer {
  url: string;
  /** The `baseURL` to give the provider of this wire. */
  baseURL: string;
  wire: WireServer;
  log: RequestLog[];
  /** Every kind injected, one entry per injection. */
  injected(): string[];
  /**
   * Requests whose connection is neither answered to the end nor closed, after waiting up to
   * `timeoutMs` for the client to close aborted ones.
   */
  unreleased(timeoutMs?: number): Promise<RequestLog[]>;
  close(): Promise<void>;
}

const model = { openai: 'gpt-4o-mini', anthropic: 'claude-haiku-4-5', responses: 'gpt-5-mini' } as const;

/** The arguments text a call spec stands for. */
function argsTextOf(spec: CallSpec, hugeBytes: number): string {
  switch (spec.args) {
    case 'valid':
      return JSON.stringify({ n: spec.n });
    case 'invalidJson':
      return `{"n": ${spec.n},`;
    case 'badSchema':
      return JSON.stringify({ n: `not a number ${spec.n}` });
    case 'huge':
      return JSON.stringify({ n: spec.n, pad: 'x'.repeat(hugeBytes) });
  }
}

type Call = { id: string; name: string; argsText: string };
type Reply = { text: string; thinking: RequestLog['thinking']; calls: Call[] };

// ---------------------------------------------------------------------------------------------
// OpenAI Chat Completions

const oaChunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
  id: 'chatcmpl-fault',
  object: 'chat.completion.chunk',
  created: 1,
  model: model.openai,
  choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
});

function openaiStreamEvents(reply: Reply): string[] {
  const events: unknown[] = [oaChunk({ role: 'assistant', content: '' })];
  for (const block of reply.thinking) if ('thinking' in block) events.push(oaChunk({ reasoning_content: block.thinking }));
  if (reply.text !== '') {
    const middle = Math.ceil(reply.text.length / 2);
    events.push(oaChunk({ content: reply.text.slice(0, middle) }), oaChunk({ content: reply.text.slice(middle) }));
  }
  reply.calls.forEach((call, index) => {
    events.push(oaChunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
    const middle = Math.ceil(call.argsText.length / 2);
    events.push(oaChunk({ tool_calls: [{ index, function: { arguments: call.argsText.slice(0, middle) } }] }));
    events.push(oaChunk({ tool_calls: [{ index, function: { arguments: call.argsText.slice(middle) } }] }));
  });
  events.push(oaChunk({}, reply.calls.length > 0 ? 'tool_calls' : 'stop'));
  events.push({
    id: 'chatcmpl-fault',
    object: 'chat.completion.chunk',
    created: 1,
    model: model.openai,
    choices: [],
    usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
  });
  return [...events.map((event) => `data: ${JSON.stringify(event)}\n\n`), 'data: [DONE]\n\n'];
}

function openaiJson(reply: Reply): string {
  const reasoning = reply.thinking.flatMap((block) => ('thinking' in block ? [block.thinking] : [])).join('');
  return JSON.stringify({
    id: 'chatcmpl-fault',
    object: 'chat.completion',
    created: 1,
    model: model.openai,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text === '' ? null : reply.text,
          refusal: null,
          ...(reasoning === '' ? {} : { reasoning_content: reasoning }),
          ...(reply.calls.length === 0
            ? {}
            : {
                tool_calls: reply.calls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: call.argsText },
                })),
              }),
        },
        finish_reason: reply.calls.length > 0 ? 'tool_calls' : 'stop',
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
  });
}

// ---------------------------------------------------------------------------------------------
// Anthropic Messages

const anEvent = (event: { type: string } & Record<string, unknown>) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

function anthropicStreamEvents(reply: Reply): string[] {
  const events: string[] = [
    anEvent({
      type: 'message_start',
      message: {
        id: 'msg_fault',
        type: 'message',
        role: 'assistant',
        model: model.anthropic,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 1 },
      },
    }),
  ];
  let index = 0;
  for (const block of reply.thinking) {
    if ('thinking' in block) {
      events.push(anEvent({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
      events.push(anEvent({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: block.thinking } }));
      events.push(anEvent({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } }));
    } else {
      events.push(anEvent({ type: 'content_block_start', index, content_block: { type: 'redacted_thinking', data: block.redacted } }));
    }
    events.push(anEvent({ type: 'content_block_stop', index }));
    index++;
  }
  if (reply.text !== '') {
    const middle = Math.ceil(reply.text.length / 2);
    events.push(anEvent({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }));
    events.push(anEvent({ type: 'ping' }));
    events.push(anEvent({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: reply.text.slice(0, middle) } }));
    events.push(anEvent({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: reply.text.slice(middle) } }));
    events.push(anEvent({ type: 'content_block_stop', index }));
    index++;
  }
  for (const call of reply.calls) {
    events.push(
      anEvent({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } }),
    );
    const middle = Math.ceil(call.argsText.length / 2);
    events.push(
      anEvent({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: call.argsText.slice(0, middle) } }),
    );
    events.push(
      anEvent({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: call.argsText.slice(middle) } }),
    );
    events.push(anEvent({ type: 'content_block_stop', index }));
    index++;
  }
  events.push(
    anEvent({
      type: 'message_delta',
      delta: { stop_reason: reply.calls.length > 0 ? 'tool_use' : 'end_turn', stop_sequence: null },
      usage: { output_tokens: 3 },
    }),
  );
  events.push(anEvent({ type: 'message_stop' }));
  return events;
}

function anthropicJson(reply: Reply): string {
  const content: unknown[] = [];
  for (const block of reply.thinking) {
    content.push(
      'thinking' in block
        ? { type: 'thinking', thinking: block.thinking, signature: block.signature }
        : { type: 'redacted_thinking', data: block.redacted },
    );
  }
  if (reply.text !== '') content.push({ type: 'text', text: reply.text, citations: null });
  for (const call of reply.calls)
    content.push({ type: 'tool_use', id: call.id, name: call.name, input: JSON.parse(call.argsText) as unknown });
  return JSON.stringify({
    id: 'msg_fault',
    type: 'message',
    role: 'assistant',
    model: model.anthropic,
    content,
    stop_reason: reply.calls.length > 0 ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 3 },
  });
}

// ---------------------------------------------------------------------------------------------
// OpenAI Responses

/** The encrypted content a thinking block of the plan is sent as on the Responses wire. */
export const encryptedOf = (block: RequestLog['thinking'][number]) => `enc:${'thinking' in block ? block.signature : block.redacted}`;

function responsesOutput(reply: Reply, index: number): Array<Record<string, unknown>> {
  const output: Array<Record<string, unknown>> = [];
  reply.thinking.forEach((block, position) => {
    output.push({
      id: `rs_r${index}_${position}`,
      type: 'reasoning',
      encrypted_content: encryptedOf(block),
      summary: 'thinking' in block ? [{ type: 'summary_text', text: block.thinking }] : [],
    });
  });
  if (reply.text !== '') {
    output.push({
      id: `msg_r${index}`,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', annotations: [], logprobs: [], text: reply.text }],
    });
  }
  reply.calls.forEach((call, position) => {
    output.push({
      id: `fc_r${index}_${position}`,
      type: 'function_call',
      status: 'completed',
      call_id: call.id,
      name: call.name,
      arguments: call.argsText,
    });
  });
  return output;
}

function responsesResponse(reply: Reply, index: number, status: string): Record<string, unknown> {
  const done = status !== 'in_progress';
  return {
    id: `resp_fault_${index}`,
    object: 'response',
    status,
    model: model.responses,
    store: false,
    error: null,
    incomplete_details: null,
    output: done ? responsesOutput(reply, index) : [],
    usage: done
      ? {
          input_tokens: 10,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 3,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 13,
        }
      : null,
  };
}

function responsesStreamEvents(reply: Reply, index: number): string[] {
  const events: string[] = [
    anEvent({ type: 'response.created', response: responsesResponse(reply, index, 'in_progress') }),
    anEvent({ type: 'response.in_progress', response: responsesResponse(reply, index, 'in_progress') }),
  ];
  responsesOutput(reply, index).forEach((item, outputIndex) => {
    const base = { item_id: item.id, output_index: outputIndex };
    if (item.type === 'message') {
      const text = reply.text;
      const middle = Math.ceil(text.length / 2);
      events.push(
        anEvent({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', content: [] } }),
      );
      events.push(anEvent({ type: 'response.output_text.delta', ...base, content_index: 0, delta: text.slice(0, middle) }));
      events.push(anEvent({ type: 'response.output_text.delta', ...base, content_index: 0, delta: text.slice(middle) }));
    } else if (item.type === 'function_call') {
      const args = String(item.arguments);
      const middle = Math.ceil(args.length / 2);
      events.push(
        anEvent({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, status: 'in_progress', arguments: '' } }),
      );
      events.push(anEvent({ type: 'response.function_call_arguments.delta', ...base, delta: args.slice(0, middle) }));
      events.push(anEvent({ type: 'response.function_call_arguments.delta', ...base, delta: args.slice(middle) }));
      events.push(anEvent({ type: 'response.function_call_arguments.done', ...base, arguments: args }));
    } else {
      const summary = item.summary as Array<{ text: string }>;
      events.push(anEvent({ type: 'response.output_item.added', output_index: outputIndex, item: { ...item, summary: [] } }));
      summary.forEach((part, summaryIndex) => {
        events.push(anEvent({ type: 'response.reasoning_summary_text.delta', ...base, summary_index: summaryIndex, delta: part.text }));
      });
    }
    events.push(anEvent({ type: 'response.output_item.done', output_index: outputIndex, item }));
  });
  events.push(anEvent({ type: 'response.completed', response: responsesResponse(reply, index, 'completed') }));
  return events;
}

// ---------------------------------------------------------------------------------------------

function errorBody(wire: Wire, status: number, message: string): string {
  if (wire === 'openai' || wire === 'responses') {
    const type =
      status === 429 ? 'requests' : status >= 500 ? 'server_error' : status === 401 ? 'invalid_request_error' : 'invalid_request_error';
    return JSON.stringify({
      error: { message, type, param: null, code: status === 429 ? 'rate_limit_exceeded' : status === 401 ? 'invalid_api_key' : null },
    });
  }
  const type =
    status === 429
      ? 'rate_limit_error'
      : status === 529
        ? 'overloaded_error'
        : status >= 500
          ? 'api_error'
          : status === 401
            ? 'authentication_error'
            : 'invalid_request_error';
  return JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_fault' });
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Starts a fault server for one run.
 *
 * @example
 * ```ts
 * const server = await startFaultServer({ wire: 'anthropic', plan: [{ kind: 'reset' }, { kind: 'text', thinking: true }], toolNames: ['add'], apiKey });
 * anthropicProvider({ model: 'claude-haiku-4-5', apiKey, baseURL: server.baseURL, maxTokens: 1024 });
 * ```
 */
export async function startFaultServer(options: FaultServerOptions): Promise<FaultServer> {
  const { wire, plan, toolNames, apiKey } = options;
  const stallMs = options.stallMs ?? 3_000;
  const log: RequestLog[] = options.log ?? [];
  const count = options.maxRequests ?? plan.length + 64;
  let nonce = 0;
  const guardedSockets = new WeakSet<Socket>();

  const keyNote = (echo: boolean) => (echo ? ` (request made with key ${apiKey})` : '');

  async function serve(request: ReceivedRequest, control: StepControl): Promise<void> {
    const index = log.length;
    const body = (typeof request.body === 'object' && request.body !== null ? request.body : {}) as Record<string, unknown>;
    const stream = body.stream === true;
    const entry: RequestLog = {
      index,
      wire,
      ...(typeof body.model === 'string' ? { model: body.model } : {}),
      text: '',
      arrivedAt: performance.now(),
      stream,
      path: request.path,
      injected: [],
      finished: false,
      destroyedByServer: false,
      socket: control.socket,
      thinking: [],
      callIds: [],
    };
    log.push(entry);
    // Writing to a connection the client already dropped must not crash the server.
    control.res.on('error', () => undefined);
    if (!guardedSockets.has(control.socket)) {
      guardedSockets.add(control.socket);
      control.socket.on('error', () => undefined);
    }
    control.res.on('finish', () => {
      entry.finished = true;
      entry.respondedAt ??= performance.now();
    });
    /** Waits, but stops at once (timer cleared) when the client closes: nothing of the server outlives a run. */
    const wait = (ms: number) =>
      new Promise<void>((resolve) => {
        if (control.socket.destroyed) return resolve();
        const done = () => {
          clearTimeout(timer);
          control.socket.off('close', done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        control.socket.once('close', done);
      });
    const destroy = (how: 'reset' | 'destroy') => {
      entry.destroyedByServer = true;
      entry.respondedAt = performance.now();
      if (how === 'reset') control.socket.resetAndDestroy();
      else control.socket.destroy();
    };

    const expectedPath = { openai: '/v1/chat/completions', anthropic: '/v1/messages', responses: '/v1/responses' }[wire];
    if (request.path !== expectedPath) {
      entry.injected.push('wrong path');
      await control.respond({
        status: 404,
        headers: { 'content-type': 'application/json' },
        body: errorBody(wire, 404, `no route ${request.path}`),
      });
      return;
    }

    const step: FaultStep = plan[index] ?? { kind: 'text', thinking: false };

    const replyFor = (step: FaultStep): Reply => {
      const thinking: Reply['thinking'] = [];
      const wantsThinking = (step.kind === 'text' || step.kind === 'tools') && step.thinking;
      if (wantsThinking) {
        if (wire === 'anthropic' && index % 3 === 2) thinking.push({ redacted: `EqRedacted${index}x${nonce++}==` });
        else thinking.push({ thinking: `Thinking about request ${index}.`, signature: `Sig${index}x${nonce++}+/=` });
        entry.injected.push('thinking');
      }
      if (step.kind === 'tools' || step.kind === 'repeat') {
        const specs: CallSpec[] = step.kind === 'repeat' ? [{ tool: 0, args: 'valid', n: 7 }] : step.calls;
        if (step.kind === 'repeat') entry.injected.push('doom loop repeat');
        if (specs.length > 1) entry.injected.push('parallel calls');
        const calls = specs.map((spec, position): Call => {
          let args = spec.args;
          if (args === 'invalidJson' && wire === 'anthropic' && !stream) {
            args = 'badSchema';
            entry.injected.push('invalid json args (as bad schema: non-streamed anthropic)');
          }
          if (args === 'invalidJson') entry.injected.push('invalid json args');
          if (args === 'badSchema') entry.injected.push('bad schema args');
          if (args === 'huge') entry.injected.push('huge args');
          if (spec.unknown) entry.injected.push('unknown tool');
          const name = spec.unknown ? 'no_such_tool' : (toolNames[spec.tool % Math.max(1, toolNames.length)] ?? 'no_such_tool');
          const id = `${wire === 'anthropic' ? 'toolu' : 'call'}_r${index}_${position}`;
          entry.callIds.push(id);
          return { id, name, argsText: argsTextOf({ ...spec, args }, 2_000 + spec.n * 1_000) };
        });
        entry.injected.push('tool calls');
        entry.thinking = thinking;
        entry.text = step.kind === 'tools' && step.text ? `Calling tools for ${index}.` : '';
        return { text: entry.text, thinking, calls };
      }
      entry.thinking = thinking;
      if (step.kind === 'empty') return { text: '', thinking, calls: [] };
      entry.injected.push('text');
      entry.text = `Answer ${index}.`;
      return { text: entry.text, thinking, calls: [] };
    };

    const streamEvents = (reply: Reply): string[] =>
      wire === 'openai'
        ? openaiStreamEvents(reply)
        : wire === 'responses'
          ? responsesStreamEvents(reply, index)
          : anthropicStreamEvents(reply);
    const jsonBody = (reply: Reply): string =>
      wire === 'openai'
        ? openaiJson(reply)
        : wire === 'responses'
          ? JSON.stringify(responsesResponse(reply, index, 'completed'))
          : anthropicJson(reply);
    const success = async (reply: Reply) => {
      if (stream) {
        await control.respond({ status: 200, headers: { 'content-type': 'text/event-stream' }, body: streamEvents(reply).join('') });
      } else {
        await control.respond({ status: 200, headers: { 'content-type': 'application/json' }, body: jsonBody(reply) });
      }
    };
    /** The first part of a normal answer, as raw text, and the header. */
    const partial = (): { headers: Record<string, string>; head: string } => {
      const reply: Reply = { text: `Partial answer ${index} that will not arrive whole.`, thinking: [], calls: [] };
      entry.text = reply.text;
      if (stream) {
        const events = streamEvents(reply);
        return { headers: { 'content-type': 'text/event-stream' }, head: events.slice(0, Math.ceil(events.length / 2)).join('') };
      }
      const json = jsonBody(reply);
      return { headers: { 'content-type': 'application/json' }, head: json.slice(0, Math.floor(json.length / 2)) };
    };
    const writeHead = (status: number, headers: Record<string, string>) => {
      control.res.writeHead(status, headers);
      control.res.flushHeaders();
    };

    switch (step.kind) {
      case 'text':
      case 'tools':
      case 'repeat':
        await success(replyFor(step));
        return;
      case 'empty':
        if (step.body) {
          entry.injected.push('empty response');
          await success(replyFor(step));
        } else {
          entry.injected.push('empty body');
          await control.respond({ status: 200, headers: { 'content-type': stream ? 'text/event-stream' : 'application/json' }, body: '' });
        }
        return;
      case 'rateLimit': {
        // Before the first byte: the client cannot have the answer earlier, so retry timing is measured from here.
        entry.respondedAt = performance.now();
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (step.retryAfter) {
          const { header, ms } = step.retryAfter;
          headers[header] = header === 'retry-after-ms' ? String(ms) : String(ms / 1000);
          entry.retryAfterMs = ms;
          entry.injected.push(`429 ${header}`);
        } else entry.injected.push('429');
        await control.respond({ status: 429, headers, body: errorBody(wire, 429, `rate limited${keyNote(step.echoKey)}`) });
        return;
      }
      case 'status':
        entry.injected.push(`status ${step.status}`);
        if (step.echoKey) entry.injected.push('key echoed in error');
        await control.respond({
          status: step.status,
          headers: { 'content-type': 'application/json' },
          body: errorBody(wire, step.status, `failure ${step.status}${keyNote(step.echoKey)}`),
        });
        return;
      case 'inStreamError': {
        if (!stream) {
          // A 200 carrying an error inside exists only on a stream; the nearest non-streamed fault is a 529.
          entry.injected.push('status 529 (in-stream error on a non-streamed request)');
          await control.respond({
            status: 529,
            headers: { 'content-type': 'application/json' },
            body: errorBody(wire, 529, `Overloaded${keyNote(step.echoKey)}`),
          });
          return;
        }
        entry.injected.push(
          { anthropic: 'overloaded_error in stream', openai: 'error chunk in stream', responses: 'error event in stream' }[wire],
        );
        if (step.echoKey) entry.injected.push('key echoed in error');
        const { headers, head } = partial();
        const tail =
          wire === 'anthropic'
            ? anEvent({ type: 'error', error: { type: 'overloaded_error', message: `Overloaded${keyNote(step.echoKey)}` } })
            : wire === 'responses'
              ? anEvent({
                  type: 'error',
                  error: { type: 'server_error', code: 'server_error', message: `Overloaded${keyNote(step.echoKey)}`, param: null },
                })
              : `data: ${JSON.stringify({ error: { message: `Overloaded${keyNote(step.echoKey)}`, type: 'overloaded_error', code: 529 } })}\n\n`;
        await control.respond({ status: 200, headers, body: head + tail });
        return;
      }
      case 'reset':
        entry.injected.push('reset');
        destroy('reset');
        return;
      case 'cut': {
        entry.injected.push(step.how === 'destroy' ? 'stream cut (connection dropped)' : 'stream cut (ended early)');
        const { headers, head } = partial();
        writeHead(200, headers);
        for (const event of stream ? splitSseEvents(head) : [head]) {
          if (control.socket.destroyed) return;
          control.res.write(event);
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
        await wait(2);
        if (control.socket.destroyed) return;
        if (step.how === 'destroy') destroy('destroy');
        else control.res.end();
        return;
      }
      case 'malformed': {
        entry.injected.push(stream ? 'malformed sse line' : 'malformed json body');
        const { headers, head } = partial();
        const garbage = stream
          ? wire === 'openai'
            ? 'data: {"id":"chatcmpl-fault","choices":[{"index"\n\n'
            : wire === 'responses'
              ? 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":\n\n'
              : 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{\n\n'
          : '{"broken": tru';
        await control.respond({ status: 200, headers, body: head + garbage });
        return;
      }
      case 'stall': {
        entry.injected.push('stall mid-stream');
        const { headers, head } = partial();
        writeHead(200, headers);
        control.res.write(stream ? (splitSseEvents(head)[0] ?? head) : head.slice(0, 10));
        await wait(stallMs);
        if (!control.socket.destroyed) destroy('destroy');
        return;
      }
      case 'slow': {
        entry.injected.push('slow first byte');
        await wait(step.delayMs);
        if (control.socket.destroyed) return;
        await success(
          replyFor(
            step.reply === 'text'
              ? { kind: 'text', thinking: false }
              : { kind: 'tools', calls: [{ tool: 0, args: 'valid', n: 1 }], thinking: false, text: false },
          ),
        );
        return;
      }
    }
  }

  const steps: WireStep[] = Array.from({ length: count }, () => serve);
  const server = await startWireServer(steps);
  return {
    url: server.url,
    baseURL: wire === 'anthropic' ? server.url : `${server.url}/v1`,
    wire: server,
    log,
    injected: () => log.flatMap((entry) => entry.injected),
    async unreleased(timeoutMs = 1_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const open = log.filter((entry) => !entry.finished && !entry.destroyedByServer && !entry.socket.destroyed);
        if (open.length === 0 || Date.now() >= deadline) return open;
        await sleep(5);
      }
    },
    close: () => server.close(),
  };
}

// ---------------------------------------------------------------------------------------------
// A plan from a seed, for use without fast-check.

/**
 * A random plan of `length` steps (default 2–10) from a seed: the same seed gives the same plan.
 *
 * @example
 * ```ts
 * const plan = planFromSeed(7); // e.g. [{ kind: 'rateLimit', … }, { kind: 'tools', … }, …]
 * ```
 */
export function planFromSeed(seed: number, length?: number): FaultStep[] {
  // The PRNG `faultSoak` plans with (mulberry32).
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const bool = () => random() < 0.5;
  const call = (): CallSpec => ({
    tool: int(0, 7),
    args: pick(['valid', 'valid', 'valid', 'invalidJson', 'badSchema', 'huge'] as const),
    unknown: random() < 0.1,
    n: int(0, 9),
  });
  const step = (): FaultStep => {
    switch (
      pick([
        'text',
        'tools',
        'tools',
        'repeat',
        'empty',
        'rateLimit',
        'status',
        'inStreamError',
        'reset',
        'cut',
        'malformed',
        'stall',
        'slow',
      ] as const)
    ) {
      case 'text':
        return { kind: 'text', thinking: bool() };
      case 'tools':
        return { kind: 'tools', calls: Array.from({ length: int(1, 3) }, call), thinking: bool(), text: bool() };
      case 'repeat':
        return { kind: 'repeat' };
      case 'empty':
        return { kind: 'empty', body: bool() };
      case 'rateLimit':
        return {
          kind: 'rateLimit',
          retryAfter: random() < 0.2 ? null : { header: pick(['retry-after', 'retry-after-ms'] as const), ms: int(0, 30) },
          echoKey: bool(),
        };
      case 'status':
        return { kind: 'status', status: pick([400, 401, 500, 502, 503, 529] as const), echoKey: bool() };
      case 'inStreamError':
        return { kind: 'inStreamError', echoKey: bool() };
      case 'reset':
        return { kind: 'reset' };
      case 'cut':
        return { kind: 'cut', how: pick(['destroy', 'end'] as const) };
      case 'malformed':
        return { kind: 'malformed' };
      case 'stall':
        return { kind: 'stall' };
      case 'slow':
        return { kind: 'slow', delayMs: int(0, 400), reply: pick(['text', 'tools'] as const) };
    }
  };
  return Array.from({ length: length ?? int(2, 10) }, step);
}

export type { WireInteraction };
