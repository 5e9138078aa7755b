/**
 * What was wrong with a request, as an RFC 9457 problem: the status, a sentence naming what was
 * wrong and what was expected, and the request field it is about.
 *
 * @example
 * ```ts
 * const problem: RequestProblem = { status: 400, detail: 'id: expected 1 to 128 letters, digits or . _ : -, got 42', field: 'id' };
 * ```
 */
export type RequestProblem = { status: number; detail: string; field?: string };

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/**
 * The `application/problem+json` response of a problem: never a stack trace, never a byte of a
 * conversation.
 *
 * @example
 * ```ts
 * return problemResponse({ status: 415, detail: 'expected content-type: application/json', field: 'content-type' });
 * ```
 */
export function problemResponse(problem: RequestProblem, headers: Record<string, string> = {}): Response {
  const body = {
    type: 'about:blank',
    title: titles[problem.status] ?? 'Error',
    status: problem.status,
    detail: problem.detail,
    ...(problem.field === undefined ? {} : { field: problem.field }),
  };
  return new Response(JSON.stringify(body), {
    status: problem.status,
    headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store', ...headers },
  });
}
