import { finishProblem, providerEventProblem } from '../../model/provider-event-problem.js';
import { type ImagePart, isMediaPart, mediaLabel } from '../../model/media.js';
import { storedUserContent, userContentProblem } from '../../model/user-content.js';
import { findMessagesProblem, textOf, type Message } from '../../model/messages.js';
import { upgradedMessages } from '../snapshots/snapshot-migrations.js';
import { isRecord } from '../../util/is-record.js';
import { emptyUsage } from '../../model/usage.js';
import { findJsonProblem } from '../../util/json-problem.js';
import { freshAttempt } from './fresh-attempt.js';
import { type RunCost, zeroCost } from '../policies/pricing.js';
import { inheritedBudgetOf } from '../policies/budget.js';
import { usageByAgentOf } from './agent-calls.js';
import type { ConversationContext, ConversationInput, RunOutput } from '../names/types.js';

// Shared by every run until its first change (each update copies): a conversation parked before it
// changes them holds none of its own. Frozen, so an accidental write throws instead of leaking.
const noEntries = Object.freeze([]) as never[];
const noFields = Object.freeze({});
// The groups every run starts with, shared the same way. Not `billing` of a priced run: its `cost`
// is handed to the caller in the output as it is.
const startingGroups = Object.freeze({
  doomLoop: Object.freeze({ noticed: false, pendingNotice: null }),
  retry: Object.freeze({ delayMs: 0, lastError: null, lastRetryAfterMs: null }),
  outcome: Object.freeze({ status: null, reason: null, finalText: null, finishReason: null }),
  answer: Object.freeze({ repairs: 0 }),
  unpricedBilling: Object.freeze({ failedUsage: Object.freeze(emptyUsage()), cost: null }),
  rootAgents: Object.freeze({ depth: 0, usageByAgent: noEntries, approvals: noEntries }),
  control: Object.freeze({
    provider: 0,
    queued: noEntries,
    limits: noFields,
    startedAt: null,
    childSpend: noFields,
    check: 0,
    compactedAt: null,
  }),
});

/** A run's context as it starts; a malformed input is kept as a problem (the run then ends in `error`). */
export function initialContext(
  input: ConversationInput | undefined,
  priced: boolean,
  agents?: { start: string; known: ReadonlySet<string> },
  maxMediaBytes?: number,
): ConversationContext {
  // A history an earlier release wrote is upgraded as a stored snapshot's is (DESIGN §16, old histories).
  const messages = (upgradedMessages(input?.messages) as ConversationInput['messages']) ?? [];
  const inputProblem =
    input === undefined || typeof input === 'object'
      ? (findMessagesProblem(messages) ??
        promptProblem(input?.prompt, maxMediaBytes) ??
        findJsonProblem(input?.sessionData, 'input.sessionData') ??
        agentProblem(input?.agent, agents))
      : 'input must be an object { messages?, prompt?, sessionData? }';
  const depth = agentDepthOf(input);
  const limits = inheritedBudgetOf(input?.budget) ?? noFields;
  // The prompt waits in the queue: the idle state starts the run with it, and it joins the history
  // (through the input guardrails) as a queued message does.
  const prompt = inputProblem === undefined && input?.prompt !== undefined ? storedUserContent(input.prompt) : undefined;
  const control = limits === noFields ? startingGroups.control : { ...startingGroups.control, limits };
  return {
    messages: Array.isArray(messages) ? messages : [],
    ...(input?.sessionData === undefined ? {} : { sessionData: input.sessionData }),
    ...(typeof input?.conversationId === 'string' ? { conversationId: input.conversationId } : {}),
    ...(inputProblem === undefined ? {} : { inputProblem }),
    runStart: Array.isArray(messages) ? messages.length : 0,
    iterations: 0,
    attempt: 0,
    usage: emptyUsage(),
    response: null,
    round: null,
    stream: freshAttempt.stream,
    doomLoop: startingGroups.doomLoop,
    retry: startingGroups.retry,
    outcome: startingGroups.outcome,
    billing: priced ? { failedUsage: emptyUsage(), cost: zeroCost() } : startingGroups.unpricedBilling,
    answer: startingGroups.answer,
    agents:
      depth === 0 && !agents
        ? startingGroups.rootAgents
        : {
            depth,
            usageByAgent: noEntries,
            approvals: noEntries,
            ...(agents ? { active: typeof input?.agent === 'string' && agents.known.has(input.agent) ? input.agent : agents.start } : {}),
          },
    control: prompt === undefined ? control : { ...control, queued: [prompt] },
  };
}

function promptProblem(prompt: unknown, maxMediaBytes: number | undefined): string | undefined {
  if (prompt === undefined) return undefined;
  const problem = userContentProblem(prompt, maxMediaBytes);
  return problem === undefined ? undefined : `input.prompt ${problem}; got ${JSON.stringify(prompt)?.slice(0, 80)}`;
}

function agentProblem(agent: unknown, agents: { known: ReadonlySet<string> } | undefined): string | undefined {
  if (agent === undefined) return undefined;
  if (!agents) return `input.agent must be left out: the machine has no agents (got ${JSON.stringify(agent)})`;
  if (typeof agent === 'string' && agents.known.has(agent)) return undefined;
  return `input.agent must be one of the machine's agents (${[...agents.known].join(', ')}); got ${JSON.stringify(agent)}`;
}

function agentDepthOf(input: ConversationInput | undefined): number {
  const depth = input?.agentDepth;
  return typeof depth === 'number' && Number.isInteger(depth) && depth >= 0 ? depth : 0;
}

export function lastAssistantText(messages: Message[], from: number): string {
  for (let index = messages.length - 1; index >= from; index--) {
    const message = messages[index];
    if (message?.role === 'assistant') return textOf(message);
  }
  return '';
}

/** What the run resolves with: fields without a value are left out rather than set to `undefined`. */
export function runOutput(context: ConversationContext, rootAgent?: string): RunOutput {
  return {
    status: context.outcome.status ?? 'error',
    ...(context.outcome.reason === null ? {} : { reason: context.outcome.reason }),
    text: context.outcome.finalText ?? lastAssistantText(context.messages, context.runStart),
    messages: context.messages,
    iterations: context.iterations,
    usage: context.usage,
    ...(context.outcome.finishReason === null ? {} : { finishReason: context.outcome.finishReason }),
    ...(context.outcome.status === 'error' && context.retry.lastError ? { error: context.retry.lastError } : {}),
    ...(context.billing.failedUsage.totalTokens > 0 || context.billing.failedUsage.inputTokens > 0
      ? { failedUsage: context.billing.failedUsage }
      : {}),
    ...(context.billing.cost ? { cost: withChildCost(context.billing.cost, context.control.childSpend) } : {}),
    ...(context.outcome.status === 'done' && context.answer.object !== undefined ? { object: context.answer.object } : {}),
    ...(context.answer.repairs > 0 ? { repairs: context.answer.repairs } : {}),
    ...(rootAgent === undefined ? {} : { usageByAgent: usageByAgentOf(context, context.agents.active ?? rootAgent) }),
    ...(context.agents.active === undefined ? {} : { agent: context.agents.active }),
    ...(context.outcome.reason === 'budget' && context.control.budget ? { budget: context.control.budget } : {}),
    ...(context.outcome.reason === 'guardrail' && context.control.guardrail ? { guardrail: context.control.guardrail } : {}),
  };
}

/** The run's cost with its agent calls' requests (priced by this machine's table) in the total. */
function withChildCost(cost: RunCost, childSpend: ConversationContext['control']['childSpend']): RunCost {
  let children = 0;
  for (const toolCallId in childSpend) children += (childSpend[toolCallId] as { cost: number }).cost;
  return children === 0 ? cost : { ...cost, total: cost.total + children };
}

/** Why a `user.message` was turned away: what was wrong with it, and its content shown as it came (media by a label). */
export function invalidMessageText(event: { type: string; content?: unknown }, maxMediaBytes?: number): string {
  const content = 'content' in event ? event.content : undefined;
  const shown = Array.isArray(content)
    ? JSON.stringify(content.map((part: unknown) => (isMediaPart(part) && isRecord(part) ? mediaLabelOf(part) : part)))
    : (JSON.stringify(content) ?? typeof content);
  return `${event.type} ${userContentProblem(content, maxMediaBytes) ?? 'content was refused'}; got ${shown}`;
}

/** A media part's label, or what it is when it is too malformed for one. */
function mediaLabelOf(part: Record<string, unknown>): string {
  return typeof part.data === 'string' || part.data instanceof Uint8Array
    ? mediaLabel(part as unknown as ImagePart)
    : `[${String(part.type)}]`;
}

/** Why a `provider.delta` or `provider.finish` that the request's actor did not send was turned away. */
export function invalidProviderEventText(event: { type: string; deltas?: unknown } & Record<string, unknown>): string {
  if (event.type === 'provider.delta') {
    const problem = Array.isArray(event.deltas)
      ? event.deltas.map(providerEventProblem).find((found) => found !== undefined)
      : `deltas ${JSON.stringify(event.deltas) ?? typeof event.deltas}, not a list`;
    return `provider.delta must carry { deltas: [provider events] }; got ${problem}`;
  }
  return `provider.finish must carry a response { content, finishReason, usage }; got ${finishProblem(event)}`;
}

/** Why an event was turned away in this state. */
export function outOfStateText(eventType: string, stateValue: unknown): string {
  return `${eventType} is not accepted while the run is ${JSON.stringify(stateValue)}`;
}

/** Why a `tool.approve` / `tool.deny` was turned away: no call with that id waits. */
export function unknownCallText(event: { type: string; toolCallId?: unknown }): string {
  return `${event.type}: no tool call ${'toolCallId' in event ? JSON.stringify(event.toolCallId) : ''} is waiting for approval`;
}
