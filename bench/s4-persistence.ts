/**
 * S4 persistence. There is no persistence store yet, so this measures a stand-in: the in-memory
 * snapshot round-trip of a finished run with 20 and with 200 messages —
 * `JSON.stringify(actor.getPersistedSnapshot())`, then `JSON.parse` +
 * `createActor(machine, { snapshot }).start()` — median of `reps`, in a fresh worker. The runs are
 * driven by a scripted `handlerProvider` (no network); the restored actor's history is checked.
 */
import { performance } from 'node:perf_hooks';
import { createActor, toPromise } from 'xstate';
import { createConversationMachine, defineTool, handlerProvider, type OpenAIChatCompletionChunk } from '../src/index.js';
import { median } from './stats.js';
import { addDescription, addExecutor, addName, addSchema } from './tool.js';
import type { Job } from './worker-process.js';

export type S4Row = {
  messages: number;
  snapshotBytes: number;
  getPersistedSnapshotUs: number;
  stringifyUs: number;
  parseUs: number;
  restoreUs: number;
  roundTripUs: number;
};
export type S4Result = { skipped: string; standIn: string; rows: S4Row[] };

async function* toolCallChunks(round: number): AsyncGenerator<OpenAIChatCompletionChunk> {
  yield {
    choices: [
      {
        index: 0,
        delta: {
          tool_calls: [{ index: 0, id: `call_${round}`, type: 'function', function: { name: addName, arguments: `{"a":${round},"b":1}` } }],
        },
        finish_reason: null,
      },
    ],
  };
  yield { choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] };
}

async function* textChunks(): AsyncGenerator<OpenAIChatCompletionChunk> {
  yield { choices: [{ index: 0, delta: { content: 'The sum is done.' }, finish_reason: 'stop' }] };
}

export async function runS4Job(job: Extract<Job, { kind: 's4' }>): Promise<S4Result> {
  const rows: S4Row[] = [];
  for (const messages of job.sizes) {
    // user + (assistant call + tool result) per round + final assistant text.
    const rounds = Math.max(0, Math.round((messages - 2) / 2));
    const machine = createConversationMachine({
      provider: handlerProvider(({ messages: history }) => {
        const done = history.filter((message) => message.role === 'tool').length;
        return done < rounds ? toolCallChunks(done + 1) : textChunks();
      }),
      tools: [defineTool({ name: addName, description: addDescription, parameters: addSchema, execute: addExecutor() })],
      maxToolIterations: Math.max(1, rounds),
    });
    const actor = createActor(machine, { input: { messages: [] } }).start();
    actor.send({ type: 'user.message', content: 'Add the numbers, round after round.' });
    const output = await toPromise(actor);
    if (output.status !== 'done') throw new Error(`S4 run ended ${output.status}`);
    const samples = { get: [] as number[], stringify: [] as number[], parse: [] as number[], restore: [] as number[] };
    let bytes = 0;
    for (let i = 0; i < job.reps + 5; i++) {
      const t0 = performance.now();
      const persisted = actor.getPersistedSnapshot();
      const t1 = performance.now();
      const json = JSON.stringify(persisted);
      const t2 = performance.now();
      const parsed: unknown = JSON.parse(json);
      const t3 = performance.now();
      const restored = createActor(machine, { snapshot: parsed as never, input: {} }).start();
      const t4 = performance.now();
      const restoredMessages = (restored.getSnapshot().context as { messages: unknown[] }).messages.length;
      if (restoredMessages !== output.messages.length)
        throw new Error(`S4 restore: ${restoredMessages} messages, expected ${output.messages.length}`);
      restored.stop();
      bytes = Buffer.byteLength(json);
      if (i < 5) continue; // warm-up
      samples.get.push((t1 - t0) * 1000);
      samples.stringify.push((t2 - t1) * 1000);
      samples.parse.push((t3 - t2) * 1000);
      samples.restore.push((t4 - t3) * 1000);
    }
    const row: S4Row = {
      messages: output.messages.length,
      snapshotBytes: bytes,
      getPersistedSnapshotUs: median(samples.get),
      stringifyUs: median(samples.stringify),
      parseUs: median(samples.parse),
      restoreUs: median(samples.restore),
      roundTripUs: 0,
    };
    row.roundTripUs = row.getPersistedSnapshotUs + row.stringifyUs + row.parseUs + row.restoreUs;
    rows.push(row);
  }
  return {
    skipped: 'S4 skipped: no persistence store yet',
    standIn:
      'in-memory snapshot round-trip (getPersistedSnapshot + JSON.stringify, JSON.parse + createActor({ snapshot }).start()) of a finished run',
    rows,
  };
}
