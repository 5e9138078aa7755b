/**
 * The Vercel AI SDK UI message stream protocol (`useChat`, `readUIMessageStream`) over actorloop
 * runs and host conversations: mounted by `actorloop/http` (`POST /chat`, `GET /chat/:id/stream`),
 * usable on their own in any Fetch API server. See docs/ui-protocol.md.
 *
 * @example
 * ```ts
 * import { handleChatRequest, resumeChatStream, toUIMessageStream, toUIMessageStreamResponse } from 'actorloop/http';
 *
 * const answer = (request: Request) => handleChatRequest(host, request, { authorize });
 * const resume = (id: string) => resumeChatStream(host, id);
 * const run = (actor: ConversationActor) => toUIMessageStreamResponse(toUIMessageStream(actor));
 * ```
 * @packageDocumentation
 */
export type {
  UIMessageChunk,
  UIMessageErrorChunk,
  UIMessageFinishChunk,
  UIMessageReasoningChunk,
  UIMessageStartChunk,
  UIMessageStepChunk,
  UIMessageTextChunk,
  UIMessageToolChunk,
} from './ui-message-chunk.js';
export type { UIMessage, UIMessagePart, UIToolPart, UIToolState } from './ui-message.js';
export {
  createUIMessageMapper,
  type MessageEnding,
  type UIMessageMapper,
  type UIMessageMapperOptions,
  type UIMessageMoment,
} from './ui-message-mapper.js';
export { toUIMessageStream, type UIMessageStreamOptions, type UIMessageStreamSource } from './to-ui-message-stream.js';
export {
  toUIMessageStreamResponse,
  type UIMessageStreamResponseOptions,
  uiMessageStreamHeaders,
} from './ui-message-stream-response.js';
export { toUIMessages } from './to-ui-messages.js';
export { toolContentOutput, toolOutputOf, type UIToolContentItem } from './tool-output.js';
export { trailingAnswerIndex, uiMessageIdAt } from './message-ids.js';
export { type ApprovalAnswer, type ChatRequest, chatIdExpected, chatIdProblem, isChatId, parseChatRequest } from './chat-request.js';
export {
  type ChatAuthorize,
  type ChatRequestOptions,
  chatMessages,
  handleChatRequest,
  type ResumeChatOptions,
  resumeChatStream,
} from './handle-chat-request.js';
export { requestProblemResponse, type RequestProblem } from './problem-response.js';
