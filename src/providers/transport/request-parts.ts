/**
 * A request body `node:http` can write as is: a string or bytes, `null` for none, or `undefined`
 * when it is a kind this transport leaves to the global `fetch` (form data, blobs, streams).
 */
export function requestBodyOf(body: RequestInit['body']): string | Uint8Array | null | undefined {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return body;
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof URLSearchParams) return body.toString();
  return undefined;
}

/**
 * Request headers as one lower-cased record, from any shape `fetch` accepts; repeated names are
 * joined with ", " as `Headers` joins them.
 */
export function toHeaderRecord(headers: RequestInit['headers']): Record<string, string> {
  const record: Record<string, string> = {};
  const add = (name: string, value: string) => {
    const key = name.toLowerCase();
    record[key] = record[key] === undefined ? value : `${record[key]}, ${value}`;
  };
  if (headers === undefined || headers === null) return record;
  if (headers instanceof Headers) for (const [name, value] of headers) add(name, value);
  else if (Array.isArray(headers)) for (const [name, value] of headers) add(String(name), String(value));
  else for (const [name, value] of Object.entries(headers)) if (value !== undefined) add(name, String(value));
  return record;
}
