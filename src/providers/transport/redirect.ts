/**
 * Where a response redirects to, the way `fetch` follows it (redirect: 'follow'), or `null` when it
 * is not a redirect to follow. 303, and 301/302 after a POST, continue as a GET without the body;
 * 307 and 308 repeat the method and body.
 */
export function redirectTarget(
  status: number,
  location: string | undefined,
  from: URL,
  method: string,
): { url: URL; method: string } | null {
  if (![301, 302, 303, 307, 308].includes(status) || !location) return null;
  let url: URL;
  try {
    url = new URL(location, from);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  const toGet = status === 303 ? method !== 'HEAD' : (status === 301 || status === 302) && method === 'POST';
  return { url, method: toGet ? 'GET' : method };
}
