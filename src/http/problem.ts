/**
 * The problems `actorloop/http` answers with, as RFC 9457 problem details
 * (`application/problem+json`): each has a stable `type`, a `title` and a status; `detail` says
 * what was wrong and what was expected, and `field` names the part of the request it is about
 * (`body`, `content`, `id`, `Last-Event-ID`, `content-type`, …). No answer carries a stack trace.
 */

/**
 * Every problem type, by the last part of its `type` URI (`urn:actorloop:problem:<name>`), with
 * the status and title it is answered with. docs/http.md lists what each means.
 *
 * @example
 * ```ts
 * problemTypes['body-too-large']; // { status: 413, title: 'Request body too large' }
 * ```
 */
export const problemTypes = {
  'malformed-request': { status: 400, title: 'Malformed request' },
  'malformed-body': { status: 400, title: 'Malformed request body' },
  'invalid-field': { status: 400, title: 'Invalid request field' },
  unauthorized: { status: 401, title: 'Not authenticated' },
  forbidden: { status: 403, title: 'Not allowed' },
  'route-not-found': { status: 404, title: 'No such route' },
  'conversation-not-found': { status: 404, title: 'No such conversation' },
  'step-not-found': { status: 404, title: 'No such stored step' },
  'media-not-found': { status: 404, title: 'No such medium in this conversation' },
  'method-not-allowed': { status: 405, title: 'Method not allowed' },
  'body-timeout': { status: 408, title: 'Request body timed out' },
  'conversation-busy': { status: 409, title: 'Conversation busy elsewhere' },
  'event-rejected': { status: 409, title: 'Event not accepted now' },
  'conversation-conflict': { status: 409, title: 'Conversation changed meanwhile' },
  'conversation-exists': { status: 409, title: 'Conversation already exists' },
  'body-too-large': { status: 413, title: 'Request body too large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported media type' },
  'headers-too-large': { status: 431, title: 'Request headers too large' },
  'stored-conversation-unreadable': { status: 500, title: 'Stored conversation cannot be read' },
  'internal-error': { status: 500, title: 'Internal error' },
  'history-unavailable': { status: 501, title: 'History not available' },
  'media-unavailable': { status: 501, title: 'Media not available' },
  'method-not-implemented': { status: 501, title: 'Method not implemented' },
  'host-closed': { status: 503, title: 'Service shutting down' },
} as const;

/**
 * The name of a problem type (`problemTypes`' keys).
 *
 * @example
 * ```ts
 * const name: ProblemTypeName = 'invalid-field';
 * ```
 */
export type ProblemTypeName = keyof typeof problemTypes;

/** The URI prefix of every problem type: `urn:actorloop:problem:invalid-field`. */
export const problemTypePrefix = 'urn:actorloop:problem:';

/**
 * A problem details object as `actorloop/http` sends it (RFC 9457, with the `field` extension).
 *
 * @example
 * ```ts
 * const problem: ProblemDetails = {
 *   type: 'urn:actorloop:problem:invalid-field', title: 'Invalid request field', status: 400,
 *   detail: 'content: expected a non-empty string, got 42', field: 'content',
 * };
 * ```
 */
export type ProblemDetails = { type: string; title: string; status: number; detail: string; field?: string };

/**
 * The problem details of a problem type, with what was wrong.
 *
 * @example
 * ```ts
 * problemDetails('body-too-large', 'body: expected at most 1000000 bytes', 'body');
 * ```
 */
export function problemDetails(name: ProblemTypeName, detail: string, field?: string): ProblemDetails {
  const { status, title } = problemTypes[name];
  return { type: `${problemTypePrefix}${name}`, title, status, detail, ...(field === undefined ? {} : { field }) };
}

/**
 * The `application/problem+json` response of a problem, never cached.
 *
 * @example
 * ```ts
 * return problemResponse(problemDetails('forbidden', 'not allowed'));
 * ```
 */
export function problemResponse(problem: ProblemDetails, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(problem), {
    status: problem.status,
    headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store', ...headers },
  });
}

/** A value as a problem's detail shows it: short, and never a whole body echoed back. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string') return value.length > 60 ? `a string of ${value.length} characters` : JSON.stringify(value);
  return String(value);
}
