/**
 * Issue 50, item 4: an A2A server killed mid-task. The server runs in a child process over a
 * SQLite file, its model's response held so the task is mid-run; the process is SIGKILLed; a new
 * process on the same file calls `host.recover()` and serves on a new port; the official
 * `@a2a-js/sdk` client resubscribes to the task there (and reads it with GetTask) and gets the rest,
 * to `completed` with the full answer, stored once.
 */
import type { Message, Part, StreamResponse, Task } from '@a2a-js/sdk';
import { ClientFactory } from '@a2a-js/sdk/client';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { completed, working } from './support/a2a-client.js';
import type { KillWorkerMessage } from './support/a2a-kill-worker.js';
import { supportScript } from './support/built-tree.js';
import type { PlanStep } from './support/planned-model.js';
import { startPlannedWireServer } from './support/planned-wire-server.js';

const answerOf = (step: PlanStep) => ({ text: `You said: ${step.lastUser}. That is all, thank you.` });

const folder = mkdtempSync(join(tmpdir(), 'actorloop-a2a-kill-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(folder, { recursive: true, force: true });
});

/** Starts the server process over `database`; resolves once it listens (after its `recover()`). */
function startServer(database: string, modelUrl: string): Promise<{ child: ChildProcess; ready: KillWorkerMessage }> {
  const child = spawn(process.execPath, [supportScript('a2a-kill-worker.ts'), database, modelUrl], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once('message', (ready: KillWorkerMessage) => resolve({ child, ready }));
    child.once('exit', (code, signal) => reject(new Error(`the A2A server process exited before it was ready (${signal ?? code})`)));
  });
}

const exited = (child: ChildProcess) =>
  new Promise<string>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(String(child.signalCode ?? child.exitCode));
    else child.once('exit', (code, signal) => resolve(String(signal ?? code)));
  });

const text = (value: string): Part => ({ content: { $case: 'text', value }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const partText = (parts: Part[] | undefined) =>
  (parts ?? []).map((part) => (part.content?.$case === 'text' ? part.content.value : '')).join('');
const message = (value: string): Message => ({
  messageId: 'm-1',
  contextId: '',
  taskId: '',
  role: 1,
  parts: [text(value)],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
});

describe('actorloop/a2a: a server process killed mid-task', () => {
  it('SIGKILL mid-answer; a new process on the same SQLite file recovers, and a client resubscribing there gets the rest once', async () => {
    let holding = true;
    const model = await startPlannedWireServer(answerOf, { holdResponses: () => holding, chunkDelayMs: [1, 2] });
    const database = join(folder, 'tasks.db');
    try {
      const first = await startServer(database, model.url);
      expect(first.ready.resumed).toEqual([]);
      const before = await new ClientFactory().createFromUrl(first.ready.url);
      const started = await before.sendMessage({
        tenant: '',
        message: message('survive the kill'),
        configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
        metadata: undefined,
      });
      if (!('status' in started)) throw new Error('expected a task');
      expect(started.status?.state).toBe(working);
      // The model has the request and holds its answer: the task is mid-run when the process dies.
      while (!model.requestLog().some((request) => request.conversation === 'survive the kill')) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      first.child.kill('SIGKILL');
      expect(await exited(first.child)).toBe('SIGKILL');

      const second = await startServer(database, model.url);
      expect(second.ready.resumed).toEqual([started.id]);
      expect(second.ready.url).not.toBe(first.ready.url);
      const client = await new ClientFactory().createFromUrl(second.ready.url);
      expect((await client.getTask({ tenant: '', id: started.id, historyLength: undefined })).status?.state).toBe(working);

      const states: number[] = [];
      let answer = '';
      const stream: AsyncGenerator<StreamResponse> = client.resubscribeTask({ tenant: '', id: started.id });
      for await (const event of stream) {
        const payload = event.payload;
        if (payload?.$case === 'task') {
          states.push(payload.value.status?.state ?? 0);
          // Joined: now the model may answer the recovered run's request.
          holding = false;
        }
        if (payload?.$case === 'statusUpdate') states.push(payload.value.status?.state ?? 0);
        if (payload?.$case === 'artifactUpdate') {
          const piece = partText(payload.value.artifact?.parts);
          answer = payload.value.append ? answer + piece : piece;
        }
      }
      const full = 'You said: survive the kill. That is all, thank you.';
      expect(states).toEqual([working, completed]);
      expect(answer).toBe(full);

      const done: Task = await client.getTask({ tenant: '', id: started.id, historyLength: undefined });
      expect(done.status?.state).toBe(completed);
      expect(done.artifacts.map((artifact) => partText(artifact.parts))).toEqual([full]);
      // Stored once: one user message, one answer — the killed run's request left nothing behind.
      expect(done.history.map((entry) => [entry.role, partText(entry.parts)])).toEqual([
        [1, 'survive the kill'],
        [2, full],
      ]);
      // The killed process's request, then the recovered run's: the kill came mid-run, and only the second answer was stored.
      expect(model.requestLog().filter((request) => request.conversation === 'survive the kill')).toHaveLength(2);
      second.child.kill('SIGTERM');
      expect(await exited(second.child)).toBe('0');
    } finally {
      holding = false;
      await model.close();
    }
  });
});
