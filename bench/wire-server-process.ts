/**
 * The bench's model: a local OpenAI Chat Completions server, run as its own process
 * (`child_process.fork`) so its CPU never counts against the client being measured.
 *
 * Stateless per request: it counts the `"role":"tool"` messages in the request body (one per
 * completed round, as each round makes one call) and answers with the next tool call
 * (`add {"a":<round>,"b":1}`, id `call_<round>`) until `rounds` are done, then with a final text.
 * Streaming requests get SSE in OpenAI's chunk shapes (role chunk, split tool-call argument
 * deltas or text deltas, finish chunk, usage chunk, `[DONE]`); non-streaming ones a
 * `chat.completion`. `latencyMs` delays the first byte of every response.
 *
 * Control over IPC: `{ type: 'config', latencyMs, rounds }`, `{ type: 'stats' }`, `{ type: 'reset' }`;
 * every message is answered with `{ type: 'ack' | 'stats', id, ... }`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type WireConfig = { latencyMs: number; rounds: number };
export type WireStats = {
  requests: number;
  streamed: number;
  nonStreamed: number;
  toolCallResponses: number;
  textResponses: number;
  badRequests: number;
  openSockets: number;
  peakOpenSockets: number;
  acceptedSockets: number;
  cpuUserUs: number;
  cpuSystemUs: number;
  peakRssBytes: number;
};
export type WireControlMessage = { id: number } & ({ type: 'config'; config: Partial<WireConfig> } | { type: 'stats' } | { type: 'reset' });
export type WireReply =
  | { type: 'ready'; url: string; backlog: number }
  | { type: 'ack'; id: number; config: WireConfig }
  | { type: 'stats'; id: number; stats: WireStats };

const config: WireConfig = { latencyMs: 0, rounds: 20 };
const counters = { requests: 0, streamed: 0, nonStreamed: 0, toolCallResponses: 0, textResponses: 0, badRequests: 0 };
let openSockets = 0;
let peakOpenSockets = 0;
let acceptedSockets = 0;

const created = 1_700_000_000;
const model = 'bench-model';
const finalText = ['The ', 'sum ', 'is ', 'done', '.'];

function countToolMessages(body: string): number {
  let count = 0;
  let at = body.indexOf('"role":"tool"');
  while (at !== -1) {
    count++;
    at = body.indexOf('"role":"tool"', at + 13);
  }
  return count;
}

const sse = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const usage = (completionTokens: number) => ({
  prompt_tokens: 50,
  completion_tokens: completionTokens,
  total_tokens: 50 + completionTokens,
});

function streamBody(id: string, round: number | null): string {
  const base = { id, object: 'chat.completion.chunk', created, model };
  let out = sse({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: null }, finish_reason: null }] });
  if (round !== null) {
    const args = `{"a":${round},"b":1}`;
    const cut = Math.floor(args.length / 2);
    out += sse({
      ...base,
      choices: [
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: `call_${round}`, type: 'function', function: { name: 'add', arguments: '' } }] },
          finish_reason: null,
        },
      ],
    });
    for (const piece of [args.slice(0, cut), args.slice(cut)]) {
      out += sse({
        ...base,
        choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] }, finish_reason: null }],
      });
    }
    out += sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
    out += sse({ ...base, choices: [], usage: usage(12) });
  } else {
    for (const piece of finalText) out += sse({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
    out += sse({ ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] });
    out += sse({ ...base, choices: [], usage: usage(finalText.length) });
  }
  return `${out}data: [DONE]\n\n`;
}

function jsonBody(id: string, round: number | null): string {
  const message =
    round !== null
      ? {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: `call_${round}`, type: 'function', function: { name: 'add', arguments: `{"a":${round},"b":1}` } }],
        }
      : { role: 'assistant', content: finalText.join('') };
  return JSON.stringify({
    id,
    object: 'chat.completion',
    created,
    model,
    choices: [{ index: 0, message, finish_reason: round !== null ? 'tool_calls' : 'stop', logprobs: null }],
    usage: usage(round !== null ? 12 : finalText.length),
  });
}

function respond(req: IncomingMessage, res: ServerResponse, raw: string): void {
  if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
    counters.badRequests++;
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":{"message":"not found","type":"invalid_request_error"}}');
    return;
  }
  counters.requests++;
  const streaming = raw.includes('"stream":true');
  const done = countToolMessages(raw);
  const round = done < config.rounds ? done + 1 : null;
  if (round === null) counters.textResponses++;
  else counters.toolCallResponses++;
  const id = `chatcmpl-${counters.requests}`;
  if (streaming) {
    counters.streamed++;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.end(streamBody(id, round));
  } else {
    counters.nonStreamed++;
    const body = jsonBody(id, round);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  }
}

const server = createServer({ keepAliveTimeout: 65_000, requestTimeout: 0, headersTimeout: 120_000 }, (req, res) => {
  const parts: Buffer[] = [];
  req.on('data', (part: Buffer) => parts.push(part));
  req.on('end', () => {
    const raw = Buffer.concat(parts).toString('utf8');
    if (config.latencyMs > 0) setTimeout(() => respond(req, res, raw), config.latencyMs);
    else respond(req, res, raw);
  });
});
// No connection cap; the listen backlog is raised as far as the kernel allows (net.core.somaxconn caps it).
server.maxConnections = Number.POSITIVE_INFINITY;
server.on('connection', (socket: Socket) => {
  acceptedSockets++;
  openSockets++;
  if (openSockets > peakOpenSockets) peakOpenSockets = openSockets;
  socket.on('close', () => openSockets--);
});

const backlog = 65_535;
server.listen({ host: '127.0.0.1', port: 0, backlog }, () => {
  const { port } = server.address() as AddressInfo;
  process.send?.({ type: 'ready', url: `http://127.0.0.1:${port}`, backlog } satisfies WireReply);
});

process.on('message', (message: WireControlMessage) => {
  if (message.type === 'config') {
    Object.assign(config, message.config);
    process.send?.({ type: 'ack', id: message.id, config: { ...config } } satisfies WireReply);
  } else if (message.type === 'reset') {
    for (const key of Object.keys(counters) as Array<keyof typeof counters>) counters[key] = 0;
    peakOpenSockets = openSockets;
    acceptedSockets = 0;
    process.send?.({ type: 'ack', id: message.id, config: { ...config } } satisfies WireReply);
  } else if (message.type === 'stats') {
    const cpu = process.cpuUsage();
    process.send?.({
      type: 'stats',
      id: message.id,
      stats: {
        ...counters,
        openSockets,
        peakOpenSockets,
        acceptedSockets,
        cpuUserUs: cpu.user,
        cpuSystemUs: cpu.system,
        peakRssBytes: process.resourceUsage().maxRSS * 1024,
      },
    } satisfies WireReply);
  }
});
// The parent going away ends the server.
process.on('disconnect', () => process.exit(0));
