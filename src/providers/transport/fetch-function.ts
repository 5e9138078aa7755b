/** The `fetch` signature the provider SDKs call: Node's global `fetch`, or {@link createNodeFetch}. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;
