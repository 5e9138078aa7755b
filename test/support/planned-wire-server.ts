/**
 * A local OpenAI Chat Completions server (node:http on 127.0.0.1) for many conversations at once:
 * each request is answered from its own history by `plan` (see `planStepOf`), so a request made
 * again after a crash gets the same answer — tool call ids included. Streams SSE chunks as the
 * real API does, with a delay before the first byte and between chunks so a client can be caught
 * in the middle of a request.
 */
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OpenAIChatMessage } from '../../src/providers/openai-wire/chat-types.js';
import { type PlanStep, planStepOf } from './planned-model.js';

export type PlannedAnswer = { text: string } | { toolCalls: Array<{ id: string; name: string; args: unknown }> };

/** One request as the server saw it: when, where its conversation stood (`planStepOf`), and the id of the response it got. */
export type PlannedRequest = { at: number; conversation: string; turn: number; round: number; responseId: string };

export type PlannedWireServer = {
  url: string;
  requests: () => number;
  /** Every request answered so far, in arrival order. */
  requestLog: () => PlannedRequest[];
  /** Requests whose history an earlier request already sent: requests made again. */
  repeats: () => number;
  close: () => Promise<void>;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const between = ([min, max]: [number, number]) => min + Math.random() * (max - min);

export async function startPlannedWireServer(
  plan: (step: PlanStep) => PlannedAnswer,
  options: {
    firstByteMs?: [number, number];
    chunkDelayMs?: [number, number];
    /** Called for each request, before it is answered. */
    onRequest?: () => void;
    /**
     * While it returns true for a request, its response does not start: it stays in flight. `worker`
     * is the request's `x-worker` header (the sending process's pid, in the cluster tests).
     */
    holdResponses?: (request: { step: PlanStep; worker: string | undefined }) => boolean;
    /** Requests it returns true for are answered 503 (overloaded), the first time their history is sent only. */
    failOnce?: (step: PlanStep) => boolean;
  } = {},
): Promise<PlannedWireServer> {
  const { firstByteMs = [0, 0], chunkDelayMs = [0, 0], onRequest, holdResponses, failOnce } = options;
  const failed = new Set<string>();
  let requests = 0;
  let serial = 0;
  const histories = new Set<string>();
  const log: PlannedRequest[] = [];
  let repeats = 0;
  const answer = async (res: ServerResponse, body: string, worker: string | undefined) => {
    const request = JSON.parse(body) as { messages: OpenAIChatMessage[]; stream?: boolean };
    requests++;
    const history = JSON.stringify(request.messages);
    if (histories.has(history)) repeats++;
    else histories.add(history);
    onRequest?.();
    const step = planStepOf(request.messages);
    if (failOnce?.(step) && !failed.has(history)) {
      failed.add(history);
      res.writeHead(503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'overloaded, try again', type: 'server_error' } }));
      return;
    }
    const planned = plan(step);
    const base = { id: `chatcmpl-${++serial}`, object: 'chat.completion.chunk', created: 1_700_000_000, model: 'planned' };
    log.push({ at: Date.now(), conversation: step.conversation, turn: step.turn, round: step.round, responseId: base.id });
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    const chunks = [chunk({ role: 'assistant', content: null })];
    if ('toolCalls' in planned) {
      planned.toolCalls.forEach((call, index) => {
        const args = JSON.stringify(call.args);
        chunks.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] }));
        chunks.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, 4) } }] }));
        chunks.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(4) } }] }));
      });
      chunks.push(chunk({}, 'tool_calls'));
    } else {
      for (const word of planned.text.split(/(?<= )/)) chunks.push(chunk({ content: word }));
      chunks.push(chunk({}, 'stop'));
    }
    chunks.push(
      `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 } })}\n\n`,
    );
    chunks.push('data: [DONE]\n\n');
    await sleep(between(firstByteMs));
    while (holdResponses?.({ step, worker }) && !res.destroyed) await sleep(5);
    // The client may be gone (a killed worker): nothing to answer then.
    if (res.destroyed || res.socket?.destroyed !== false) return;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const [index, text] of chunks.entries()) {
      if (res.destroyed) return;
      res.write(text);
      if (index < chunks.length - 1 && chunkDelayMs[1] > 0) await sleep(between(chunkDelayMs));
    }
    res.end();
  };
  const server = createServer((req, res) => {
    res.on('error', () => undefined);
    let body = '';
    req.on('data', (part: Buffer) => {
      body += part.toString();
    });
    req.on('end', () => {
      const worker = req.headers['x-worker'];
      answer(res, body, typeof worker === 'string' ? worker : undefined).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(error), type: 'server_error' } }));
      });
    });
  });
  // A client killed mid-request leaves a reset socket behind; that is the point, not a failure.
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    requestLog: () => [...log],
    repeats: () => repeats,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
