/**
 * Runs one measuring job in a fresh process, so peak RSS, heap baselines and JIT state belong to
 * that job alone. Started by {@link runInWorker}; the job arrives as JSON in argv[2] and its result
 * goes back over IPC.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Transport } from './client.js';

export type Job =
  | { kind: 's1'; baseURL: string; rounds: number; reps: number; warmup: number; modes: Array<'stream' | 'json'> }
  | { kind: 's1-ai-sdk'; baseURL: string; rounds: number; reps: number; warmup: number }
  | { kind: 's2'; baseURL: string; side: LoopSide; n: number; rounds: number; connections: number; transport: Transport }
  | {
      kind: 's3';
      baseURL: string;
      side: LoopSide;
      n: number;
      wave: number;
      blockAt: number;
      connections: number;
      snapshotDir?: string;
      machinePerConversation?: boolean;
    }
  | { kind: 's4'; sizes: number[]; reps: number }
  | {
      kind: 's4-throughput';
      baseURL: string;
      side: 'off' | 'memory' | 'sqlite' | 'sqlite-normal';
      n: number;
      rounds: number;
      connections: number;
    }
  | { kind: 'engine'; rounds: number; reps: number; warmup: number; operations: number }
  | { kind: 'profile'; baseURL: string; side: ProfileSide; rounds: number; conversations: number; stream: boolean }
  | { kind: 'agents'; reps: number; warmup: number; parked: number }
  | { kind: 'controls'; reps: number; warmup: number }
  | { kind: 'workflow'; reps: number; warmup: number; deltas: number };
export type Side = 'actorloop' | 'raw';
/**
 * S3 (always), S2 (with `--s2-minimal`) and the CPU profile (`--cpu-prof minimal`) also measure
 * the minimal statechart loop (bench/minimal-loop.ts): what XState's own actors cost.
 */
export const loopSides = ['actorloop', 'raw', 'minimal'] as const;
export type LoopSide = (typeof loopSides)[number];

/** What `--cpu-prof` can profile: a loop side, or S1-AISDK's adapter side (the machine with `aiSdkProvider`). */
export type ProfileSide = LoopSide | 'ai-sdk';

/** Whether a flag's text names one of the `loopSides`. */
export function isLoopSide(text: string | undefined): text is LoopSide {
  return (loopSides as readonly (string | undefined)[]).includes(text);
}

export async function runInWorker<T>(job: Job, extraExecArgv: string[] = []): Promise<T> {
  const script = fileURLToPath(new URL('./worker.ts', import.meta.url));
  const child = fork(script, [JSON.stringify(job)], {
    execArgv: [...process.execArgv, ...extraExecArgv],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise<T>((resolve, reject) => {
    let result: { ok: true; value: T } | { ok: false; error: string } | undefined;
    child.on('message', (message: { ok: true; value: T } | { ok: false; error: string }) => {
      result = message;
    });
    child.on('exit', (code, signal) => {
      if (result?.ok) resolve(result.value);
      else reject(new Error(`${job.kind} worker failed (exit ${code ?? signal}): ${result && !result.ok ? result.error : 'no result'}`));
    });
  });
}
