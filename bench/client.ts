/**
 * The one `openai` client per side. Both sides get identical options: `maxRetries: 0`, the same
 * base URL, and their own keep-alive connection pool of the same size.
 *
 * The pool is an undici `Agent` (what Node's global fetch, and so the SDK, uses). Node 20 ships
 * undici without exposing it as a module, so the Agent class is taken from the global dispatcher
 * after one fetch; when that fails the SDK's default (the global, unbounded pool) is used and
 * `poolKind` says so.
 */
import OpenAI, { type ClientOptions } from 'openai';
import { createNodeFetch } from '../src/index.js';

/** `fetch`: the SDK's default (Node's global fetch, undici) on its own Agent; `node-http`: actorloop's `createNodeFetch`. */
export type Transport = 'fetch' | 'node-http';
export type PoolOptions = { connections: number; keepAliveTimeoutMs?: number; transport?: Transport };
export type BenchClient = {
  client: OpenAI;
  /** A `fetch` on the same kind of pool, for a client that is not the `openai` SDK (S1-AISDK's AI SDK model). */
  fetch: typeof globalThis.fetch;
  poolKind: 'undici-agent' | 'global-default' | 'node-http-agent';
  close(): Promise<void>;
};

type DispatcherLike = { close?: () => Promise<void> };
type AgentConstructor = new (options: Record<string, unknown>) => DispatcherLike;

let agentClass: AgentConstructor | null | undefined;

async function findAgentClass(): Promise<AgentConstructor | null> {
  if (agentClass !== undefined) return agentClass;
  const key = Symbol.for('undici.globalDispatcher.1');
  const holder = globalThis as unknown as Record<symbol, unknown>;
  if (holder[key] === undefined) {
    // Loads Node's bundled undici, which installs its global dispatcher. Port 9 (discard) is refused at once.
    await fetch('http://127.0.0.1:9/').catch(() => undefined);
  }
  const dispatcher = holder[key];
  const ctor = typeof dispatcher === 'object' && dispatcher !== null ? (dispatcher as { constructor?: unknown }).constructor : undefined;
  agentClass = typeof ctor === 'function' && ctor.name === 'Agent' ? (ctor as AgentConstructor) : null;
  return agentClass;
}

export async function createBenchClient(baseURL: string, pool: PoolOptions): Promise<BenchClient> {
  if (pool.transport === 'node-http') {
    const fetch = createNodeFetch({
      maxSockets: pool.connections,
      maxFreeSockets: pool.connections,
      freeSocketTimeoutMs: pool.keepAliveTimeoutMs ?? 30_000,
    });
    const client = new OpenAI({ apiKey: 'bench-key', baseURL, maxRetries: 0, timeout: 600_000, fetch });
    return { client, fetch: fetch as unknown as typeof globalThis.fetch, poolKind: 'node-http-agent', close: async () => fetch.close() };
  }
  const Agent = await findAgentClass();
  const dispatcher = Agent
    ? new Agent({
        connections: pool.connections,
        pipelining: 1,
        keepAliveTimeout: pool.keepAliveTimeoutMs ?? 30_000,
        keepAliveMaxTimeout: 60_000,
        // Connecting 10k sockets at once can wait on the accept queue; do not fail on that.
        connect: { timeout: 60_000 },
        headersTimeout: 300_000,
        bodyTimeout: 300_000,
      })
    : undefined;
  const client = new OpenAI({
    apiKey: 'bench-key',
    baseURL,
    maxRetries: 0,
    timeout: 600_000,
    ...(dispatcher ? { fetchOptions: { dispatcher } as NonNullable<ClientOptions['fetchOptions']> } : {}),
  });
  return {
    client,
    // What the SDK does with `fetchOptions`: the pool goes with every request.
    fetch: dispatcher ? (input, init) => globalThis.fetch(input, { ...init, dispatcher } as RequestInit) : globalThis.fetch,
    poolKind: dispatcher ? 'undici-agent' : 'global-default',
    close: async () => {
      await dispatcher?.close?.();
    },
  };
}
