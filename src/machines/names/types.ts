import type { Actor, AnyActorRef, MetaObject, ParameterizedObject, ProvidedActor, SnapshotFrom, StateMachine, StateSchema } from 'xstate';
import type { ProviderCallEvent } from '../../actors/provider-call.js';
import type { ToolExecutionOutput, ToolProgressReport } from '../../actors/tool-execution.js';
import type { JsonValue } from '../../model/json.js';
import type { AssistantContentPart, Message, ToolResultContentPart, ToolResultPart } from '../../model/messages.js';
import type { UserContent } from '../../model/user-content.js';
import type { FinishReason } from '../../model/provider.js';
import type { Usage } from '../../model/usage.js';

/**
 * A run's cost in the price table's currency, failed attempts included (they are billed too).
 *
 * @example
 * ```ts
 * const { cost } = await toPromise(actor);
 * if (cost) console.log(`$${cost.total.toFixed(4)}`, cost.unpricedModels);
 * ```
 */
export type RunCost = {
  input: number;
  cachedInput: number;
  cacheWrite: number;
  output: number;
  total: number;
  /** Models that answered but have no price: their tokens are not in the totals. */
  unpricedModels: string[];
};

/** The verdict on a final answer: its object, or what was wrong, written for the model. */
export type AnswerCheck = { ok: true; object: unknown } | { ok: false; problem: string };

/**
 * Why a run ended in `halted` (or a host-defined reason).
 *
 * @example
 * ```ts
 * const output = await toPromise(actor);
 * if (output.status === 'halted' && output.reason === 'max_iterations') console.warn('raise maxToolIterations?');
 * ```
 */
export type HaltReason = 'max_iterations' | 'tool_halt' | 'doom_loop' | 'cancelled' | 'agent_failed' | 'budget' | 'guardrail';

/**
 * The error a run ended with, as plain JSON so it survives a persisted snapshot.
 *
 * @example
 * ```ts
 * const { status, error } = await toPromise(actor);
 * if (status === 'error' && error?.code === 'authentication') console.error('check the API key:', error.message);
 * ```
 */
export type RunError = {
  name: string;
  message: string;
  status?: number;
  retryable: boolean;
  /** A coarse classification, e.g. `rate_limit`, `authentication`, `invalid_input`. */
  code?: string;
};

/**
 * What every run resolves with (`toPromise(actor)` never rejects).
 *
 * @example
 * ```ts
 * const output: RunOutput = await toPromise(actor);
 * if (output.status === 'done') console.log(output.text);
 * const next = createActor(machine, { input: { messages: output.messages } });
 * ```
 */
export type RunOutput<TObject = unknown> = {
  status: 'done' | 'halted' | 'error';
  reason?: HaltReason | (string & {});
  /** The final assistant text ('' if none). */
  text: string;
  /** The whole history, valid to send to the provider again. */
  messages: Message[];
  /** Tool rounds executed. */
  iterations: number;
  usage: Usage;
  /** The last response's finish reason, when there was one. */
  finishReason?: FinishReason;
  error?: RunError;
  /** Tokens that failed attempts reported before failing (not in `usage`); absent when none did. */
  failedUsage?: Usage;
  /** What the run cost, when the machine has a `prices` table (failed attempts included). */
  cost?: RunCost;
  /**
   * The structured answer, when the machine has an `output` schema and the run ended `done`: it
   * passed validation (never set to data that failed it).
   */
  object?: TObject;
  /** Repairs of an invalid structured answer this run made. */
  repairs?: number;
  /**
   * `usage` split by agent, for a machine with agent tools: the root's own share has `path: []`,
   * each agent call's share the `path` of `toolCallId`s down to it (as in `agent.event`).
   */
  usageByAgent?: UsageByAgent[];
  /** For a machine with handoffs: the agent active at the end. */
  agent?: string;
  /** For a run that ended `halted` / `budget`: the limit it reached and what had been spent. */
  budget?: BudgetReached;
  /** For a run that ended `halted` / `guardrail`: the guardrail that tripped and why. */
  guardrail?: GuardrailTripped;
};

/**
 * The budget limit a run reached (see `budget` in the options): `used` is what the run and its
 * agent tree had spent when it stopped, in the limit's unit (tokens, the price table's currency, ms).
 *
 * @example
 * ```ts
 * const { status, reason, budget } = await toPromise(actor);
 * if (reason === 'budget' && budget) console.warn(`${budget.limit}: ${budget.used} of ${budget.max}`);
 * ```
 */
export type BudgetReached = { limit: 'maxTotalTokens' | 'maxCostUsd' | 'maxDurationMs'; max: number; used: number };

/**
 * A guardrail that tripped (see `guardrails` in the options).
 *
 * @example
 * ```ts
 * const { reason, guardrail } = await toPromise(actor);
 * if (reason === 'guardrail') console.warn(`${guardrail?.name}: ${guardrail?.reason}`);
 * ```
 */
export type GuardrailTripped = { name: string; phase: 'input' | 'output'; reason: string };

/**
 * One agent's share of a tree's usage (see {@link RunOutput.usageByAgent}).
 *
 * @example
 * ```ts
 * for (const { path, agent, usage } of output.usageByAgent ?? []) console.log(path.join('/') || '(root)', agent, usage.totalTokens);
 * ```
 */
export type UsageByAgent = { path: string[]; agent: string; usage: Usage };

/**
 * What a run starts from. A run ends after one answer, so the next turn starts a new actor from
 * the previous output's history.
 *
 * @example
 * ```ts
 * const next = createActor(machine, { input: { messages: previous.messages, sessionData: { userId: 'u1' } } }).start();
 * ```
 */
export type ConversationInput = {
  /** The history so far (e.g. the previous run's `output.messages`). */
  messages?: Message[];
  /**
   * A user message the run starts with at once, after `messages`: no `user.message` needed. How a
   * workflow starts a conversation it invokes ({@link conversationInput}). Checked as a
   * `user.message`'s content is (and by the input guardrails): an invalid one ends the run in
   * `error`, naming what was wrong.
   */
  prompt?: UserContent;
  /**
   * Per-conversation data (plain JSON, persisted with the run): handed to every tool as
   * `execute(args, { sessionData })` and to the provider (a handler's `sessionData`) untouched.
   */
  sessionData?: unknown;
  /**
   * The conversation the run belongs to, set by a host (`createConversationHost`, the Restate
   * object): with `promptCache` on and no `key`, OpenAI requests carry it as `prompt_cache_key`, so
   * the rounds of one conversation reach the same cache.
   */
  conversationId?: string;
  /**
   * How deep in an agent tree this run is: set by the parent that starts it as an agent call (the
   * root is 0). A call that would go deeper than `maxAgentDepth` gets an error result instead.
   */
  agentDepth?: number;
  /** For a machine with handoffs: the agent the run starts with (e.g. the one active when the last run ended). Default `startAgent`. */
  agent?: string;
  /**
   * What is left of a caller's budget: set by the parent that starts the run as an agent call, so
   * the child stops where the tree would go over (the tighter of this and the child's own `budget`).
   */
  budget?: InheritedBudget;
};

/**
 * The part of a budget an agent call's child inherits from its caller (see {@link ConversationInput.budget}).
 *
 * @example
 * ```ts
 * const input: ConversationInput = { messages: [], budget: { maxTotalTokens: 4_000, deadline: Date.now() + 60_000 } };
 * ```
 */
export type InheritedBudget = { maxTotalTokens?: number; maxCostUsd?: number; deadline?: number };

export type { UserContent } from '../../model/user-content.js';

/**
 * Events a user sends to a conversation actor. One the run cannot take now is answered with an
 * `event.rejected` emit instead of being dropped silently.
 *
 * @example
 * ```ts
 * actor.send({ type: 'user.message', content: 'What is 2+3?' });
 * actor.on('tool.approval.requested', ({ toolCallId }) => actor.send({ type: 'tool.approve', toolCallId }));
 * actor.send({ type: 'user.interrupt', content: 'Stop, use metric units.' }); // the request in flight is abandoned
 * actor.send({ type: 'cancel', reason: 'user left' });
 * ```
 */
export type ConversationUserEvent =
  | { type: 'user.message'; content: UserContent }
  | { type: 'user.interrupt'; content: UserContent }
  | { type: 'cancel'; reason?: string }
  | { type: 'tool.approve'; toolCallId: string }
  | { type: 'tool.deny'; toolCallId: string; reason?: string };

/** A tool execution that finished, with its result (sent by XState, never by users). */
export type ToolCallDoneEvent = { type: `xstate.done.actor.toolCall-${string}`; output: ToolExecutionOutput };
/** A tool execution that threw (sent by XState, never by users); a `HaltError` ends the run. */
export type ToolCallErrorEvent = { type: `xstate.error.actor.toolCall-${string}`; error: unknown };
/** An agent call's child conversation ended (sent by XState, never by users). */
export type AgentCallDoneEvent = { type: `xstate.done.actor.agent:${string}`; output: RunOutput };
/** An agent call's child could not run (sent by XState, never by users); its call gets an error result. */
export type AgentCallErrorEvent = { type: `xstate.error.actor.agent:${string}`; error: unknown };
/**
 * The events one step of an agent call's child emitted, in order, handed to its parent (never sent
 * by users; see `agent.event`).
 */
export type AgentEmittedEvent = { type: 'agent.emitted'; childId: string; events: ConversationEmittedEvent[] };
/** A provider call that failed (sent by XState, never by users). */
export type ProviderCallErrorEvent = { type: 'xstate.error.actor.providerCall'; error: unknown };

/**
 * Sent by a restored run to itself when it starts (never by users): a run restored in `requesting`
 * makes its request again, one restored in `executingTools` reports the calls the restart
 * interrupted and starts the calls that are to run (again).
 */
export type RunResumeEvent = { type: 'run.resume' };

/** The run's time budget (`budget.maxDurationMs`) ran out: a delayed event the run sends itself (never users). */
export type BudgetDeadlineEvent = { type: 'budget.deadline' };

/**
 * Every event the machine handles: the user's and those its own actors send. Hosts only ever send
 * the {@link ConversationUserEvent} members.
 *
 * @example
 * ```ts
 * const stop: ConversationEvent = { type: 'cancel', reason: 'user closed the tab' };
 * actor.send(stop);
 * ```
 */
export type ConversationEvent =
  | ConversationUserEvent
  | ProviderCallEvent
  | ProviderCallErrorEvent
  | ToolCallDoneEvent
  | ToolCallErrorEvent
  | AgentCallDoneEvent
  | AgentCallErrorEvent
  | AgentEmittedEvent
  | RunResumeEvent
  | BudgetDeadlineEvent
  | ToolProgressReport;

/**
 * A provider request starts: `iteration` counts the tool rounds executed before it (0 for the
 * first), `attempt` counts from 1 and grows on each retry.
 *
 * @example
 * ```ts
 * actor.on('request.started', ({ iteration, attempt }: RequestStartedEvent) => console.log(`round ${iteration}, attempt ${attempt}`));
 * ```
 */
export type RequestStartedEvent = {
  type: 'request.started';
  iteration: number;
  attempt: number;
  /** The provider's name (`openai`, `anthropic`, …). */
  provider: string;
  /** The model requested, when the provider says. */
  model?: string;
};

/**
 * A provider request answered: why it stopped, what it cost in tokens, which model answered.
 *
 * @example
 * ```ts
 * actor.on('request.finished', (event: RequestFinishedEvent) => console.log(event.model, event.finishReason, event.usage.totalTokens));
 * ```
 */
export type RequestFinishedEvent = {
  type: 'request.finished';
  iteration: number;
  attempt: number;
  finishReason: FinishReason;
  usage: Usage;
  /** The model that answered, as the response names it (else the one requested). */
  model?: string;
  responseId?: string;
};

/**
 * The structured answer streaming so far, parsed best effort (machines with an `output` schema):
 * for live display; only `output.object` is validated.
 *
 * @example
 * ```ts
 * actor.on('object.delta', (event: ObjectDeltaEvent) => render(event.object));
 * ```
 */
export type ObjectDeltaEvent = { type: 'object.delta'; object: unknown };

/**
 * The final answer did not match the `output` schema and goes back to the model (`repair` counts
 * from 1, at most `maxRepairs`).
 *
 * @example
 * ```ts
 * actor.on('output.repair', (event: OutputRepairEvent) => console.warn(`repair ${event.repair}/${event.maxRepairs}: ${event.problem}`));
 * ```
 */
export type OutputRepairEvent = { type: 'output.repair'; repair: number; maxRepairs: number; problem: string };

/**
 * A tool call starts running (after validation and any approval): its `execute` is called now.
 *
 * @example
 * ```ts
 * const started = new Map<string, number>();
 * actor.on('tool.started', (event: ToolStartedEvent) => started.set(event.toolCallId, Date.now()));
 * ```
 */
export type ToolStartedEvent = { type: 'tool.started'; toolCallId: string; name: string };

/**
 * An agent call starts its child conversation (`agent` is the agent tool's name).
 *
 * @example
 * ```ts
 * actor.on('agent.started', (event: AgentStartedEvent) => console.log(`asking ${event.agent}`));
 * ```
 */
export type AgentStartedEvent = { type: 'agent.started'; toolCallId: string; agent: string };

/**
 * An event a child conversation emitted, anywhere down the tree: `path` is the `toolCallId`s of
 * the agent calls from this actor down to the one that emitted it.
 *
 * @example
 * ```ts
 * actor.on('agent.event', ({ path, event }: AgentEventEvent) => {
 *   if (event.type === 'text.delta') process.stdout.write(`[${path.join('/')}] ${event.delta}`);
 * });
 * ```
 */
export type AgentEventEvent = { type: 'agent.event'; path: string[]; event: ConversationEmittedEvent };

/**
 * An agent call's child ended, also when it was cancelled or timed out (its output then says
 * `halted` with the reason `cancelled` or `timeout`, and the usage it had).
 *
 * @example
 * ```ts
 * actor.on('agent.finished', ({ agent, output }: AgentFinishedEvent) => console.log(agent, output.status, output.usage.totalTokens));
 * ```
 */
export type AgentFinishedEvent = { type: 'agent.finished'; toolCallId: string; agent: string; output: RunOutput };

/**
 * The conversation passes from one agent to another (a `transfer_to_<name>` call's round completed):
 * the next request uses `to`'s system prompt, tools and provider.
 *
 * @example
 * ```ts
 * actor.on('agent.handoff', ({ from, to }: AgentHandoffEvent) => console.log(`${from} → ${to}`));
 * ```
 */
export type AgentHandoffEvent = { type: 'agent.handoff'; from: string; to: string };

/**
 * A piece of the answer's text as it streams.
 *
 * @example
 * ```ts
 * actor.on('text.delta', (event: TextDeltaEvent) => process.stdout.write(event.delta));
 * ```
 */
export type TextDeltaEvent = { type: 'text.delta'; delta: string };

/**
 * A piece of the model's reasoning (thinking) as it streams.
 *
 * @example
 * ```ts
 * actor.on('reasoning.delta', (event: ReasoningDeltaEvent) => process.stderr.write(event.delta));
 * ```
 */
export type ReasoningDeltaEvent = { type: 'reasoning.delta'; delta: string };

/**
 * A piece of a tool call's arguments as they stream (`name` on the first piece of a call).
 *
 * @example
 * ```ts
 * actor.on('tool.call.delta', (event: ToolCallDeltaEvent) => console.log(event.toolCallId, event.argsDelta));
 * ```
 */
export type ToolCallDeltaEvent = { type: 'tool.call.delta'; toolCallId: string; name?: string; argsDelta: string };

/**
 * A whole tool call the model made, arguments parsed (raw text when they were not JSON).
 *
 * @example
 * ```ts
 * actor.on('tool.call', (event: ToolCallEvent) => console.log(`${event.name}(${JSON.stringify(event.args)})`));
 * ```
 */
export type ToolCallEvent = { type: 'tool.call'; toolCallId: string; name: string; args: unknown };

/**
 * A tool call and its result, as the `tool.result` event reports it: one for every call, also for
 * unknown tools, invalid arguments, timeouts and denials (`isError: true`).
 *
 * @example
 * ```ts
 * actor.on('tool.result', (event: ToolResultEvent) => console.log(event.name, event.isError ? 'failed:' : '->', event.result));
 * ```
 */
export type ToolResultEvent = {
  type: 'tool.result';
  toolCallId: string;
  name: string;
  /** The serialised result (or the error text when `isError`); a `toolContent` result's text, media as labels. */
  result: string;
  isError: boolean;
  /** A `toolContent` result's parts (text, images, files), in order. */
  content?: ToolResultContentPart[];
};

/**
 * A running tool's progress: what its `execute`, written as an async generator, yielded (as
 * JSON). Live only — a restored run reports none for what ran before — and never the result,
 * which `tool.result` carries. Progress does not extend the call's timeout.
 *
 * @example
 * ```ts
 * actor.on('tool.progress', ({ toolCallId, data }: ToolProgressEvent) => console.log(toolCallId, data));
 * ```
 */
export type ToolProgressEvent = { type: 'tool.progress'; toolCallId: string; data: JsonValue };

/**
 * A call waits for `tool.approve` or `tool.deny`.
 *
 * @example
 * ```ts
 * actor.on('tool.approval.requested', ({ toolCallId }: ToolApprovalRequestedEvent) => actor.send({ type: 'tool.approve', toolCallId }));
 * ```
 */
export type ToolApprovalRequestedEvent = {
  type: 'tool.approval.requested';
  toolCallId: string;
  name: string;
  args: unknown;
  /**
   * For a call of a child conversation (an agent call, at any depth): the `toolCallId`s of the agent
   * calls down to the child that owns it. `tool.approve` / `tool.deny` sent here reach that child.
   */
  path?: string[];
};

/**
 * A call somewhere down an agent tree that waits for `tool.approve` / `tool.deny` (see
 * {@link ToolApprovalRequestedEvent.path}).
 *
 * @example
 * ```ts
 * for (const { toolCallId, path } of actor.getSnapshot().context.agents.approvals) console.log(path.join('/'), toolCallId);
 * ```
 */
export type AgentApproval = { toolCallId: string; name: string; args: unknown; path: string[] };

/**
 * A failed request will be tried again after `delayMs`; `discardPartial` says whether output
 * already streamed from the failed attempt is to be thrown away.
 *
 * @example
 * ```ts
 * actor.on('request.retry', (event: RequestRetryEvent) => console.warn(`retry ${event.attempt} in ${event.delayMs} ms: ${event.error.message}`));
 * ```
 */
export type RequestRetryEvent = { type: 'request.retry'; attempt: number; delayMs: number; error: RunError; discardPartial: boolean };

/**
 * Token usage of one response (`step`) and of the run so far (`total`).
 *
 * @example
 * ```ts
 * actor.on('usage', ({ total }: UsageEvent) => console.log(`${total.totalTokens} tokens so far`));
 * ```
 */
export type UsageEvent = { type: 'usage'; step: Usage; total: Usage };

/**
 * The model repeats the same tool calls: `notice` when it gets told, `halt` when the run ends.
 *
 * @example
 * ```ts
 * actor.on('doom_loop.detected', (event: DoomLoopDetectedEvent) => console.warn(event.action, event.pattern));
 * ```
 */
export type DoomLoopDetectedEvent = {
  type: 'doom_loop.detected';
  pattern: Array<{ name: string; args: unknown }>;
  repeats: number;
  action: 'notice' | 'halt';
};

/**
 * An event the run could not take now (an empty `user.message`, a second one during a run, an
 * approval for a call that is not waiting): answered, never dropped silently.
 *
 * @example
 * ```ts
 * actor.on('event.rejected', (event: EventRejectedEvent) => console.warn(event.message));
 * ```
 */
export type EventRejectedEvent = { type: 'event.rejected'; eventType: string; message: string };

/**
 * A `user.message` sent during a run was kept (`steering: 'queue'`): it enters the history at the
 * next request boundary, after the current round's tool results.
 *
 * @example
 * ```ts
 * actor.on('user.message.queued', ({ queued }: UserMessageQueuedEvent) => console.log(`${queued} message(s) wait for the next request`));
 * ```
 */
export type UserMessageQueuedEvent = { type: 'user.message.queued'; content: UserContent; queued: number };

/**
 * A `user.interrupt` abandoned what the run was doing: the request in flight (its streamed output is
 * to be discarded when `discardPartial`), a retry's wait, or the tool calls of the round (each got an
 * error result). The message joins the history and the next request starts.
 *
 * @example
 * ```ts
 * actor.on('request.interrupted', ({ discardPartial }: RequestInterruptedEvent) => { if (discardPartial) clearAnswer(); });
 * ```
 */
export type RequestInterruptedEvent = { type: 'request.interrupted'; state: string; discardPartial: boolean };

/**
 * The request's retries on one provider were used up on a retryable error: the next provider of
 * the list takes the same request (`from` and `to` are provider names with their index).
 *
 * @example
 * ```ts
 * actor.on('provider.fallback', ({ from, to, error }: ProviderFallbackEvent) => console.warn(`${from} → ${to}: ${error.message}`));
 * ```
 */
export type ProviderFallbackEvent = {
  type: 'provider.fallback';
  from: string;
  to: string;
  error: RunError;
  /** Whether output the failed attempt streamed is to be thrown away (as with `request.retry`). */
  discardPartial: boolean;
};

/**
 * The oldest messages were replaced by a summary (or dropped, or what a `strategy` returned) to fit
 * the context window. Counts, not texts: the host's event log keeps the full transcript.
 *
 * @example
 * ```ts
 * actor.on('context.compacted', (event: ContextCompactedEvent) => console.log(`${event.removedMessages} messages: ${event.beforeTokens} → ${event.afterTokens} tokens`));
 * ```
 */
export type ContextCompactedEvent = {
  type: 'context.compacted';
  removedMessages: number;
  /** The latest messages kept as they were (the tail after the replacement). */
  keptMessages: number;
  beforeTokens: number;
  afterTokens: number;
  /** Why: the window (`maxInputTokens`) or the provider's context-length error. */
  cause: 'window' | 'context_length';
};

/**
 * A guardrail gave its verdict (`tripped` ends the run `halted` / `guardrail`).
 *
 * @example
 * ```ts
 * actor.on('guardrail.checked', (event: GuardrailCheckedEvent) => console.log(event.phase, event.name, event.tripped));
 * ```
 */
export type GuardrailCheckedEvent = {
  type: 'guardrail.checked';
  name: string;
  phase: 'input' | 'output';
  tripped: boolean;
  reason?: string;
};

/**
 * The events a conversation actor emits; subscribe with `actor.on(type, listener)`.
 *
 * @example
 * ```ts
 * actor.on('text.delta', (event) => process.stdout.write(event.delta));
 * actor.on('tool.result', (event) => console.log(event.name, event.isError ? 'failed' : 'ok'));
 * ```
 */
export type ConversationEmittedEvent =
  | RequestStartedEvent
  | RequestFinishedEvent
  | ToolStartedEvent
  | AgentStartedEvent
  | AgentEventEvent
  | AgentFinishedEvent
  | AgentHandoffEvent
  | ObjectDeltaEvent
  | OutputRepairEvent
  | TextDeltaEvent
  | ReasoningDeltaEvent
  | ToolCallDeltaEvent
  | ToolCallEvent
  | ToolResultEvent
  | ToolProgressEvent
  | ToolApprovalRequestedEvent
  | RequestRetryEvent
  | UsageEvent
  | DoomLoopDetectedEvent
  | UserMessageQueuedEvent
  | RequestInterruptedEvent
  | ProviderFallbackEvent
  | ContextCompactedEvent
  | GuardrailCheckedEvent
  | EventRejectedEvent;

/** Where one tool call of a round stands. */
export type RoundCallState = 'awaiting-approval' | 'queued' | 'running' | 'settled';

/** One tool call of the current round. */
export type RoundCall = {
  toolCallId: string;
  toolName: string;
  /** Validated arguments (the raw ones when the call is already settled as invalid). */
  args: unknown;
  state: RoundCallState;
  /** When a running call times out (epoch ms): the `toolDeadline` delayed transition fires at the earliest. */
  deadline?: number;
  /** Set once the call has its one result. */
  result?: ToolResultPart;
  /** For a call of an agent tool: it runs as the child conversation `agent:<toolCallId>`. */
  agent?: true;
  /** For a handoff call (`transfer_to_<name>`): the agent the conversation goes to once the round completes. */
  handoff?: string;
};

/** What the machine decided about a response's tool calls before running any of them. */
export type DoomLoopVerdict =
  | { action: 'none' }
  | { action: 'notice' | 'halt'; notice: string; pattern: Array<{ name: string; args: unknown }>; repeats: number };

/** The response of the current request, kept until the machine acts on it. */
export type PendingResponse = {
  content: AssistantContentPart[];
  finishReason: FinishReason;
  /** The response's tokens, added to the run's usage once the response is committed. */
  usage: Usage;
  /** The model that answered (else the one requested). */
  model?: string;
  /** The model requested, when the answer names another: its price stands in for an unpriced answering model. */
  requestedModel?: string;
  /** For a final answer of a machine with an `output` schema: its object, or what was wrong with it. */
  answer?: AnswerCheck;
  calls: RoundCall[];
  doomLoop: DoomLoopVerdict;
};

/**
 * The machine's context: plain JSON at every point of a run, so a persisted snapshot restores
 * exactly. Related fields are grouped so the top level stays at 18 keys or fewer: XState copies the
 * context with `Object.assign` on every `assign`, and V8 turns a copy with more keys into a slow
 * dictionary-mode object (measured: ~30 % of the machine's CPU per round).
 *
 * @example
 * ```ts
 * const { messages, iterations, usage }: ConversationContext = actor.getSnapshot().context;
 * ```
 */
export type ConversationContext = {
  messages: Message[];
  sessionData?: unknown;
  /** The host's id of the conversation (`input.conversationId`), when a host runs it. */
  conversationId?: string;
  /** Set when the input was malformed: the run goes straight to `error`. */
  inputProblem?: string;
  /** Index of the first message this run added, to find this run's final text. */
  runStart: number;
  iterations: number;
  /** Attempt of the current request, from 1. */
  attempt: number;
  usage: Usage;
  response: PendingResponse | null;
  /** The calls of the round being approved or executed. */
  round: RoundCall[] | null;
  /** The current request attempt's stream. */
  stream: {
    /** Whether the attempt streamed anything (a retry then discards it). */
    partial: boolean;
    /** Whether the provider sent anything in the current request-timeout window. */
    progressed: boolean;
    /** Text of the attempt (machines with an `output` schema, for `object.delta`). */
    answerText: string;
    /** JSON of the last `object.delta` sent, to send only changes. */
    lastPartialJson: string | null;
  };
  doomLoop: {
    /** Whether the model already got the doom-loop notice for the loop in progress. */
    noticed: boolean;
    /** A notice to append after this round's results. */
    pendingNotice: string | null;
  };
  retry: {
    delayMs: number;
    lastError: RunError | null;
    /** Retry-After of the last error, kept to compute the next delay. */
    lastRetryAfterMs: number | null;
  };
  /** How the run ends (set on the way to a final state) and the last response's finish reason. */
  outcome: {
    status: RunOutput['status'] | null;
    reason: string | null;
    finalText: string | null;
    finishReason: FinishReason | null;
  };
  billing: {
    /** Tokens of failed attempts, counted apart. */
    failedUsage: Usage;
    /** Running cost, when the machine has prices. */
    cost: RunCost | null;
  };
  answer: {
    /** Repairs of an invalid structured answer so far. */
    repairs: number;
    /** The validated structured answer, once there is one. */
    object?: unknown;
  };
  /**
   * Set when the run was restored from a persisted snapshot in `requesting` or `executingTools`,
   * until the `run.resume` it sends itself on start is handled: `interrupted` lists the calls that
   * were running and got the `interrupted` error result instead of running again.
   */
  restored?: { interrupted: string[] };
  /** Agent calls (machines with agent tools): this run's depth in the tree, and the usage of the children that ended. */
  agents: {
    depth: number;
    /** Each finished child's share of `usage` (which already counts it), with paths from here. */
    usageByAgent: UsageByAgent[];
    /** Calls of the running children (at any depth) that wait for approval. */
    approvals: AgentApproval[];
    /** The active agent of a machine with handoffs. */
    active?: string;
  };
  /** Long conversations (DESIGN §12): fallback, steering, budgets, guardrails and compaction. */
  control: RunControl;
};

/** The part of the context the §12 controls keep (see {@link ConversationContext.control}). */
export type RunControl = {
  /** Which of the active agent's providers makes the request (`provider: [...]`): 0 is the first. */
  provider: number;
  /** `user.message`s kept during the run (`steering: 'queue'`), for the next request boundary. */
  queued: UserContent[];
  /** The run's budget limits: its own `budget`, tightened by what a caller left it. */
  limits: InheritedBudget;
  /** When the run's `user.message` arrived (epoch ms), for `maxDurationMs`. */
  startedAt: number | null;
  /** What the run's agent calls spent so far, by `toolCallId`, from their `request.finished` events. */
  childSpend: Record<string, { tokens: number; cost: number }>;
  /** The guardrail being checked, by index in its phase's list. */
  check: number;
  /**
   * The history's length right after the last compaction: while it is unchanged the request was
   * already compacted, so a second window or context-length problem fails instead of looping.
   */
  compactedAt: number | null;
  /** The last response's reported `inputTokens` and how many messages its prompt had (machines with `context`). */
  lastPrompt?: { inputTokens: number; messages: number };
  /** The compaction in progress: why, and the prompt's estimated size before. */
  compaction?: { cause: 'window' | 'context_length'; beforeTokens: number };
  /** How the run ended on a budget or a guardrail, for the output. */
  budget?: BudgetReached;
  guardrail?: GuardrailTripped;
};

/**
 * Where a run stands: the conversation machine's state value.
 *
 * @example
 * ```ts
 * const value: ConversationStateValue = actor.getSnapshot().value;
 * if (actor.getSnapshot().matches('awaitingApproval')) showApprovalDialog();
 * ```
 */
export type ConversationStateValue =
  | 'idle'
  | 'checkingInput'
  | { compacting: 'summarizing' | 'backingOff' }
  | { requesting: 'waiting' }
  | 'repairing'
  | 'retrying'
  | 'awaitingApproval'
  | { executingTools: 'running' }
  | 'handingOff'
  | 'checkingOutput'
  | 'done'
  | 'halted'
  | 'error';

/**
 * The machine {@link createConversationMachine} returns: context, events, input, output, emitted
 * events and state values are typed; the names of its internal actions, guards and actors are not
 * part of the public type.
 *
 * @example
 * ```ts
 * const machine: ConversationMachine = createConversationMachine({ provider, tools });
 * const actor = createActor(machine, { input: { messages: [] } }); // ConversationActor
 * ```
 */
export type ConversationMachine<TObject = unknown> = StateMachine<
  ConversationContext,
  ConversationEvent,
  Record<string, AnyActorRef | undefined>,
  ProvidedActor,
  ParameterizedObject,
  ParameterizedObject,
  string,
  ConversationStateValue,
  string,
  ConversationInput | undefined,
  RunOutput<TObject>,
  ConversationEmittedEvent,
  MetaObject,
  StateSchema
>;

/**
 * A running conversation: `createActor(machine, { input })`.
 *
 * @example
 * ```ts
 * const actor: ConversationActor = createActor(machine, { input: { messages: [] } }).start();
 * actor.on('text.delta', (event) => process.stdout.write(event.delta));
 * ```
 */
export type ConversationActor<TObject = unknown> = Actor<ConversationMachine<TObject>>;

/**
 * A snapshot of a run (`actor.getSnapshot()`); `actor.getPersistedSnapshot()` of it is plain JSON.
 *
 * @example
 * ```ts
 * const snapshot: ConversationSnapshot = actor.getSnapshot();
 * console.log(snapshot.value, snapshot.context.iterations);
 * ```
 */
export type ConversationSnapshot<TObject = unknown> = SnapshotFrom<ConversationMachine<TObject>>;
