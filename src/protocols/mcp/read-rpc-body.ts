/**
 * A JSON-RPC request body, read up to `maxBytes`: `{ body }` once parsed, `{ refused }` with the
 * HTTP status and JSON-RPC error to answer (413 past the limit, counted as the bytes arrive and read
 * no further; 400 / -32700 for text that is not JSON).
 *
 * @example
 * ```ts
 * const read = await readRpcBody(request, 1_000_000);
 * if ('refused' in read) return rpcErrorResponse(read.refused.status, read.refused.code, read.refused.message);
 * ```
 */
export async function readRpcBody(
  request: Request,
  maxBytes: number,
): Promise<{ body: unknown } | { refused: { status: number; code: number; message: string } }> {
  const tooLarge = { refused: { status: 413, code: -32600, message: `request body larger than ${maxBytes} bytes` } };
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (declared > maxBytes) {
    // Not read: the listener drops what the client still sends.
    await request.body?.cancel().catch(() => undefined);
    return tooLarge;
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        return tooLarge;
      }
      chunks.push(value);
    }
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  try {
    return { body: JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes)) as unknown };
  } catch (error) {
    const reason = error instanceof Error ? error.message.slice(0, 160) : 'invalid';
    return { refused: { status: 400, code: -32700, message: `parse error: the body is not JSON (${reason})` } };
  }
}

/**
 * A JSON-RPC error as an HTTP response (`id: null`: the request it answers could not be read or
 * routed), for what the handler refuses before the SDK transport sees the request.
 *
 * @example
 * ```ts
 * return rpcErrorResponse(404, -32001, 'session not found: initialize a new one');
 * ```
 */
export function rpcErrorResponse(status: number, code: number, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}
