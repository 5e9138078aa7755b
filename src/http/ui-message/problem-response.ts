import { type ProblemTypeName, problemDetails, problemResponse } from '../problem.js';

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

/** The problem type of each status the chat routes answer with; a 400 about the body as a whole is a malformed body. */
function typeOf({ status, field }: RequestProblem): ProblemTypeName {
  switch (status) {
    case 400:
      return field === 'body' ? 'malformed-body' : 'invalid-field';
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'conversation-not-found';
    case 405:
      return 'method-not-allowed';
    case 408:
      return 'body-timeout';
    case 409:
      return 'event-rejected';
    case 413:
      return 'body-too-large';
    case 415:
      return 'unsupported-media-type';
    case 503:
      return 'host-closed';
    default:
      return 'internal-error';
  }
}

/**
 * The `application/problem+json` response of a chat route's problem, typed like every other
 * answer of `actorloop/http` (`urn:actorloop:problem:<name>`): never a stack trace, never a byte
 * of a conversation.
 *
 * @example
 * ```ts
 * return requestProblemResponse({ status: 415, detail: 'expected content-type: application/json', field: 'content-type' });
 * ```
 */
export function requestProblemResponse(problem: RequestProblem, headers: Record<string, string> = {}): Response {
  return problemResponse(problemDetails(typeOf(problem), problem.detail, problem.field), headers);
}
