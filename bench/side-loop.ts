/**
 * The loop one side of S2, S3, the CPU profile or `alloc-sites.ts` runs over its `openai` client:
 * the raw SDK loop (the floor), the minimal statechart loop (XState's own share) or actorloop.
 */
import type OpenAI from 'openai';
import { benchOpenAIProvider, createActorloopLoop } from './actorloop-loop.js';
import { createMinimalLoop } from './minimal-loop.js';
import { createRawLoop, type LoopOptions, type LoopResult } from './raw-loop.js';
import type { LoopSide } from './worker-process.js';

/** actorloop's loop also counts the retries it made; the other sides never retry. */
export type SideRun = (text: string) => Promise<LoopResult & { retries?: number }>;

export function sideLoop(side: LoopSide, client: OpenAI, options: LoopOptions): SideRun {
  if (side === 'raw') return createRawLoop(client, options);
  if (side === 'minimal') return createMinimalLoop(client, options);
  return createActorloopLoop(benchOpenAIProvider(client, options), options);
}
