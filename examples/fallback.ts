/**
 * Fallback: `provider: [primary, secondary]`. The primary (an OpenAI-wire server) answers 503 to
 * every request; once the request's retries are used up on that retryable error the secondary (an
 * Anthropic-wire server) takes the same request (`provider.fallback`), across wires, with the
 * history valid for both. A fatal error (401, 400, …) would not fall back.
 *
 *   npx tsx examples/fallback.ts
 *
 * Offline, always: both providers are local replay servers on 127.0.0.1 serving a scripted model
 * through the real `openai` and `@anthropic-ai/sdk` clients.
 */
import { anthropicProvider, createConversationMachine, defineTool, openaiProvider } from 'actorloop';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { logRun } from './support/log.js';
import { printMode } from './support/model.js';
import { startReplayServer } from './support/replay-server.js';

const unavailable = { status: 503, body: { error: { message: 'The server is overloaded', type: 'server_error' } } };
const script = ({ toolResults }: { toolResults: string[] }) =>
  toolResults.length === 0 ? { toolCalls: [{ name: 'tide_times', args: { port: 'Porto' } }] } : { text: `High tide: ${toolResults[0]}.` };
const primary = await startReplayServer(script, { faults: Array.from({ length: 6 }, () => unavailable) });
const secondary = await startReplayServer(script);
printMode('fallback', {
  live: false,
  label: `a SCRIPTED model on two local replay servers (${primary.url} fails, ${secondary.url} answers)`,
});

const tideTimes = defineTool({
  name: 'tide_times',
  description: 'High tide times for a port',
  parameters: z.object({ port: z.string() }),
  execute: ({ port }) => `${port} 11:42 and 23:58`,
});

const machine = createConversationMachine({
  provider: [
    openaiProvider({ model: 'scripted-model', baseURL: primary.openaiBaseURL, apiKey: 'offline' }),
    anthropicProvider({ model: 'scripted-model', baseURL: secondary.anthropicBaseURL, apiKey: 'offline', maxTokens: 512 }),
  ],
  tools: [tideTimes],
  retry: { maxRetries: 2, initialDelayMs: 10, jitter: false },
});
const actor = createActor(machine, { input: {} });
logRun(actor);
actor.on('request.started', (event) => console.log(`[request.started] ${event.provider} attempt ${event.attempt}`));
actor.on('provider.fallback', (event) => console.log(`[provider.fallback] ${event.from} → ${event.to} after: ${event.error.message}`));
actor.start();
actor.send({ type: 'user.message', content: 'When is high tide in Porto?' });
const output = await toPromise(actor);
console.log(`[output] status=${output.status} iterations=${output.iterations}`);
await Promise.all([primary.close(), secondary.close()]);
