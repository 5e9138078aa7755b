/**
 * Save a run and finish it later, in another process: the run waits for an editor's approval,
 * its snapshot (`actor.getPersistedSnapshot()`, plain JSON) goes to a file and the process ends;
 * a later process restores it with `createActor(machine, { snapshot })`, approves, and the run
 * completes — history, tool calls, `sessionData` and limits intact.
 *
 *   npx tsx examples/save-and-restore.ts save [file]      run until the approval, save, exit
 *   npx tsx examples/save-and-restore.ts restore [file]   restore, approve, finish
 *   npx tsx examples/save-and-restore.ts                  both, one after the other
 *
 * The file defaults to actorloop-example-run.json in the system's temporary folder. Offline a
 * scripted model drives the run; with OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENAI_BASE_URL set, a
 * live one does (see examples/support/model.ts).
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ConversationMachine, createConversationMachine, defineTool } from 'actorloop';
import { createActor, type Snapshot, toPromise } from 'xstate';
import { z } from 'zod';
import { logRun, printOutput } from './support/log.js';
import { chooseModel, printMode } from './support/model.js';

const [phase = 'both', file = join(tmpdir(), 'actorloop-example-run.json')] = process.argv.slice(2);
if (!['save', 'restore', 'both'].includes(phase)) {
  console.error(`usage: npx tsx examples/save-and-restore.ts [save|restore] [file]; got "${phase}"`);
  process.exit(2);
}

const model = await chooseModel(({ toolResults }) =>
  toolResults.length === 0
    ? { text: 'Publishing needs an editor.', toolCalls: [{ name: 'publish_post', args: { title: 'Hello, actors' } }] }
    : { text: `Done: ${toolResults[0]}.` },
);
printMode('save-and-restore', model);

/**
 * The same machine in both processes: a restored snapshot names its tools and states, so the
 * restoring process must build the machine with the same tools.
 */
function createPublishingMachine(): ConversationMachine {
  const publishPost = defineTool({
    name: 'publish_post',
    description: "Publish a blog post of the current author's drafts",
    parameters: z.object({ title: z.string() }),
    needsApproval: true,
    execute: ({ title }, { sessionData }) => {
      const { author } = sessionData as { author: string };
      return `published "${title}" by ${author}`;
    },
  });
  return createConversationMachine({ provider: model.provider, tools: [publishPost], system: 'You publish blog posts when asked.' });
}

/** Runs until the approval and saves the run; false when the run ended without needing one. */
async function save(): Promise<boolean> {
  const actor = createActor(createPublishingMachine(), { input: { messages: [], sessionData: { author: 'ada' } } });
  logRun(actor);
  actor.start();
  const request = "Publish my draft 'Hello, actors'.";
  console.log(`[user] ${request}`);
  actor.send({ type: 'user.message', content: request });
  // Wait until the run needs a person — or ends without needing one.
  const waiting = await new Promise<boolean>((resolve) => {
    const subscription = actor.subscribe((snapshot) => {
      if (snapshot.matches('awaitingApproval') || snapshot.status !== 'active') {
        subscription.unsubscribe();
        resolve(snapshot.matches('awaitingApproval'));
      }
    });
  });
  if (!waiting) {
    console.log('[save] the run ended without asking for approval; nothing to save');
    printOutput(await toPromise(actor));
    return false;
  }
  await writeFile(file, JSON.stringify(actor.getPersistedSnapshot()));
  actor.stop();
  console.log(`[save] waiting for approval; run saved to ${file}`);
  return true;
}

async function restore(): Promise<void> {
  // A persisted snapshot is plain JSON: whatever store holds it (a file here, a database row in a service).
  const snapshot = JSON.parse(await readFile(file, 'utf8')) as Snapshot<unknown>;
  const actor = createActor(createPublishingMachine(), { snapshot });
  logRun(actor);
  actor.start();
  const { value, context } = actor.getSnapshot();
  console.log(`[restore] from ${file}: state ${JSON.stringify(value)}, ${context.messages.length} messages`);
  // Entry events are not re-emitted on restore: the waiting calls are read from the snapshot.
  for (const call of context.round ?? []) {
    if (call.state !== 'awaiting-approval') continue;
    console.log(`[tool.approve] ${call.toolName}(${JSON.stringify(call.args)})`);
    actor.send({ type: 'tool.approve', toolCallId: call.toolCallId });
  }
  printOutput(await toPromise(actor));
  await rm(file, { force: true });
}

const saved = phase === 'restore' || (await save());
if (phase !== 'save' && saved) await restore();
