import { InvalidOptionsError } from '../../../errors/invalid-options-error.js';
import { ConversationConflictError } from '../../../host/errors/conversation-conflict-error.js';
import { ConversationExistsError } from '../../../host/errors/conversation-exists-error.js';
import { ConversationLoadError } from '../../../host/errors/conversation-load-error.js';
import { ConversationNotFoundError } from '../../../host/errors/conversation-not-found-error.js';
import { ConversationStepNotFoundError } from '../../../host/errors/conversation-step-not-found-error.js';
import { EventRejectedError } from '../../../host/errors/event-rejected-error.js';
import { HostClosedError } from '../../../host/errors/host-closed-error.js';
import { ViewerRequestError } from './viewer-request-error.js';

/** The problem types the viewer answers with, by status (the same `urn:actorloop:problem:` names as actorloop/http). */
const problemNames: Record<number, { name: string; title: string }> = {
  400: { name: 'invalid-field', title: 'Invalid request field' },
  401: { name: 'unauthorized', title: 'Not authenticated' },
  403: { name: 'forbidden', title: 'Not allowed' },
  404: { name: 'not-found', title: 'Not found' },
  405: { name: 'method-not-allowed', title: 'Method not allowed' },
  409: { name: 'conflict', title: 'Not possible now' },
  413: { name: 'body-too-large', title: 'Request body too large' },
  415: { name: 'unsupported-media-type', title: 'Unsupported media type' },
  500: { name: 'internal-error', title: 'Internal error' },
  501: { name: 'missing-dependency', title: 'Optional package not installed' },
  503: { name: 'host-closed', title: 'Service shutting down' },
};

/**
 * A viewer problem as RFC 9457 problem details (`application/problem+json`), never cached;
 * `members` are extension members (`package` of a `missing-dependency`).
 *
 * @example
 * ```ts
 * return problemAnswer(404, 'id: expected a conversation that exists, got "c-9"', 'id');
 * ```
 */
export function problemAnswer(
  status: number,
  detail: string,
  field?: string,
  headers: Record<string, string> = {},
  members: Record<string, string> = {},
): Response {
  const { name, title } = problemNames[status] ?? { name: 'error', title: 'Error' };
  const body = { type: `urn:actorloop:problem:${name}`, title, status, detail, ...(field === undefined ? {} : { field }), ...members };
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/problem+json', 'cache-control': 'no-store', ...headers },
  });
}

/**
 * The answer to an error: a refused request as its problem, a host error by its class, anything
 * else a 500 that says nothing more (`serverFault`: true, for the caller to report).
 */
export function answerToError(error: unknown): { response: Response; serverFault: boolean } {
  const client = (status: number, detail: string, field?: string, headers?: Record<string, string>) => ({
    response: problemAnswer(status, detail, field, headers),
    serverFault: false,
  });
  if (ViewerRequestError.isInstance(error)) return client(error.status, error.message, error.field, error.headers);
  if (ConversationNotFoundError.isInstance(error))
    return client(404, `id: expected a conversation that exists, got ${JSON.stringify(error.conversationId)}`, 'id');
  if (ConversationStepNotFoundError.isInstance(error)) return client(404, `seq: ${error.message}`, 'seq');
  if (ConversationExistsError.isInstance(error)) return client(409, `newId: ${error.message}`, 'newId');
  if (EventRejectedError.isInstance(error)) return client(409, error.message);
  if (ConversationConflictError.isInstance(error))
    return client(409, 'the conversation was changed by another writer meanwhile; read it again and retry');
  if (InvalidOptionsError.isInstance(error)) return client(400, error.message.replace(/^Invalid option /, ''), error.option);
  if (HostClosedError.isInstance(error))
    return client(503, 'the service is shutting down; try again shortly', undefined, { 'retry-after': '1' });
  if (ConversationLoadError.isInstance(error)) {
    // Stored data the host refuses (tampered, another machine's): said plainly, and left as it was.
    return {
      response: problemAnswer(500, `the stored conversation cannot be loaded (${error.problem.replace('_', ' ')}); it is left as it was`),
      serverFault: false,
    };
  }
  return { response: problemAnswer(500, 'the request could not be answered'), serverFault: true };
}
