/**
 * Steering: what a user says while a run is busy. With `steering: 'queue'` a `user.message` sent
 * during a run is kept (`user.message.queued`) and joins the history at the next request boundary,
 * after the round's tool results. `user.interrupt` abandons what the run is doing — here a tool
 * round that takes too long: the tool's signal fires and its call gets a `cancelled` result — and
 * the run continues with the new message.
 *
 *   npx tsx examples/steering.ts
 *
 * Offline a scripted model answers; with OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENAI_BASE_URL set,
 * a live one does (see examples/support/model.ts).
 */
import { createConversationMachine, defineTool } from 'actorloop';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { logRun } from './support/log.js';
import { chooseModel, printMode } from './support/model.js';

const searchFlights = defineTool({
  name: 'search_flights',
  description: 'Search flights; slow, like the real thing',
  parameters: z.object({ to: z.string(), days: z.number().int() }),
  execute: ({ to, days }, { signal }) =>
    new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => resolve(`3 flights to ${to} for a ${days}-day trip`), days === 3 ? 300 : 30);
      signal.addEventListener('abort', () => {
        clearTimeout(timer);
        console.log(`[tool] search_flights to ${to} stopped: ${String(signal.reason)}`);
        reject(signal.reason);
      });
    }),
});

const model = await chooseModel(({ userText, toolResults, turn }) => {
  if (turn === 0) return { toolCalls: [{ name: 'search_flights', args: { to: 'Lisbon', days: 3 } }] };
  if (userText.includes('two days') && !toolResults.some((result) => result.includes('2-day')))
    return { toolCalls: [{ name: 'search_flights', args: { to: 'Lisbon', days: 2 } }] };
  return { text: `Plan: ${toolResults.at(-1) ?? 'no flights'}; vegetarian dinners booked.` };
});
printMode('steering', model);

const machine = createConversationMachine({ provider: model.provider, tools: [searchFlights], steering: 'queue' });
const actor = createActor(machine, { input: {} });
logRun(actor);
actor.on('user.message.queued', (event) => console.log(`[user.message.queued] ${String(event.content)} (${event.queued} waiting)`));
actor.on('request.interrupted', (event) => console.log(`[request.interrupted] in ${event.state}`));
actor.start();
actor.send({ type: 'user.message', content: 'Plan a three-day trip to Lisbon.' });
await new Promise((resolve) => actor.on('tool.started', resolve));
actor.send({ type: 'user.message', content: 'I do not eat meat.' });
await new Promise((resolve) => setTimeout(resolve, 50));
actor.send({ type: 'user.interrupt', content: 'Make it two days.' });
const output = await toPromise(actor);
console.log(`[output] status=${output.status} iterations=${output.iterations}`);
console.log(`[history] ${output.messages.map((message) => message.role).join(' → ')}`);
console.log(`[answer] ${output.text}`);
