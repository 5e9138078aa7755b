/**
 * The chat clients of the SERVICE scenario (bench/service.ts), in a process of their own so the
 * servers' CPU is measured alone. Commands arrive over IPC (`child_process.fork`):
 *
 * - `{ type: 'run', side, url, token, n, batch, toolRounds }`: N chats at once, each one message
 *   answered in `toolRounds` tool rounds (5; the held run's 1) and a final text, on a fresh
 *   keep-alive `http.Agent` (no socket cap, one free socket kept per chat) destroyed after the run.
 *   actorloop sides: `POST /conversations/:id/messages` (202, body read), then
 *   `GET /conversations/:id/events` (the run's events from its first, as Server-Sent Events) read
 *   until a `state` event ends the run. AI SDK sides: `POST /api/chat` with useChat's body, the UI
 *   message stream read to its end (`finish`, `[DONE]`). A chat is right when its text is the wire
 *   server's final text and `toolRounds` tool results came. Answers wall time for all N, time to
 *   first delta per chat (from the first request sent to the first text or tool-call delta on the
 *   stream: actorloop's `text.delta` / `tool.call.delta`, the UI stream's `text-delta` /
 *   `tool-input-start` / `tool-input-delta` — on both, what the model's first chunk with content
 *   makes), events and bytes per chat, errors.
 * - `{ type: 'probe', side, url, token, chatId, toolRounds }`: a second reader of one chat in
 *   progress, as a client that reconnects would be — actorloop: `GET …/events` (replayed from the
 *   run's start, then live); `ai-sdk-resumable`: `GET /api/chat/:id/stream` (the stored stream id,
 *   resumed through Redis) — read to the end; answers whether it saw the whole answer.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { ServiceSide } from './service-server-process.js';

export type ServiceClientCommand =
  | {
      id: number;
      type: 'run';
      side: ServiceSide;
      url: string;
      token: string;
      n: number;
      batch: number;
      /** Tool rounds the wire server answers with before the final text (5; the held run 1). */
      toolRounds: number;
      timeoutMs: number;
    }
  | { id: number; type: 'probe'; side: ServiceSide; url: string; token: string; chatId: string; toolRounds: number; timeoutMs: number };

export type ServiceRunOutcome = {
  wallMs: number;
  /** Chats that ended right (the final text, 5 tool results). */
  ok: number;
  /** Time to first delta of every chat that saw one, ms. */
  firstDeltaMs: number[];
  events: number;
  bytes: number;
  clientCpuUs: number;
  errors: number;
  errorSamples: string[];
};
export type ServiceProbeOutcome = { ok: boolean; detail: string };
export type ServiceClientReply = { id: number; run?: ServiceRunOutcome; probe?: ServiceProbeOutcome };

/** What the wire server answers last (bench/wire-server-process.ts). */
export const finalText = 'The sum is done.';

type ChatResult = { firstDeltaMs: number | null; events: number; bytes: number; error: string | null };

/** Reads an SSE body block by block (`\n\n`), handing each block's `event:` and `data:` to `onBlock`. */
function readBlocks(
  response: import('node:http').IncomingMessage,
  onBlock: (event: string | undefined, data: string) => boolean,
  onEnd: (bytes: number) => void,
  onError: (error: Error) => void,
): void {
  let buffer = '';
  let bytes = 0;
  let stopped = false;
  response.setEncoding('utf8');
  response.on('data', (piece: string) => {
    if (stopped) return;
    bytes += piece.length;
    buffer += piece;
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event: string | undefined;
      let data = '';
      for (const line of block.split('\n')) {
        if (line.startsWith('data: ')) data = line.slice(6);
        else if (line.startsWith('event: ')) event = line.slice(7);
      }
      if (data === '') continue;
      if (onBlock(event, data)) {
        stopped = true;
        response.destroy();
        onEnd(bytes);
        return;
      }
    }
  });
  response.on('end', () => {
    if (!stopped) onEnd(bytes);
  });
  response.on('error', (error) => {
    if (!stopped) onError(error);
  });
}

type Follow = {
  /** Tool results the chat must see. */
  expectedToolResults: number;
  text: string;
  toolResults: number;
  events: number;
  firstDeltaAt: number | null;
  failure: string | null;
  /** The run's end came: a `state` event ending it, or the UI message stream's `[DONE]`. */
  ended: boolean;
};

/** What a chat has seen before its first event. */
function newFollow(expectedToolResults: number): Follow {
  return { expectedToolResults, text: '', toolResults: 0, events: 0, firstDeltaAt: null, failure: null, ended: false };
}

/** One actorloop stream block: returns true when the run ended. */
function actorloopBlock(state: Follow, event: string | undefined, data: string): boolean {
  state.events++;
  if (event === 'text.delta' || event === 'tool.call.delta') {
    state.firstDeltaAt ??= performance.now();
    if (event === 'text.delta') state.text += (JSON.parse(data) as { delta: string }).delta;
  } else if (event === 'tool.result') state.toolResults++;
  else if (event === 'state') {
    // Only a state event's status is read (its `value` comes first, so the status is found, not parsed).
    const status = /"status":"([^"]+)"/.exec(data)?.[1];
    if (status === 'done' || status === 'halted' || status === 'error' || status === 'awaitingApproval') {
      state.ended = true;
      if (status !== 'done') state.failure = `run ended ${status}: ${data.slice(0, 200)}`;
      // The events stream follows the conversation across runs: the client closes it.
      return true;
    }
  } else if (event === 'resume') {
    state.failure = `stream ended early: ${data}`;
    return true;
  }
  return false;
}

/** One UI message stream block; the stream ends by itself after `[DONE]`. */
function uiBlock(state: Follow, data: string): boolean {
  if (data === '[DONE]') {
    state.ended = true;
    return false;
  }
  state.events++;
  // The AI SDK writes `type` first: read it without parsing the chunk (only text deltas are parsed).
  const type = /^\{"type":"([^"]+)"/.exec(data)?.[1];
  // `tool-input-start` comes of the same wire chunk as actorloop's first `tool.call.delta` (the name, no arguments yet).
  if (type === 'text-delta' || type === 'tool-input-delta' || type === 'tool-input-start') {
    state.firstDeltaAt ??= performance.now();
    if (type === 'text-delta') state.text += (JSON.parse(data) as { delta: string }).delta;
  } else if (type === 'tool-output-available') state.toolResults++;
  else if (type === undefined || type === 'error' || type === 'tool-output-error' || type === 'abort') {
    state.failure = `stream ${type ?? 'chunk'}: ${data.slice(0, 200)}`;
  }
  return false;
}

function verdict(state: Follow): string | null {
  if (state.failure) return state.failure;
  if (!state.ended) return `the stream ended before the run did (${state.events} events)`;
  if (state.text !== finalText) return `wrong text: ${JSON.stringify(state.text.slice(0, 60))}`;
  if (state.toolResults !== state.expectedToolResults) return `${state.toolResults} tool results, expected ${state.expectedToolResults}`;
  return null;
}

function chat(agent: Agent, command: Extract<ServiceClientCommand, { type: 'run' }>, chatId: string): Promise<ChatResult> {
  const { side, url, token, timeoutMs } = command;
  return new Promise((resolve) => {
    const t0 = performance.now();
    const state = newFollow(command.toolRounds);
    const open: Array<import('node:http').ClientRequest> = [];
    let settled = false;
    const finish = (bytes: number, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      for (const req of open) req.destroy();
      resolve({
        firstDeltaMs: state.firstDeltaAt === null ? null : state.firstDeltaAt - t0,
        events: state.events,
        bytes,
        error: error ?? verdict(state),
      });
    };
    const timer = setTimeout(() => finish(0, `timeout after ${timeoutMs} ms (${state.events} events)`), timeoutMs);
    const headers = { authorization: `Bearer ${token}` };
    const post = (path: string, body: string, onResponse: (response: import('node:http').IncomingMessage) => void) => {
      const req = request(
        `${url}${path}`,
        {
          method: 'POST',
          agent,
          headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        onResponse,
      );
      open.push(req);
      req.on('error', (error) => finish(0, `POST ${path}: ${error.message}`));
      req.end(body);
    };
    try {
      if (side === 'actorloop-sqlite' || side === 'actorloop-postgres') {
        const path = `/conversations/${chatId}`;
        post(`${path}/messages`, JSON.stringify({ content: 'Add the numbers, five times.' }), (answer) => {
          answer.resume();
          if (answer.statusCode !== 202) return finish(0, `POST messages: ${answer.statusCode}`);
          // The body read (so the socket is free again), then the run's events, from its first.
          answer.on('end', () => {
            const events = request(`${url}${path}/events`, { agent, headers }, (response) => {
              if (response.statusCode !== 200) {
                response.resume();
                return finish(0, `GET events: ${response.statusCode}`);
              }
              readBlocks(
                response,
                (event, data) => actorloopBlock(state, event, data),
                (bytes) => finish(bytes, null),
                (error) => finish(0, `events: ${error.message}`),
              );
            });
            open.push(events);
            events.on('error', (error) => finish(0, `GET events: ${error.message}`));
            events.end();
          });
        });
      } else {
        const body = JSON.stringify({
          id: chatId,
          messages: [{ id: `${chatId}-m1`, role: 'user', parts: [{ type: 'text', text: 'Add the numbers, five times.' }] }],
          trigger: 'submit-message',
        });
        post('/api/chat', body, (response) => {
          if (response.statusCode !== 200) {
            response.resume();
            return finish(0, `POST /api/chat: ${response.statusCode}`);
          }
          readBlocks(
            response,
            (_event, data) => uiBlock(state, data),
            (bytes) => finish(bytes, null),
            (error) => finish(0, `stream: ${error.message}`),
          );
        });
      }
    } catch (error) {
      finish(0, `thrown: ${String(error)}`);
    }
  });
}

async function run(command: Extract<ServiceClientCommand, { type: 'run' }>): Promise<ServiceRunOutcome> {
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY, maxFreeSockets: command.n + 16 });
  const cpu = process.cpuUsage();
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: command.n }, (_, index) => chat(agent, command, `s${command.batch}-${index}`)));
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  agent.destroy();
  const failed = results.filter((result) => result.error !== null);
  return {
    wallMs,
    ok: results.length - failed.length,
    firstDeltaMs: results.flatMap((result) => (result.firstDeltaMs === null ? [] : [result.firstDeltaMs])),
    events: results.reduce((sum, result) => sum + result.events, 0),
    bytes: results.reduce((sum, result) => sum + result.bytes, 0),
    clientCpuUs: used.user + used.system,
    errors: failed.length,
    errorSamples: [...new Set(failed.map((result) => result.error as string))].slice(0, 5),
  };
}

function probe(command: Extract<ServiceClientCommand, { type: 'probe' }>): Promise<ServiceProbeOutcome> {
  const path = command.side === 'ai-sdk-resumable' ? `/api/chat/${command.chatId}/stream` : `/conversations/${command.chatId}/events`;
  return new Promise((resolve) => {
    const state = newFollow(command.toolRounds);
    const done = (detail: string | null) => {
      clearTimeout(timer);
      req.destroy();
      resolve(detail === null ? { ok: true, detail: `${state.events} events, the whole answer` } : { ok: false, detail });
    };
    const timer = setTimeout(() => done(`timeout (${state.events} events)`), command.timeoutMs);
    const req = request(`${command.url}${path}`, { headers: { authorization: `Bearer ${command.token}` } }, (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        return done(`GET ${path}: ${response.statusCode}`);
      }
      readBlocks(
        response,
        (event, data) => (command.side === 'ai-sdk-resumable' ? uiBlock(state, data) : actorloopBlock(state, event, data)),
        () => done(verdict(state)),
        (error) => done(`GET ${path}: ${error.message}`),
      );
    });
    req.on('error', (error) => done(`GET ${path}: ${error.message}`));
    req.end();
  });
}

process.on('message', async (command: ServiceClientCommand) => {
  const reply: ServiceClientReply =
    command.type === 'run' ? { id: command.id, run: await run(command) } : { id: command.id, probe: await probe(command) };
  process.send?.(reply);
});
process.on('disconnect', () => process.exit(0));
