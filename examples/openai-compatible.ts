/**
 * Any server that speaks OpenAI Chat Completions — Ollama, vLLM, llama.cpp, LM Studio, Groq,
 * DeepSeek, OpenRouter — through `openaiProvider({ baseURL })`, with a real tool that reads this
 * repository's package.json.
 *
 *   OPENAI_BASE_URL=http://localhost:11434/v1 npx tsx examples/openai-compatible.ts   Ollama
 *   OPENAI_BASE_URL=http://localhost:8000/v1  npx tsx examples/openai-compatible.ts   vLLM
 *   npx tsx examples/openai-compatible.ts                                             offline: local replay server
 *
 * The model is OPENAI_MODEL, or else the first one the server's GET /models lists. OPENAI_API_KEY
 * is sent when set (hosted servers need it; Ollama and vLLM ignore it). vLLM needs tool calling
 * switched on: `vllm serve <model> --enable-auto-tool-choice --tool-call-parser <parser>`. Ollama
 * needs a model that supports tools (e.g. `ollama pull qwen3` or `llama3.1`).
 */
import { readFile } from 'node:fs/promises';
import { createConversationMachine, defineTool, openaiProvider } from 'actorloop';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { logRun, printOutput } from './support/log.js';
import { modelOfServer, printMode } from './support/model.js';
import { startReplayServer } from './support/replay-server.js';

const packageJson = new URL('../package.json', import.meta.url);

const packageField = defineTool({
  name: 'package_field',
  description: "A top-level field of the actorloop package's package.json, e.g. version or peerDependencies",
  parameters: z.object({ field: z.string() }),
  idempotent: true,
  execute: async ({ field }, { signal }) => {
    const manifest = JSON.parse(await readFile(packageJson, { encoding: 'utf8', signal })) as Record<string, unknown>;
    if (!(field in manifest)) throw new Error(`package.json has no field "${field}"; it has ${Object.keys(manifest).join(', ')}`);
    return manifest[field];
  },
});

const question = 'Which xstate versions does actorloop accept as a peer dependency?';

const replay = process.env.OPENAI_BASE_URL
  ? undefined
  : await startReplayServer(({ toolResults }) => {
      if (toolResults.length === 0) return { toolCalls: [{ name: 'package_field', args: { field: 'peerDependencies' } }] };
      const peers = JSON.parse(toolResults[0] ?? '{}') as Record<string, string>;
      return { text: `actorloop accepts xstate ${peers.xstate}.` };
    });

const baseURL = replay?.openaiBaseURL ?? process.env.OPENAI_BASE_URL ?? '';
const apiKey = process.env.OPENAI_API_KEY ?? 'not-needed';
const model = await modelOfServer(baseURL, apiKey);
printMode('openai-compatible', {
  live: !replay,
  label: replay
    ? `a SCRIPTED model "${model}" on the local replay server ${replay.url} (set OPENAI_BASE_URL to go live)`
    : `${model} at ${baseURL}`,
});

const machine = createConversationMachine({
  // `name` shows in errors and logs; `stream: false` suits servers whose streamed tool calls are unreliable.
  provider: openaiProvider({ model, baseURL, apiKey, name: 'openai-compatible' }),
  tools: [packageField],
  system: 'You are terse. Answer from the tool results only.',
  // A local server may load the model before its first byte: allow the silence that takes.
  requestTimeoutMs: 300_000,
});

const actor = createActor(machine, { input: { messages: [] } });
logRun(actor);
actor.start();
console.log(`[user] ${question}`);
actor.send({ type: 'user.message', content: question });
const output = await toPromise(actor);
printOutput(output);
await replay?.close();
