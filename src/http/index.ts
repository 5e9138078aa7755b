/**
 * `actorloop/http`: a conversation host over HTTP as a Fetch API handler —
 * `createConversationHandler(host, { authorize })` is a `(Request) => Promise<Response>` that mounts
 * in Hono, Next.js route handlers, Bun and Deno, and in `node:http` through `toNodeListener`.
 * Routes for messages, approvals, cancels, the view, the stored history and a resumable
 * Server-Sent Events stream, described by a generated OpenAPI document; every refusal an
 * `application/problem+json` answer. Needs no server library. See docs/http.md. The AI SDK UI
 * message stream protocol (`handleChatRequest`, `resumeChatStream`, `toUIMessageStream`) is
 * exported here too: docs/ui-protocol.md.
 *
 * @example
 * ```ts
 * import { createServer } from 'node:http';
 * import { createConversationHandler, toNodeListener } from 'actorloop/http';
 *
 * const handler = createConversationHandler(host, {
 *   authorize: (request) => request.headers.get('authorization') === `Bearer ${process.env.API_TOKEN}`,
 * });
 * createServer(toNodeListener(handler)).listen(3000);
 * ```
 * @packageDocumentation
 */
export {
  type ConversationAuthorize,
  type ConversationHandler,
  type ConversationHandlerOptions,
  createConversationHandler,
} from './conversation-handler.js';
export { conversationRoutes } from './conversation-routes.js';
export { encodeStreamItem, type EventStreamSettings, eventStreamResponse, type ResumeReason } from './event-stream.js';
export { HttpProblemError } from './http-problem-error.js';
export { answerClientError, type NodeListenerOptions, toNodeListener } from './node-listener.js';
export { openApiDocument } from './openapi-document.js';
export { type ProblemDetails, type ProblemTypeName, problemDetails, problemResponse, problemTypePrefix, problemTypes } from './problem.js';
export { type BodyLimits, readJsonBody } from './read-json-body.js';
export {
  conversationIdPattern,
  type FieldValues,
  fields,
  type JsonSchema,
  objectSchema,
  readFields,
  type RequestField,
  type RequestFields,
} from './request-fields.js';
export { defineRoute, type Route, type RouteAnswer, type RouteContext, type RouteSettings } from './route.js';
// The AI SDK UI message stream protocol (src/http/ui-message, docs/ui-protocol.md): the handler
// serves it at POST /chat and GET /chat/{id}/stream; these mount it elsewhere.
export {
  type ChatAuthorize,
  type ChatRequestOptions,
  chatMessages,
  createUIMessageMapper,
  handleChatRequest,
  isChatId,
  type MessageEnding,
  type ResumeChatOptions,
  resumeChatStream,
  toUIMessageStream,
  toUIMessageStreamResponse,
  toUIMessages,
  type UIMessage,
  type UIMessageChunk,
  type UIMessageErrorChunk,
  type UIMessageFinishChunk,
  type UIMessageMapper,
  type UIMessageMapperOptions,
  type UIMessageMoment,
  type UIMessagePart,
  type UIMessageReasoningChunk,
  type UIMessageStartChunk,
  type UIMessageStepChunk,
  type UIMessageStreamOptions,
  type UIMessageStreamResponseOptions,
  type UIMessageStreamSource,
  type UIMessageTextChunk,
  type UIMessageToolChunk,
  type UIToolPart,
  type UIToolState,
  uiMessageStreamHeaders,
} from './ui-message/index.js';
