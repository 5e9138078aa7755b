/**
 * Per-run data: one machine serves every conversation of a service. Each run carries its own
 * `input.sessionData` (plain JSON: the user's id, a tenant), which reaches every tool call as
 * `execute(args, { sessionData })`; dependencies that are not JSON, like a database pool, are
 * created once and closed over by the tools. Putting the pool itself into `sessionData` ends the
 * run in `error`, naming the path — a snapshot could not hold it.
 *
 *   npx tsx examples/session-data.ts
 *
 * Offline a scripted model drives the runs; with OPENAI_API_KEY, ANTHROPIC_API_KEY or
 * OPENAI_BASE_URL set, a live one does (see examples/support/model.ts).
 */
import { createConversationMachine, defineTool, type RunOutput } from 'actorloop';
import { createActor, toPromise } from 'xstate';
import { chooseModel, printMode } from './support/model.js';

/** Stands in for a database pool (pg.Pool, a Prisma client, …): made once at start-up, not JSON. */
class Database {
  readonly #orders = new Map([
    ['ada', ['analytical engine manual', 'punched cards ×500']],
    ['linus', ['mechanical keyboard']],
  ]);
  async ordersOf(userId: string, signal: AbortSignal): Promise<string[]> {
    signal.throwIfAborted();
    return this.#orders.get(userId) ?? [];
  }
}

type Session = { userId: string };

const db = new Database();

// The tool closes over the pool; the user comes from each run's sessionData.
const listOrders = defineTool({
  name: 'list_orders',
  description: "The current user's orders",
  parameters: { type: 'object', properties: {}, additionalProperties: false }, // a plain JSON Schema works too
  execute: async (_args, { sessionData, signal }) => db.ordersOf((sessionData as Session).userId, signal),
});

const model = await chooseModel(({ toolResults }) =>
  toolResults.length === 0
    ? { toolCalls: [{ name: 'list_orders', args: {} }] }
    : { text: `Your orders: ${(JSON.parse(toolResults[0] ?? '[]') as string[]).join(', ') || 'none'}.` },
);
printMode('session-data', model);

// One machine, made once, for every conversation.
const machine = createConversationMachine({ provider: model.provider, tools: [listOrders], system: 'You answer questions about orders.' });

async function ask(session: Session, question: string): Promise<RunOutput> {
  const actor = createActor(machine, { input: { messages: [], sessionData: session } });
  actor.on('tool.result', (event) => console.log(`[${session.userId}] [tool.result] ${event.name} → ${event.result}`));
  actor.start();
  actor.send({ type: 'user.message', content: question });
  return toPromise(actor);
}

// Two users at once, on the same machine: each tool call sees its own run's user.
const outputs = await Promise.all([ask({ userId: 'ada' }, 'What did I order?'), ask({ userId: 'linus' }, 'What did I order?')]);
for (const [index, userId] of ['ada', 'linus'].entries()) console.log(`[${userId}] [answer] ${outputs[index]?.text}`);

// The mistake this guards against: a pool in sessionData. The run ends in `error` at once, naming the path.
const wrong = createActor(machine, { input: { messages: [], sessionData: { userId: 'ada', db } } }).start();
const refused = await toPromise(wrong);
console.log(`[pool in sessionData] status=${refused.status}: ${refused.error?.message}`);
if (outputs.some((output) => output.status !== 'done') || refused.status !== 'error') process.exitCode = 1;
