/** Host names a browser may use to reach a server bound to a loopback address. */
const loopbackNames = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The host name of a `Host` header (`127.0.0.1:4400` → `127.0.0.1`, `[::1]:4400` → `[::1]`). */
export function hostName(header: string | null): string {
  if (!header) return '';
  if (header.startsWith('[')) return header.slice(0, header.indexOf(']') + 1).toLowerCase();
  const colon = header.lastIndexOf(':');
  return (colon < 0 ? header : header.slice(0, colon)).toLowerCase();
}

/**
 * Lets in only requests addressed to this machine's loopback names — or to `boundTo`, the name a
 * server was bound to — since the viewer shows whole conversations: a page of another site that
 * rebinds its DNS name to 127.0.0.1 still sends its own name and is refused. A server bound to
 * every interface (`0.0.0.0`, `::`) opened itself on purpose: every name is let in.
 *
 * @example
 * ```ts
 * const authorize = loopbackOnly('192.168.1.20');
 * authorize(new Request('http://localhost:4400/')); // true
 * ```
 */
export function loopbackOnly(boundTo?: string): (request: Request) => boolean {
  if (boundTo === '0.0.0.0' || boundTo === '::') return () => true;
  const bound = boundTo?.toLowerCase();
  const allowed = new Set([...loopbackNames, ...(bound ? [bound.includes(':') && !bound.startsWith('[') ? `[${bound}]` : bound] : [])]);
  return (request) => allowed.has(hostName(request.headers.get('host') ?? new URL(request.url).host));
}
