import { TerminalError } from '@restatedev/restate-sdk';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { ConversationLoadError } from '../../host/errors/conversation-load-error.js';
import { ConversationNotFoundError } from '../../host/errors/conversation-not-found-error.js';
import { EventRejectedError } from '../../host/errors/event-rejected-error.js';

/**
 * A handler's error as Restate returns it to the caller: a `TerminalError` (not retried) with the
 * HTTP status the ingress answers with, and the error's class and fields in its metadata, so the
 * client (`conversationErrorOf`) throws the same error the durable host would.
 */
export function toTerminalError(error: unknown): unknown {
  if (InvalidOptionsError.isInstance(error)) {
    return new TerminalError(error.message, { errorCode: 400, metadata: { error: error.name, option: error.option } });
  }
  if (ConversationNotFoundError.isInstance(error)) {
    return new TerminalError(error.message, { errorCode: 404, metadata: { error: error.name, conversationId: error.conversationId } });
  }
  if (EventRejectedError.isInstance(error)) {
    return new TerminalError(error.message, {
      errorCode: 409,
      metadata: { error: error.name, conversationId: error.conversationId, eventType: error.eventType, code: error.code },
    });
  }
  if (ConversationLoadError.isInstance(error)) {
    return new TerminalError(error.message, {
      errorCode: 422,
      metadata: { error: error.name, conversationId: error.conversationId, problem: error.problem },
    });
  }
  return error;
}

/** Runs a handler's body, turning the errors a caller should get into terminal errors. */
export async function asHandler<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw toTerminalError(error);
  }
}
