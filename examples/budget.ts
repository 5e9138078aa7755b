/**
 * Budgets: limits on tokens, cost and time over a run (and its agent tree). A research loop that
 * keeps asking for one more page is stopped by `budget.maxTotalTokens`: the response that reaches
 * the limit ends the run `halted` / `budget`, its tool calls are not run (each gets an error result
 * naming the limit, so the history stays valid), and `output.budget` says what was spent. A second
 * run is stopped by `maxCostUsd`, priced with the built-in table of current OpenAI and Anthropic
 * prices (`modelPrices`, extended by `prices`).
 *
 *   npx tsx examples/budget.ts
 *
 * Offline a scripted model asks for page after page; with OPENAI_API_KEY, ANTHROPIC_API_KEY or
 * OPENAI_BASE_URL set, a live one reads (see examples/support/model.ts).
 */
import { createConversationMachine, defineTool, type RunOutput } from 'actorloop';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { logRun } from './support/log.js';
import { chooseModel, printMode } from './support/model.js';

/** Stands in for a search index: every page says there is more. */
const readPage = defineTool({
  name: 'read_page',
  description: 'Read one page of search results about a topic',
  parameters: z.object({ topic: z.string(), page: z.number().int().min(1) }),
  execute: ({ topic, page }) => `page ${page} about ${topic}: ${'findings, '.repeat(30)}more on page ${page + 1}`,
});

const model = await chooseModel(({ toolResults }) => ({
  toolCalls: [{ name: 'read_page', args: { topic: 'tidal energy', page: toolResults.length + 1 } }],
}));
printMode('budget', model);

function report(label: string, output: RunOutput): void {
  console.log(
    `[${label}] status=${output.status} reason=${output.reason ?? '-'} iterations=${output.iterations} tokens=${output.usage.totalTokens}`,
  );
  if (output.budget) {
    const { limit, used, max } = output.budget;
    const amount = (value: number) => (limit === 'maxCostUsd' ? `$${value.toFixed(6)}` : String(value));
    console.log(`[${label}] budget ${limit}: used ${amount(used)} of ${amount(max)}`);
  }
  const last = output.messages.at(-1);
  if (last?.role === 'tool') for (const result of last.content) console.log(`[${label}] unrun call ${result.toolName} → ${result.result}`);
}

const system = 'You research a topic by reading page after page until you know enough.';
const tokens = createActor(
  createConversationMachine({
    provider: model.provider,
    tools: [readPage],
    system,
    maxToolIterations: 50,
    budget: { maxTotalTokens: 3_000 },
  }),
  { input: {} },
);
logRun(tokens);
tokens.start();
tokens.send({ type: 'user.message', content: 'Research tidal energy.' });
report('tokens', await toPromise(tokens));

// The same loop under a cost limit: the scripted provider is priced as gpt-4o-mini.
const priced = { ...model.provider, model: model.live ? model.provider.model : 'gpt-4o-mini' };
const cost = createActor(
  createConversationMachine({ provider: priced, tools: [readPage], system, maxToolIterations: 50, budget: { maxCostUsd: 0.0005 } }),
  { input: {} },
);
cost.start();
cost.send({ type: 'user.message', content: 'Research tidal energy.' });
const costly = await toPromise(cost);
report('cost', costly);
console.log(`[cost] spent $${costly.cost?.total.toFixed(6)}`);
