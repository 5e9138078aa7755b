/**
 * A real conversation on the engine, offline. The "model" is a SCRIPTED stand-in (a deterministic
 * handlerProvider that streams OpenAI chunks); the engine, the two tools and everything they do
 * are real. Swap `scriptedModel` for `openaiProvider({ model: 'gpt-4o-mini' })` to talk to a real one.
 *
 *   npm run demo
 */
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { createConversationMachine, defineTool, handlerProvider, type HandlerRequest } from 'actorloop';
import type { OpenAIChatCompletionChunk } from 'actorloop/openai';

const repositoryRoot = fileURLToPath(new URL('..', import.meta.url));

/** Real tool 1: evaluates + - * / and parentheses over numbers (no eval). */
const calculate = defineTool({
  name: 'calculate',
  description: 'Evaluate an arithmetic expression with + - * / and parentheses',
  parameters: z.object({ expression: z.string().max(200) }),
  execute: ({ expression }) => {
    const tokens = expression.match(/\d+(?:\.\d+)?|[()+\-*/]/g) ?? [];
    let position = 0;
    const peek = () => tokens[position];
    const factor = (): number => {
      const token = tokens[position++];
      if (token === '(') {
        const value = sum();
        position++;
        return value;
      }
      if (token === '-') return -factor();
      const value = Number(token);
      if (!Number.isFinite(value)) throw new Error(`unexpected token ${String(token)}`);
      return value;
    };
    const product = (): number => {
      let value = factor();
      while (peek() === '*' || peek() === '/') value = tokens[position++] === '*' ? value * factor() : value / factor();
      return value;
    };
    const sum = (): number => {
      let value = product();
      while (peek() === '+' || peek() === '-') value = tokens[position++] === '+' ? value + product() : value - product();
      return value;
    };
    return sum();
  },
});

/** Real tool 2: lists a folder of this repository. */
const listFiles = defineTool({
  name: 'list_files',
  description: 'List the files of a folder of the actorloop repository',
  parameters: z.object({ folder: z.string().regex(/^[\w./-]+$/) }),
  execute: async ({ folder }, { signal }) => {
    signal.throwIfAborted();
    const entries = await readdir(new URL(folder, `file://${repositoryRoot}`));
    return entries.sort();
  },
});

/** The scripted model: asks for both tools, then answers from their real results. */
async function* scriptedModel(request: HandlerRequest): AsyncGenerator<OpenAIChatCompletionChunk> {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null): OpenAIChatCompletionChunk => ({
    object: 'chat.completion.chunk',
    model: 'scripted-demo-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const results = request.messages.filter((message) => message.role === 'tool');
  if (results.length === 0) {
    yield chunk({ content: 'Let me check both. ' });
    yield chunk({
      tool_calls: [{ index: 0, id: 'call_calc', type: 'function', function: { name: 'calculate', arguments: '{"expression":' } }],
    });
    yield chunk({ tool_calls: [{ index: 0, function: { arguments: '"17 * (23 + 4)"}' } }] });
    yield chunk({
      tool_calls: [
        { index: 1, id: 'call_list', type: 'function', function: { name: 'list_files', arguments: '{"folder":"src/machines/chart"}' } },
      ],
    });
    yield chunk({}, 'tool_calls');
  } else {
    const [product, files] = results.map((message) => message.content);
    const names = JSON.parse(files ?? '[]') as string[];
    for (const word of `17 × (23 + 4) = ${product}. The chart folder holds ${names.length} files: ${names.join(', ')}.`.split(/(?<= )/)) {
      yield chunk({ content: word });
    }
    yield chunk({}, 'stop');
  }
  yield { object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 42, completion_tokens: 17, total_tokens: 59 } };
}

const machine = createConversationMachine({
  provider: handlerProvider(scriptedModel),
  tools: [calculate, listFiles],
  system: 'You are terse.',
});

const actor = createActor(machine, { input: { messages: [] } });
let lastState = '';
actor.subscribe((snapshot) => {
  const state = JSON.stringify(snapshot.value);
  if (state === lastState) return;
  lastState = state;
  console.log(`\n[state] ${state}`);
});
actor.on('request.started', (event) => console.log(`[request] iteration ${event.iteration}, attempt ${event.attempt}`));
actor.on('text.delta', (event) => process.stdout.write(event.delta));
actor.on('tool.call', (event) => console.log(`\n[tool.call] ${event.name}(${JSON.stringify(event.args)})`));
actor.on('tool.result', (event) => console.log(`[tool.result] ${event.name} → ${event.result}${event.isError ? ' (error)' : ''}`));
actor.start();

console.log('actorloop demo — the model is SCRIPTED (deterministic, offline); the engine and tools are real.');
actor.send({ type: 'user.message', content: 'What is 17 × (23 + 4), and which files are in src/machines/chart?' });
const output = await toPromise(actor);
console.log(`\n\n[output] status=${output.status} iterations=${output.iterations} tokens=${output.usage.totalTokens}`);
console.log(`[answer] ${output.text}`);
