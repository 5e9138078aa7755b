/**
 * A local replay server for the examples' offline mode: node:http on 127.0.0.1 (a free port),
 * answering with a script's replies in the real wire formats, so `openaiProvider` and
 * `anthropicProvider` run through the real `openai` and `@anthropic-ai/sdk` clients, real HTTP and
 * real SSE parsing. Responses are built from the script at request time; nothing is recorded.
 *
 * - `POST /v1/chat/completions`: OpenAI Chat Completions, streamed (`data:` lines, usage last,
 *   `[DONE]`) or one `chat.completion` JSON body;
 * - `POST /v1/messages`: Anthropic Messages, streamed (`event:`/`data:` pairs) or one message;
 * - `GET /v1/models`: one model, `scripted-model`.
 *
 * `faults` are served first, one per request, before the script answers (to show retries).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OpenAIChatMessage } from 'actorloop/openai';
import { callsOf, chatChunks, type Script, type ScriptReply, type ScriptView, scriptedUsage, viewOfChatMessages, words } from './script.js';

export type ReplayFault = { status: number; body: unknown; headers?: Record<string, string> };

export type ReplayServer = {
  /** `http://127.0.0.1:PORT` */
  url: string;
  /** The `baseURL` for the `openai` SDK (`…/v1`). */
  openaiBaseURL: string;
  /** The `baseURL` for `@anthropic-ai/sdk` (it adds `/v1` itself). */
  anthropicBaseURL: string;
  /** Requests answered so far, faults included. */
  requests(): number;
  close(): Promise<void>;
};

type AnthropicBlock = { type: string; text?: string; content?: unknown };
type AnthropicRequest = { messages?: Array<{ role: string; content: string | AnthropicBlock[] }>; stream?: boolean };
type ChatRequest = { messages?: OpenAIChatMessage[]; stream?: boolean; stream_options?: { include_usage?: boolean } };

/** The script's view of an Anthropic Messages request. */
function viewOfAnthropicMessages(messages: NonNullable<AnthropicRequest['messages']>): ScriptView {
  let userText = '';
  const toolResults: string[] = [];
  let turn = 0;
  for (const message of messages) {
    if (message.role === 'assistant') {
      turn++;
      continue;
    }
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    const text = blocks.map((block) => (block.type === 'text' ? (block.text ?? '') : '')).join('');
    if (text !== '') userText = text;
    for (const block of blocks) {
      if (block.type !== 'tool_result') continue;
      const content = block.content;
      toolResults.push(
        typeof content === 'string'
          ? content
          : Array.isArray(content)
            ? content.map((part: AnthropicBlock) => part.text ?? '').join('')
            : '',
      );
    }
  }
  return { userText, toolResults, turn };
}

function chatCompletion(reply: ScriptReply, turn: number, usage: { input: number; output: number }) {
  const calls = callsOf(reply, turn);
  return {
    id: `chatcmpl-scripted-${turn}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: 'scripted-model',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? null,
          ...(calls.length === 0
            ? {}
            : {
                tool_calls: calls.map((call) => ({
                  id: call.id,
                  type: 'function',
                  function: { name: call.name, arguments: call.argsText },
                })),
              }),
        },
        finish_reason: calls.length === 0 ? 'stop' : 'tool_calls',
      },
    ],
    usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output },
  };
}

type AnthropicContent =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

/** Content blocks of an Anthropic answer: thinking (with a signature), text, tool uses. */
function anthropicBlocks(reply: ScriptReply, turn: number): AnthropicContent[] {
  return [
    ...(reply.reasoning ? [{ type: 'thinking' as const, thinking: reply.reasoning, signature: `scripted-signature-${turn}` }] : []),
    ...(reply.text ? [{ type: 'text' as const, text: reply.text }] : []),
    ...callsOf(reply, turn).map((call) => ({
      type: 'tool_use' as const,
      id: `toolu_${call.id}`,
      name: call.name,
      input: JSON.parse(call.argsText) as unknown,
    })),
  ];
}

function anthropicMessage(reply: ScriptReply, turn: number, usage: { input: number; output: number }) {
  return {
    id: `msg_scripted_${turn}`,
    type: 'message',
    role: 'assistant',
    model: 'scripted-model',
    content: anthropicBlocks(reply, turn),
    stop_reason: reply.toolCalls?.length ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: usage.input, output_tokens: usage.output },
  };
}

/** The same answer as the events of a streamed Messages response. */
function anthropicEvents(reply: ScriptReply, turn: number, usage: { input: number; output: number }): Array<Record<string, unknown>> {
  const message = anthropicMessage(reply, turn, usage);
  const events: Array<Record<string, unknown>> = [
    {
      type: 'message_start',
      message: { ...message, content: [], stop_reason: null, usage: { input_tokens: usage.input, output_tokens: 1 } },
    },
  ];
  message.content.forEach((block, index) => {
    if (block.type === 'thinking') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } });
      for (const piece of words(block.thinking))
        events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: block.signature } });
    } else if (block.type === 'text') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      for (const piece of words(block.text))
        events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
    } else if (block.type === 'tool_use') {
      events.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
    }
    events.push({ type: 'content_block_stop', index });
  });
  events.push({
    type: 'message_delta',
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: usage.output },
  });
  events.push({ type: 'message_stop' });
  return events;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Writes SSE events one at a time, with a short pause, so the client really receives a stream. */
async function writeStream(response: ServerResponse, events: string[]): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) {
    if (response.destroyed) return;
    response.write(event);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  response.end();
}

function writeJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/**
 * Starts the server. Close it when done: it keeps the process alive.
 *
 * @example
 * ```ts
 * const server = await startReplayServer(() => ({ text: 'Hello from the replay server.' }));
 * const provider = openaiProvider({ model: 'scripted-model', baseURL: server.openaiBaseURL, apiKey: 'offline' });
 * // … run a conversation …
 * await server.close();
 * ```
 */
export async function startReplayServer(script: Script, options: { faults?: ReplayFault[] } = {}): Promise<ReplayServer> {
  const faults = [...(options.faults ?? [])];
  let served = 0;

  const answer = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    const text = await readBody(request);
    if (request.method === 'GET' && path === '/v1/models') {
      writeJson(response, 200, {
        object: 'list',
        data: [{ id: 'scripted-model', object: 'model', created: 0, owned_by: 'actorloop-examples' }],
      });
      return;
    }
    served++;
    const fault = faults.shift();
    if (fault) {
      writeJson(response, fault.status, fault.body, fault.headers);
      return;
    }
    if (request.method === 'POST' && path === '/v1/chat/completions') {
      const body = JSON.parse(text) as ChatRequest;
      const view = viewOfChatMessages(body.messages ?? []);
      const reply = script(view);
      const usage = scriptedUsage(text, reply);
      if (!body.stream) {
        writeJson(response, 200, chatCompletion(reply, view.turn, usage));
        return;
      }
      const chunks = chatChunks(reply, view.turn, usage).filter((chunk) => body.stream_options?.include_usage || !chunk.usage);
      await writeStream(response, [...chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`), 'data: [DONE]\n\n']);
      return;
    }
    if (request.method === 'POST' && path === '/v1/messages') {
      const body = JSON.parse(text) as AnthropicRequest;
      const view = viewOfAnthropicMessages(body.messages ?? []);
      const reply = script(view);
      const usage = scriptedUsage(text, reply);
      if (!body.stream) {
        writeJson(response, 200, anthropicMessage(reply, view.turn, usage));
        return;
      }
      const events = anthropicEvents(reply, view.turn, usage);
      await writeStream(
        response,
        events.map((event) => `event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`),
      );
      return;
    }
    writeJson(response, 404, {
      type: 'error',
      error: { type: 'not_found_error', message: `the replay server has no ${request.method} ${path}` },
    });
  };

  const server = createServer((request, response) => {
    answer(request, response).catch((error: unknown) => {
      // A script that throws answers 500, like a broken server: the client sees an HTTP error.
      if (!response.headersSent) writeJson(response, 500, { error: { type: 'server_error', message: String(error) } });
      else response.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    openaiBaseURL: `${url}/v1`,
    anthropicBaseURL: url,
    requests: () => served,
    close: () =>
      new Promise<void>((resolve) => {
        // The SDKs keep connections alive; close them so the process can exit.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
