/**
 * `input` is optional: `createActor(machine)` starts a run with an empty history, and
 * `createActor(machine, { snapshot })` restores one without restating it (docs/behaviour.md
 * "Save and restore"). Both type-check without `input` (this file is type-checked by `npm test`).
 */
import { createActor, toPromise, waitFor } from 'xstate';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createConversationMachine, defineTool, handlerProvider } from '../src/index.js';
import { scriptedModel } from './support/scripted-model.js';

describe('input is optional', () => {
  it('createActor(machine) runs with an empty history', async () => {
    const model = scriptedModel([{ text: 'hello' }]);
    const actor = createActor(createConversationMachine({ provider: handlerProvider(model.handler) })).start();
    actor.send({ type: 'user.message', content: 'hi' });
    const output = await toPromise(actor);
    expect(output).toMatchObject({ status: 'done', text: 'hello' });
    expect(output.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
  });

  it('createActor(machine, { snapshot }) restores a run waiting for approval and finishes it', async () => {
    const publish = defineTool({ name: 'publish', parameters: z.object({}), needsApproval: true, execute: () => 'published' });
    const model = scriptedModel([{ toolCalls: [{ id: 'p', name: 'publish', args: {} }] }, { text: 'done' }]);
    const machine = createConversationMachine({ provider: handlerProvider(model.handler), tools: [publish] });
    const first = createActor(machine).start();
    first.send({ type: 'user.message', content: 'publish it' });
    await waitFor(first, (snapshot) => snapshot.matches('awaitingApproval'));
    const persisted: unknown = JSON.parse(JSON.stringify(first.getPersistedSnapshot()));
    first.stop();

    const restored = createActor(machine, { snapshot: persisted as ReturnType<typeof first.getPersistedSnapshot> }).start();
    expect(restored.getSnapshot().value).toBe('awaitingApproval');
    restored.send({ type: 'tool.approve', toolCallId: 'p' });
    const output = await toPromise(restored);
    expect(output).toMatchObject({ status: 'done', text: 'done', iterations: 1 });
    expect(output.messages[2]).toMatchObject({ role: 'tool', content: [{ toolCallId: 'p', result: 'published' }] });
  });
});
