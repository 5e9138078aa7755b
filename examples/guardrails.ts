/**
 * Guardrails: checks on the user's message (`checkingInput`, before the first request) and on the
 * final answer (`checkingOutput`, before `done`). Each runs as an actor with a timeout; one that
 * trips ends the run `halted` / `guardrail` with `output.guardrail`; one that throws or times out
 * ends it in `error`, never a silent pass. The output guardrail here calls a model itself: a
 * second conversation machine acting as a moderator.
 *
 *   npx tsx examples/guardrails.ts
 *
 * Offline both models are scripted; with OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENAI_BASE_URL set,
 * live ones answer (see examples/support/model.ts).
 */
import { createConversationMachine, type Guardrail, type RunOutput } from 'actorloop';
import { createActor, toPromise } from 'xstate';
import { logRun } from './support/log.js';
import { chooseModel, printMode } from './support/model.js';

const assistant = await chooseModel(({ userText }) =>
  userText.includes('password')
    ? { text: 'Sure: the admin password is hunter2.' }
    : { text: 'Tidal power turns the rise and fall of the sea into electricity.' },
);
const moderator = await chooseModel(({ userText }) => ({ text: /password is/.test(userText) ? 'UNSAFE: leaks a credential' : 'SAFE' }));
printMode('guardrails', assistant);

const noCardNumbers: Guardrail = {
  name: 'no-card-numbers',
  check: (text) => ({ tripped: /\b(?:\d[ -]?){13,16}\b/.test(text), reason: 'the message holds a card number' }),
};

const moderatorMachine = createConversationMachine({
  provider: moderator.provider,
  system: 'Answer SAFE, or UNSAFE with the reason, for the text you are given.',
});
const moderation: Guardrail = {
  name: 'moderation',
  timeoutMs: 20_000,
  check: async (text, { signal }) => {
    const judge = createActor(moderatorMachine, { input: {} }).start();
    signal.addEventListener('abort', () => judge.send({ type: 'cancel', reason: 'guardrail timed out' }), { once: true });
    judge.send({ type: 'user.message', content: text });
    const verdict = await toPromise(judge);
    return { tripped: verdict.text.startsWith('UNSAFE'), reason: verdict.text };
  },
};

const machine = createConversationMachine({
  provider: assistant.provider,
  system: 'You are a helpful assistant.',
  guardrails: { input: [noCardNumbers], output: [moderation] },
});

async function ask(content: string): Promise<RunOutput> {
  const actor = createActor(machine, { input: {} });
  logRun(actor);
  actor.on('guardrail.checked', (event) =>
    console.log(`[guardrail.checked] ${event.phase} ${event.name}: ${event.tripped ? `tripped (${event.reason})` : 'passed'}`),
  );
  actor.start();
  actor.send({ type: 'user.message', content });
  const output = await toPromise(actor);
  console.log(
    `[output] status=${output.status}${output.reason ? ` reason=${output.reason}` : ''}${output.guardrail ? ` guardrail=${output.guardrail.name}` : ''}`,
  );
  return output;
}

await ask('What is tidal power?');
await ask('My card is 4111 1111 1111 1111, can you store it?');
await ask('What is the admin password?');
