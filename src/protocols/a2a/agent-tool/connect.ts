import type { AgentCard } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { A2AAgentError } from './a2a-agent-error.js';
import { describeThrown } from './call-failure.js';
import { loadA2AClientSdk, type A2AClientSdk } from './load-sdk.js';
import type { ResolvedA2AAgentToolOptions } from './options.js';

/** A client of one remote agent, made from its card. */
export type A2AConnection = { sdk: A2AClientSdk; client: Client; card: AgentCard };

/**
 * The `fetch` every request of the client goes through: the caller's headers added (an
 * `authorization` refreshed per request when `headers` is a function), and a bound on requests
 * that carry no signal of their own (the card fetch), so a silent server cannot hang a call.
 */
function connectionFetch(options: ResolvedA2AAgentToolOptions): typeof fetch {
  const base = options.fetch ?? globalThis.fetch;
  return async (input, init) => {
    const extra = typeof options.headers === 'function' ? await options.headers() : (options.headers ?? {});
    const headers = new Headers(init?.headers);
    for (const [key, value] of Object.entries(extra)) if (!headers.has(key)) headers.set(key, value);
    const signal = init?.signal ?? AbortSignal.timeout(options.requestTimeoutMs);
    return base(input, { ...init, headers, signal });
  };
}

/**
 * Fetches the agent card and makes a client for the interface it prefers (JSON-RPC or HTTP+JSON).
 * `url` is the agent's base URL (its card at `<url>/.well-known/agent-card.json`) or the card's own URL
 * (ending in `.json`). Every failure is an {@link A2AAgentError} of kind `card` naming the URL.
 */
export async function connectAgent(url: URL, options: ResolvedA2AAgentToolOptions): Promise<A2AConnection> {
  const sdk = await loadA2AClientSdk();
  const { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory, RestTransportFactory } = sdk.client;
  const fetchImpl = connectionFetch(options);
  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl }), new RestTransportFactory({ fetchImpl })],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl }),
    }),
  );
  const cardUrl = url.pathname.endsWith('.json');
  try {
    // The SDK resolves the card path against the base as a relative URL: without a trailing slash an
    // agent served under a path (`https://host/agents/research`) would be looked up at the host's root.
    const client = await (cardUrl
      ? factory.createFromUrl(url.href, '')
      : factory.createFromUrl(url.href.endsWith('/') ? url.href : `${url.href}/`));
    const card = await client.getAgentCard();
    return { sdk, client, card };
  } catch (error) {
    throw new A2AAgentError(`could not read the agent card of the remote A2A agent at ${url.href}: ${describeThrown(error)}`, {
      kind: 'card',
      agent: url.href,
      cause: error,
    });
  }
}
