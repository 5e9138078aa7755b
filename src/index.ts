/**
 * actorloop — LLM conversations with tools as XState v5 actors.
 *
 * @example
 * ```ts
 * import { createConversationMachine, defineTool, handlerProvider } from 'actorloop';
 * import { createActor, toPromise } from 'xstate';
 * ```
 * @packageDocumentation
 */

// The engine
export { createConversationMachine } from './machines/chart/conversation.js';
export { conversationInput, type ConversationInputOptions } from './machines/workflow/conversation-input.js';
export { agentTool, type AgentTool, type AgentToolOptions, type AgentCallSpec } from './machines/agents/agent-tool.js';
export { defineAgent, type Agent, type AgentDefinition } from './machines/agents/define-agent.js';
export type { ConversationOptions, DoomLoopOptions } from './machines/chart/options.js';
export type { RetryOptions } from './machines/policies/retry-policy.js';
export type {
  ConversationMachine,
  ConversationActor,
  ConversationSnapshot,
  ConversationStateValue,
  ConversationInput,
  ConversationEvent,
  ConversationUserEvent,
  ConversationEmittedEvent,
  ConversationContext,
  RunOutput,
  RunError,
  HaltReason,
  RequestStartedEvent,
  RequestFinishedEvent,
  ToolStartedEvent,
  AgentStartedEvent,
  AgentEventEvent,
  AgentFinishedEvent,
  AgentHandoffEvent,
  AgentApproval,
  UsageByAgent,
  ObjectDeltaEvent,
  OutputRepairEvent,
  TextDeltaEvent,
  ReasoningDeltaEvent,
  ToolCallDeltaEvent,
  ToolCallEvent,
  ToolResultEvent,
  ToolProgressEvent,
  ToolApprovalRequestedEvent,
  RequestRetryEvent,
  UsageEvent,
  DoomLoopDetectedEvent,
  EventRejectedEvent,
  RunResumeEvent,
  BudgetDeadlineEvent,
  BudgetReached,
  GuardrailTripped,
  InheritedBudget,
  UserContent,
  RunControl,
  UserMessageQueuedEvent,
  RequestInterruptedEvent,
  ProviderFallbackEvent,
  ContextCompactedEvent,
  GuardrailCheckedEvent,
} from './machines/names/types.js';
export type { BudgetOptions } from './machines/policies/budget.js';
export { modelPrices } from './machines/policies/model-prices.js';
export type { GuardrailOptions } from './machines/controls/guardrails.js';
export type { ContextOptions } from './machines/controls/compaction.js';
export type { CompactionStrategy } from './actors/summarize-call.js';
export { estimateMessageTokens } from './model/estimate-tokens.js';
export { imageSize } from './model/image-size.js';
export { imageTokens, mediaTokens, type MediaTokenRule, unknownMediaTokens } from './model/media-tokens.js';
export type { Guardrail, GuardrailContext, GuardrailVerdict } from './tools/guardrail.js';
export { resultTexts } from './machines/rounds/tool-round.js';
export type { ModelPrice, PriceTable, RunCost } from './machines/policies/pricing.js';
export type { OutputOptions, InferObject } from './machines/policies/structured-output.js';

// Workflows: your machines that invoke or spawn conversations
export { verifyWorkflow, type VerifyWorkflowOptions } from './machines/workflow/verify-workflow.js';
export { assertWorkflow } from './machines/workflow/assert-workflow.js';
export {
  withBudget,
  budgetOver,
  type WithBudgetOptions,
  type WorkflowBudgetHalted,
  type WorkflowBudgetUnpriced,
  type WorkflowSpentEvent,
  type WorkflowBudgetContext,
  type BudgetedWorkflow,
} from './machines/workflow/with-budget.js';
export type { WorkflowProblem, WorkflowProblemKind } from './machines/workflow/workflow-problem.js';
export { WorkflowProblemsError } from './machines/workflow/workflow-problems-error.js';

// Shaping requests
export type { RequestMiddleware, NextRequest } from './middleware/request-middleware.js';
export { MiddlewareError } from './middleware/middleware-error.js';
export { truncateHistory, truncateMessages, estimateTokens, type TruncateHistoryOptions } from './middleware/truncate-history.js';
export { reasoningEffort } from './middleware/reasoning-effort.js';
export { injectSystemPrompt, type InjectSystemPromptOptions } from './middleware/inject-system-prompt.js';

// Hooks
export { withCallbacks, type ConversationCallbacks, type WithCallbacksOptions, type RunEnd } from './observe/callbacks/with-callbacks.js';

// Durable conversations: the host and its stores (SQLite: `actorloop/sqlite`)
export {
  createConversationHost,
  type ConversationHost,
  type ConversationHostOptions,
  type SendOptions,
  type RecoverReport,
  type StartOptions,
  type AnyConversationHost,
  type HostEventOf,
  type HostOutputOf,
} from './host/conversation-host.js';
export type { WorkflowHaltedOutput } from './host/workflow-state.js';
export type { ConversationHostEvent, ConversationStateEvent, WriteFailedEvent } from './host/live-run.js';
export type { ConversationView, PendingApproval, WorkflowConversation } from './host/conversation-view.js';
export type { ConversationStep, ForkOptions, GetOptions, HistoryOptions } from './host/conversation-history.js';
export type {
  ConversationStreamItem,
  ConversationStreamEvent,
  StreamStateEvent,
  FollowOptions,
  StreamObserver,
  ConversationRelay,
} from './host/conversation-stream.js';
export type {
  ConversationStore,
  ConversationStatus,
  StoredConversation,
  ConversationLogEvent,
  ContextCompactedLogEvent,
  ConversationLogEntry,
  RunEndedLogEvent,
  StreamAppend,
  StoredStreamEntry,
  StoredStep,
  LogAppend,
  ConversationSummary,
  ListOptions,
} from './host/conversation-store.js';
export { memoryStore, type MemoryStoreOptions } from './host/memory-store.js';
export { EventRejectedError, type EventRejectedCode } from './host/errors/event-rejected-error.js';
export { ConversationNotFoundError } from './host/errors/conversation-not-found-error.js';
export { ConversationStepNotFoundError } from './host/errors/conversation-step-not-found-error.js';
export { ConversationExistsError } from './host/errors/conversation-exists-error.js';
export { ConversationLoadError, type ConversationLoadProblem } from './host/errors/conversation-load-error.js';
export { ConversationConflictError } from './host/errors/conversation-conflict-error.js';
export { HostClosedError } from './host/errors/host-closed-error.js';
export { ConversationLeaseLostError } from './host/errors/conversation-lease-lost-error.js';
export type { ConversationLease, SaveOptions } from './host/conversation-lease.js';

// Tools
export { defineTool, type Tool, type ToolDefinition, type ToolExecuteContext, type InferArgs } from './tools/define-tool.js';
export type { JSONSchema, ValidationResult } from './tools/validate.js';
export type { StandardSchemaV1, StandardOutput } from './tools/standard-schema.js';
export { HaltError } from './tools/halt-error.js';
export { toolContent, isToolContent, type ToolContent } from './tools/tool-content.js';
export { ToolContentError } from './tools/tool-content-error.js';

// Providers
export type {
  Provider,
  ProviderRequest,
  ProviderEvent,
  ProviderContentPart,
  ProviderToolCall,
  FinishReason,
  ToolDescription,
} from './model/provider.js';
export type {
  Message,
  SystemMessage,
  UserMessage,
  AssistantMessage,
  ToolMessage,
  TextPart,
  ReasoningPart,
  RedactedReasoningPart,
  ToolCallPart,
  ToolResultPart,
  ToolResultContentPart,
  AssistantContentPart,
  ProviderMetadata,
  UserContentPart,
} from './model/messages.js';
export { userContentText } from './model/messages.js';
export {
  type ImagePart,
  type FilePart,
  type MediaData,
  defaultMaxMediaBytes,
  sniffImageMediaType,
  mediaLabel,
} from './model/media.js';
export { mediaSupport, type MediaWire, type MediaRule } from './providers/media-support.js';
export { type Usage, emptyUsage, addUsage } from './model/usage.js';
export type { JsonValue, JsonObject } from './model/json.js';
export { handlerProvider, type ChunkHandler, type HandlerRequest } from './providers/handler/handler-provider.js';
// The handler speaks the Chat Completions wire by contract: the types its signature names stay here.
export type { OpenAIChatCompletionChunk, OpenAIChatMessage, OpenAIChatTool } from './providers/openai-wire/chat-types.js';
export { createNodeFetch, type NodeFetch, type NodeFetchOptions } from './providers/transport/node-fetch.js';
export type { FetchFunction } from './providers/transport/fetch-function.js';
// The wire-specific types and conversions of each provider are in `actorloop/openai` and `actorloop/anthropic`.
export { openaiProvider, type OpenAIProviderOptions, type OpenAIResponsesProviderOptions } from './providers/openai/index.js';
export { anthropicProvider, type AnthropicProviderOptions } from './providers/anthropic/index.js';

// Errors
export { ProviderError, type ProviderErrorCode } from './model/errors/provider-error.js';
export { toProviderError } from './model/errors/classify-error.js';
export { providerEventProblem } from './model/provider-event-problem.js';
export { ActorloopError } from './errors/actorloop-error.js';
export { InvalidOptionsError } from './errors/invalid-options-error.js';
export { UnsupportedRuntimeError } from './errors/unsupported-runtime-error.js';
