/**
 * The two transports the replay suites run every recorded conversation over: the SDK's default
 * (Node's global `fetch`, undici) and actorloop's `createNodeFetch` (keep-alive `node:http`).
 */
import { afterAll } from 'vitest';
import { createNodeFetch } from '../../src/providers/transport/node-fetch.js';
import type { FetchFunction } from '../../src/providers/transport/fetch-function.js';

export type TransportCase = { name: string; fetch: FetchFunction | undefined };

/** Call at the top of a test file: one shared `createNodeFetch`, closed after the file. */
export function replayTransports(): TransportCase[] {
  const nodeFetch = createNodeFetch();
  afterAll(() => nodeFetch.close());
  return [
    { name: 'fetch', fetch: undefined },
    { name: 'node:http', fetch: nodeFetch },
  ];
}

/** The provider option for a transport: nothing for the SDK's default. */
export const fetchOption = (transport: TransportCase): { fetch?: FetchFunction } =>
  transport.fetch === undefined ? {} : { fetch: transport.fetch };
