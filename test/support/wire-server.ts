/**
 * A local HTTP server that plays scripted responses to the real SDKs, so provider tests go through
 * real sockets, real SSE parsing and real SDK error classes instead of mocked SDK methods.
 *
 * Steps are served strictly in order: the n-th request gets `steps[n]`, whatever it asks for, the
 * way the recorded cassettes must be replayed (other clients recorded the request bodies, so
 * matching on them would be wrong). Compare requests afterwards with {@link assertRequestMatches}.
 *
 * @example
 * ```ts
 * const server = await startWireServer([{ status: 200, headers: { 'content-type': 'text/event-stream' }, body: sse }]);
 * const client = new OpenAI({ apiKey: 'test', baseURL: server.url + '/v1', maxRetries: 0 });
 * // … run the request …
 * await server.close();
 * ```
 */
import { readFileSync, existsSync, readdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { deepStrictEqual } from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type WireInteraction = {
  request: { method: string; path: string; body: unknown };
  /**
   * `bodyEncoding: 'base64'`: `body` is the base64 of binary bytes (Bedrock's AWS event-stream
   * framing), served as those bytes, never as the string.
   */
  response: { status: number; headers: Record<string, string>; body: string; bodyEncoding?: 'base64' };
};

/** What the server received, body parsed as JSON when it is JSON (else the raw text). */
export type ReceivedRequest = {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  rawBody: string;
};

/** Raw access for fault steps: write what you like, cut the socket, delay, wait for the client. */
export type StepControl = {
  req: IncomingMessage;
  res: ServerResponse;
  socket: Socket;
  /** Resolves when the client's connection closes (an abort, a reset, or the end of keep-alive). */
  clientClosed: Promise<void>;
  /** Waits, but gives up early when the client closes the connection. */
  sleep(ms: number): Promise<void>;
  /** Writes status and headers, then the body, one SSE event per write when it is a stream. */
  respond(response: WireInteraction['response'], options?: { chunkDelayMs?: number }): Promise<void>;
};

export type WireStep = WireInteraction['response'] | ((request: ReceivedRequest, control: StepControl) => void | Promise<void>);

export interface WireServer {
  /** `http://127.0.0.1:PORT`, no trailing slash. */
  url: string;
  requests: ReceivedRequest[];
  /** How many client sockets have closed so far. */
  closedSockets(): number;
  /** How many client sockets are open now. */
  openSockets(): number;
  /** Resolves once at least `count` sockets have closed; rejects after `timeoutMs`. */
  waitForClosedSockets(count: number, timeoutMs?: number): Promise<void>;
  /**
   * Resolves once the connection that carried request `index` (0-based) has closed; rejects after
   * `timeoutMs`. Stronger than counting sockets: a client may open a fresh idle connection after
   * destroying one.
   */
  waitForRequestSocketClosed(index: number, timeoutMs?: number): Promise<void>;
  /** Steps not yet served. */
  remainingSteps(): number;
  /** Errors thrown by function steps (they also produce a 500 when nothing was written yet). */
  stepErrors: unknown[];
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isEventStream(headers: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === 'content-type' && value.toLowerCase().includes('text/event-stream')) return true;
  }
  return false;
}

/** Splits an SSE body after each blank line, keeping every byte, so events can be flushed one by one. */
export function splitSseEvents(body: string): string[] {
  const events: string[] = [];
  let start = 0;
  for (;;) {
    const end = body.indexOf('\n\n', start);
    if (end === -1) break;
    events.push(body.slice(start, end + 2));
    start = end + 2;
  }
  if (start < body.length) events.push(body.slice(start));
  return events;
}

function isAwsEventStream(headers: Record<string, string>): boolean {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === 'content-type' && value.toLowerCase().includes('application/vnd.amazon.eventstream')) return true;
  }
  return false;
}

/**
 * Splits AWS event-stream bytes into their frames (each starts with its own total length, 4 bytes
 * big-endian), so a recorded Bedrock stream reaches the client frame by frame as it did live.
 */
export function splitAwsEventStreamFrames(bytes: Buffer): Buffer[] {
  const frames: Buffer[] = [];
  let start = 0;
  while (start + 4 <= bytes.length) {
    const length = bytes.readUInt32BE(start);
    // A length that does not fit is not framing: the rest goes as it is.
    if (length < 16 || start + length > bytes.length) break;
    frames.push(bytes.subarray(start, start + length));
    start += length;
  }
  if (start < bytes.length) frames.push(bytes.subarray(start));
  return frames;
}

async function writeBytes(
  res: ServerResponse,
  bytes: Buffer,
  headers: Record<string, string>,
  chunkDelayMs: number,
  isClosed: () => boolean,
): Promise<void> {
  if (!isAwsEventStream(headers)) {
    res.end(bytes);
    return;
  }
  res.flushHeaders();
  for (const frame of splitAwsEventStreamFrames(bytes)) {
    if (isClosed()) return;
    res.write(frame);
    if (chunkDelayMs > 0) await sleep(chunkDelayMs);
    else await new Promise<void>((resolve) => setImmediate(resolve));
  }
  if (!isClosed()) res.end();
}

async function writeResponse(
  res: ServerResponse,
  response: WireInteraction['response'],
  chunkDelayMs: number,
  isClosed: () => boolean,
): Promise<void> {
  res.writeHead(response.status, response.headers);
  if (response.bodyEncoding === 'base64') {
    await writeBytes(res, Buffer.from(response.body, 'base64'), response.headers, chunkDelayMs, isClosed);
    return;
  }
  if (!isEventStream(response.headers)) {
    res.end(response.body);
    return;
  }
  res.flushHeaders();
  for (const event of splitSseEvents(response.body)) {
    if (isClosed()) return;
    res.write(event);
    // Yield between events so the client really receives a stream, not one buffer.
    if (chunkDelayMs > 0) await sleep(chunkDelayMs);
    else await new Promise<void>((resolve) => setImmediate(resolve));
  }
  if (!isClosed()) res.end();
}

function parseBody(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}

/**
 * Starts a server on 127.0.0.1 with an ephemeral port.
 *
 * @example
 * ```ts
 * const server = await startWireServer([
 *   (request, control) => control.socket.destroy(), // reset before any byte
 *   { status: 200, headers: { 'content-type': 'application/json' }, body: '{}' },
 * ]);
 * ```
 */
export async function startWireServer(steps: WireStep[], options: { chunkDelayMs?: number } = {}): Promise<WireServer> {
  const chunkDelayMs = options.chunkDelayMs ?? 0;
  const requests: ReceivedRequest[] = [];
  const stepErrors: unknown[] = [];
  const sockets = new Set<Socket>();
  let closed = 0;
  const closeWaiters: Array<() => void> = [];
  const requestSockets: Socket[] = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void handle(req, res, Buffer.concat(chunks).toString('utf8'));
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    // Each request on a keep-alive connection adds one close listener (its `clientClosed`).
    socket.setMaxListeners(0);
    socket.on('close', () => {
      sockets.delete(socket);
      closed++;
      for (const wake of closeWaiters.splice(0)) wake();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse, rawBody: string): Promise<void> {
    const index = requests.length;
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const request: ReceivedRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      headers: { ...req.headers },
      body: parseBody(rawBody),
      rawBody,
    };
    requests.push(request);
    const socket = req.socket;
    requestSockets.push(socket);
    let socketClosed = socket.destroyed;
    const clientClosed = new Promise<void>((resolve) => {
      if (socketClosed) resolve();
      socket.once('close', () => {
        socketClosed = true;
        resolve();
      });
    });
    const isClosed = () => socketClosed || res.destroyed;

    const step = steps[index];
    if (step === undefined) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            message: `wire-server: request #${index + 1} (${request.method} ${request.path}) has no scripted step; the script has ${steps.length} step(s)`,
            type: 'wire_server_script_overflow',
          },
        }),
      );
      return;
    }
    try {
      if (typeof step === 'function') {
        const control: StepControl = {
          req,
          res,
          socket,
          clientClosed,
          sleep: (ms) => Promise.race([sleep(ms), clientClosed]),
          respond: (response, respondOptions) => writeResponse(res, response, respondOptions?.chunkDelayMs ?? chunkDelayMs, isClosed),
        };
        await step(request, control);
      } else {
        await writeResponse(res, step, chunkDelayMs, isClosed);
      }
    } catch (error) {
      stepErrors.push(error);
      if (!res.headersSent && !isClosed()) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({ error: { message: `wire-server: step #${index + 1} threw: ${String(error)}`, type: 'wire_server_step_error' } }),
        );
      } else if (!isClosed()) {
        socket.destroy();
      }
    }
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stepErrors,
    closedSockets: () => closed,
    openSockets: () => sockets.size,
    remainingSteps: () => Math.max(0, steps.length - requests.length),
    async waitForClosedSockets(count, timeoutMs = 2_000) {
      const deadline = Date.now() + timeoutMs;
      while (closed < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`wire-server: expected ${count} closed socket(s) within ${timeoutMs} ms, saw ${closed}`);
        await Promise.race([new Promise<void>((resolve) => closeWaiters.push(resolve)), sleep(left)]);
      }
    },
    async waitForRequestSocketClosed(index, timeoutMs = 2_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const socket = requestSockets[index];
        if (socket?.destroyed && !sockets.has(socket)) return;
        const left = deadline - Date.now();
        if (left <= 0) {
          throw new Error(
            `wire-server: the connection of request #${index + 1} did not close within ${timeoutMs} ms${socket ? '' : ' (no such request)'}`,
          );
        }
        await Promise.race([new Promise<void>((resolve) => closeWaiters.push(resolve)), sleep(Math.min(left, 50))]);
      }
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** A port nothing listens on (bound, then released), for connection-refused tests. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

// ---------------------------------------------------------------------------------------------
// Building responses for hand-written fixtures.

/** An SSE body in the Chat Completions framing: `data: <json>` per chunk, then `data: [DONE]`. */
export function openaiSse(chunks: unknown[], options: { done?: boolean } = {}): WireInteraction['response'] {
  let body = '';
  for (const chunk of chunks) body += `data: ${typeof chunk === 'string' ? chunk : JSON.stringify(chunk)}\n\n`;
  if (options.done ?? true) body += 'data: [DONE]\n\n';
  return { status: 200, headers: { 'content-type': 'text/event-stream' }, body };
}

/** An SSE body in the Anthropic framing: `event: <type>` + `data: <json>` per event. */
export function anthropicSse(events: Array<{ type: string } & Record<string, unknown>>): WireInteraction['response'] {
  let body = '';
  for (const event of events) body += `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
  return { status: 200, headers: { 'content-type': 'text/event-stream' }, body };
}

/** A streamed Anthropic answer of one text block, ending `end_turn`. */
export function anthropicTextSse(text: string, model = 'claude-sonnet-4-5'): WireInteraction['response'] {
  return anthropicSse([
    {
      type: 'message_start',
      message: {
        id: 'msg_text',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        usage: { input_tokens: 9, output_tokens: 0 },
      },
    },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } },
    { type: 'message_stop' },
  ]);
}

/** A JSON response. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): WireInteraction['response'] {
  return { status, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

// ---------------------------------------------------------------------------------------------
// Recorded cassettes (/work/shared/fixtures/recorded, never copied into the repo).

export type CassetteInteraction = WireInteraction & { bodyReserialized?: boolean; note?: string };

export type Cassette = {
  provider: string;
  source?: { repo?: string; path?: string; commit?: string; note?: string };
  description?: string;
  framing?: 'recorded' | 'added' | string;
  interactions: CassetteInteraction[];
  /** The file name without `.json`. */
  name: string;
  file: string;
};

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Where the recorded cassettes live: next to the repository, never inside it. */
export const recordedFixturesDir = path.resolve(repoRoot, '../shared/fixtures/recorded');

/** True when the recorded cassettes are present on this machine. */
export const hasRecordedFixtures = existsSync(path.join(recordedFixturesDir, 'README.md'));

/** A one-line note for a skipped suite. */
export const missingRecordedFixturesNote = `recorded cassettes not found at ${recordedFixturesDir}; skipping the replay suite`;

/**
 * Reads one cassette.
 *
 * @example
 * ```ts
 * const cassette = loadCassette(path.join(recordedFixturesDir, 'openai/fantasy-gpt-4o-mini-tool-streaming.json'));
 * const server = await startWireServer(cassette.interactions.map((interaction) => interaction.response));
 * ```
 */
export function loadCassette(file: string): Cassette {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Omit<Cassette, 'name' | 'file'>;
  if (!Array.isArray(parsed.interactions)) throw new Error(`loadCassette: ${file} has no interactions array`);
  return { ...parsed, name: path.basename(file, '.json'), file };
}

/** Every cassette of one folder (`openai`, `anthropic`, …), sorted by name; empty when absent. */
export function listCassettes(folder: string): Cassette[] {
  const dir = path.join(recordedFixturesDir, folder);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => loadCassette(path.join(dir, name)));
}

/** The responses of a cassette, as steps for {@link startWireServer}. */
export function cassetteSteps(cassette: Cassette): WireStep[] {
  return cassette.interactions.map((interaction) => interaction.response);
}

// ---------------------------------------------------------------------------------------------
// Comparing requests: only what matters to the conversation, not what each client sets its own way.

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

type NormalizedMessage = {
  role: string;
  text: string;
  toolCalls: Array<{ id: string; name: string; args: unknown }>;
  toolResults: Array<{ id: string; content: string; isError?: boolean }>;
  reasoning: Array<{ type: 'thinking'; thinking: string; signature: unknown } | { type: 'redacted_thinking'; data: unknown }>;
};

type NormalizedRequest = { model: unknown; system: string; messages: NormalizedMessage[]; tools: string[] };

function parseArgs(args: unknown): unknown {
  if (typeof args !== 'string') return args ?? {};
  if (args.trim() === '') return {};
  try {
    return JSON.parse(args) as unknown;
  } catch {
    return args;
  }
}

/** Text of a string or of an array of `{type:'text', text}` blocks (other blocks ignored). */
function textContent(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const block of content) if (isRecord(block) && block.type === 'text' && typeof block.text === 'string') text += block.text;
  return text;
}

function emptyMessage(role: string): NormalizedMessage {
  return { role, text: '', toolCalls: [], toolResults: [], reasoning: [] };
}

function normalizeOpenAI(body: Json): NormalizedRequest {
  const messages: NormalizedMessage[] = [];
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isRecord(message)) continue;
    const role = String(message.role);
    const normalized = emptyMessage(role === 'developer' ? 'system' : role);
    if (role === 'tool') {
      normalized.toolResults.push({ id: String(message.tool_call_id), content: textContent(message.content) });
    } else {
      normalized.text = textContent(message.content);
    }
    for (const call of Array.isArray(message.tool_calls) ? message.tool_calls : []) {
      if (!isRecord(call) || !isRecord(call.function)) continue;
      normalized.toolCalls.push({ id: String(call.id), name: String(call.function.name), args: parseArgs(call.function.arguments) });
    }
    messages.push(normalized);
  }
  const tools = (Array.isArray(body.tools) ? body.tools : []).map((tool: unknown) =>
    isRecord(tool) && isRecord(tool.function) ? String(tool.function.name) : isRecord(tool) ? String(tool.name) : '?',
  );
  return { model: body.model, system: '', messages, tools };
}

function normalizeAnthropic(body: Json): NormalizedRequest {
  const messages: NormalizedMessage[] = [];
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    if (!isRecord(message)) continue;
    const normalized = emptyMessage(String(message.role));
    if (typeof message.content === 'string') normalized.text = message.content;
    for (const block of Array.isArray(message.content) ? message.content : []) {
      if (!isRecord(block)) continue;
      switch (block.type) {
        case 'text':
          normalized.text += typeof block.text === 'string' ? block.text : '';
          break;
        case 'thinking':
          normalized.reasoning.push({ type: 'thinking', thinking: String(block.thinking), signature: block.signature });
          break;
        case 'redacted_thinking':
          normalized.reasoning.push({ type: 'redacted_thinking', data: block.data });
          break;
        case 'tool_use':
          normalized.toolCalls.push({ id: String(block.id), name: String(block.name), args: block.input ?? {} });
          break;
        case 'tool_result':
          normalized.toolResults.push({
            id: String(block.tool_use_id),
            content: textContent(block.content),
            ...(block.is_error === true ? { isError: true } : {}),
          });
          break;
      }
    }
    messages.push(normalized);
  }
  const system = typeof body.system === 'string' ? body.system : textContent(body.system);
  const tools = (Array.isArray(body.tools) ? body.tools : []).map((tool: unknown) => (isRecord(tool) ? String(tool.name) : '?'));
  return { model: body.model, system, messages, tools };
}

const anthropicBlockTypes = new Set(['tool_use', 'tool_result', 'thinking', 'redacted_thinking', 'image', 'document']);

/** Anthropic bodies carry `system` at the top, Anthropic-only blocks, or tools with `input_schema`. */
function looksAnthropic(body: Json): boolean {
  if (body.system !== undefined) return true;
  if (Array.isArray(body.tools) && body.tools.some((tool) => isRecord(tool) && 'input_schema' in tool)) return true;
  return (Array.isArray(body.messages) ? body.messages : []).some(
    (message) =>
      isRecord(message) &&
      Array.isArray(message.content) &&
      message.content.some((block) => isRecord(block) && anthropicBlockTypes.has(String(block.type))),
  );
}

/** Reduces either wire's request body to what {@link assertRequestMatches} compares. */
export function normalizeRequestBody(body: unknown, dialect?: 'openai' | 'anthropic'): NormalizedRequest {
  if (!isRecord(body))
    throw new Error(`normalizeRequestBody: expected a JSON object request body, got ${JSON.stringify(body)?.slice(0, 80)}`);
  const anthropic = dialect === undefined ? looksAnthropic(body) : dialect === 'anthropic';
  return anthropic ? normalizeAnthropic(body) : normalizeOpenAI(body);
}

export type RequestMatchOptions = {
  /** Compare the model name (default true). */
  model?: boolean;
  /** Compare the text of user, system and assistant messages (default true). */
  text?: boolean;
  /** Compare tool names offered (default true). */
  tools?: boolean;
};

/**
 * Checks that a request we sent carries the same conversation as a recorded one: model, message
 * roles in order, texts, tool calls (ids, names, parsed arguments) and tool results of previous
 * rounds, Anthropic thinking and redacted-thinking blocks byte-identical (signatures included), and
 * tool names. Sampling parameters, `stream_options`, `strict`, tool schemas and key order are
 * ignored: every client sets those its own way. Throws an assertion error with a diff on mismatch.
 *
 * @example
 * ```ts
 * assertRequestMatches(cassette.interactions[1].request, server.requests[1]);
 * ```
 */
export function assertRequestMatches(recorded: unknown, received: unknown, options: RequestMatchOptions = {}): void {
  const recordedBody = isRecord(recorded) && 'method' in recorded && 'body' in recorded ? recorded.body : recorded;
  const receivedBody = isRecord(received) && 'rawBody' in received && 'body' in received ? received.body : received;
  if (recordedBody === null || recordedBody === undefined)
    throw new Error('assertRequestMatches: the recording has no request body to compare with');
  if (!isRecord(recordedBody) || !isRecord(receivedBody)) {
    throw new Error('assertRequestMatches: both request bodies must be JSON objects');
  }
  const dialect = looksAnthropic(recordedBody) || looksAnthropic(receivedBody) ? 'anthropic' : 'openai';
  const expected = normalizeRequestBody(recordedBody, dialect);
  const actual = normalizeRequestBody(receivedBody, dialect);
  if (options.model === false) expected.model = actual.model = undefined;
  if (options.tools === false) expected.tools = actual.tools = [];
  if (options.text === false) {
    for (const message of [...expected.messages, ...actual.messages]) message.text = '';
    expected.system = actual.system = '';
  }
  deepStrictEqual(actual, expected, 'the request sent does not match the recorded request');
}
