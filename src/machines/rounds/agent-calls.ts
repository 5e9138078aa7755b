import { addUsage, type Usage } from '../../model/usage.js';
import { isRecord } from '../../util/is-record.js';
import type { AgentCallSpec } from '../agents/agent-tool.js';
import { childBudget } from '../policies/budget.js';
import type { Effects } from '../names/effects.js';
import { resultTexts, settleRemaining, toolMessage } from './tool-round.js';
import type { ConversationContext, ConversationEmittedEvent, RoundCall, RunOutput, UsageByAgent } from '../names/types.js';
import { appended } from '../../util/appended.js';
import { withFields } from '../../util/with-fields.js';

/** The child id of an agent call (DESIGN §11): one child per call, named by the call. */
export const agentActorId = (toolCallId: string) => `agent:${toolCallId}`;

/** The `toolCallId` of an agent child's id, or `undefined` for any other id. */
export const agentCallIdOf = (childId: string): string | undefined =>
  childId.startsWith('agent:') ? childId.slice('agent:'.length) : undefined;

const isStringList = (value: unknown): value is string[] => Array.isArray(value) && value.every((item) => typeof item === 'string');

/**
 * Whether a value has the shape of an event a child emits, as far as a parent reads it: an object
 * with a string `type`; an `agent.event` with its `path` and the event inside (checked the same
 * way, down the chain); an approval request's `path`, when it has one, a list of ids.
 */
function isChildEvent(value: unknown): boolean {
  let event = value;
  // Bounded, as an event made in code can be its own inner event; real chains are as deep as the tree.
  for (let depth = 0; depth < 10_000; depth++) {
    if (!isRecord(event) || typeof event.type !== 'string') return false;
    if (event.type === 'tool.approval.requested') return event.path === undefined || isStringList(event.path);
    if (event.type !== 'agent.event') return true;
    if (!isStringList(event.path)) return false;
    event = event.event;
  }
  return false;
}

/**
 * Whether an `agent.emitted` is one a child sends: its id a string, its events a list of events
 * (see `isChildEvent`). Anyone may send the machine any event; another shape is turned away
 * (`event.rejected`), not read.
 */
export function isAgentBatch(event: { childId?: unknown; events?: unknown }): boolean {
  return typeof event.childId === 'string' && Array.isArray(event.events) && event.events.every(isChildEvent);
}

/** Why an `agent.emitted` was turned away. */
export function invalidAgentBatchText(event: { childId?: unknown; events?: unknown }): string {
  const events = Array.isArray(event.events)
    ? `${event.events.length} events, not all of them events`
    : (JSON.stringify(event.events) ?? typeof event.events);
  return `agent.emitted must be { childId: string, events: [{ type, … }] } from an agent call's child; got childId ${JSON.stringify(event.childId) ?? typeof event.childId}, events ${events}`;
}

/** The name an agent tool's machine is registered under in the parent's `actors`. */
export const agentSource = (toolName: string) => `agent.${toolName}`;

/**
 * Where an agent call's child starts: no history of its own, the caller's `sessionData`, one level
 * deeper, and what is left of the caller's budget (so the child stops before the tree goes over).
 */
export function agentChildInput(
  context: Pick<ConversationContext, 'sessionData' | 'agents' | 'usage' | 'billing' | 'round' | 'control'>,
): Record<string, unknown> {
  const budget = childBudget(context);
  return {
    messages: [],
    ...(context.sessionData === undefined ? {} : { sessionData: context.sessionData }),
    agentDepth: context.agents.depth + 1,
    ...(budget === undefined ? {} : { budget }),
  };
}

/** The child's `user.message`: the `prompt` argument with the default parameters, else the arguments' JSON. */
export function agentPrompt(args: unknown, spec: Pick<AgentCallSpec, 'promptArgument'>): string {
  if (spec.promptArgument && isRecord(args) && typeof args.prompt === 'string') return args.prompt;
  return JSON.stringify(args ?? {});
}

/** Whether a done event's output is a child conversation's {@link RunOutput}. */
export function isRunOutput(output: unknown): output is RunOutput {
  return (
    isRecord(output) &&
    (output.status === 'done' || output.status === 'halted' || output.status === 'error') &&
    typeof output.text === 'string' &&
    isRecord(output.usage)
  );
}

/**
 * The result an agent call gives its caller's model: the child's final text (its `object` as JSON
 * with structured output), or, for a child that did not end `done`, an error naming how it ended.
 */
export function agentResult(agent: string, output: RunOutput): { text: string; isError: boolean } {
  if (output.status === 'done') return { text: output.object === undefined ? output.text : JSON.stringify(output.object), isError: false };
  const reason = output.reason === undefined ? '' : ` (${output.reason})`;
  const detail = output.error?.message ?? output.text;
  return { text: `Error: agent "${agent}" ended ${output.status}${reason}${detail ? `: ${detail}` : ''}`, isError: true };
}

/** A child's share of the usage, as entries of the caller's `usageByAgent`: its own, and its children's, under its call. */
export function childUsageEntries(toolCallId: string, agent: string, output: Pick<RunOutput, 'usage' | 'usageByAgent'>): UsageByAgent[] {
  if (!output.usageByAgent || output.usageByAgent.length === 0) return [{ path: [toolCallId], agent, usage: output.usage }];
  return output.usageByAgent.map((entry) => ({
    path: [toolCallId, ...entry.path],
    agent: entry.path.length === 0 ? agent : entry.agent,
    usage: entry.usage,
  }));
}

/**
 * A child ended (or was stopped): its usage joins the caller's (so `usage` counts the tree), its
 * share is kept for `usageByAgent`, and `agent.finished` then `usage` announce it.
 */
export function agentFinished(
  context: Pick<ConversationContext, 'usage' | 'agents'>,
  call: Pick<RoundCall, 'toolCallId' | 'toolName'>,
  output: RunOutput,
): Effects {
  const usage = addUsage(context.usage, output.usage);
  const emitted: ConversationEmittedEvent[] = [
    { type: 'agent.finished', toolCallId: call.toolCallId, agent: call.toolName, output },
    { type: 'usage', step: output.usage, total: usage },
  ];
  return {
    context: {
      usage,
      agents: {
        ...context.agents,
        usageByAgent: [...context.agents.usageByAgent, ...childUsageEntries(call.toolCallId, call.toolName, output)],
      },
    },
    emitted,
  };
}

/**
 * A child actor as it is when its caller stops it: its context, and a reader of its own children
 * (an agent call's child may have running agent calls of its own).
 */
export type StoppedChild = { context: unknown; childOf: (childId: string) => StoppedChild | undefined };

/**
 * A child stopped before it ended (its caller timed out, was cancelled or halted): its output is
 * what it had, `halted` with `reason`, with a round in progress closed as its own cancel would close
 * it (so its history stays valid). Its own running agent calls were stopped with it: each reports
 * `agent.finished` too (returned as the events the child would have passed on, in order), and their
 * usage joins the child's.
 */
export function stoppedChildOutput(
  child: StoppedChild | undefined,
  reason: 'cancelled' | 'timeout' | 'halted',
  runOutput: (context: ConversationContext) => RunOutput,
): { output: RunOutput; below: ConversationEmittedEvent[] } {
  const childContext = child?.context;
  if (!isRecord(childContext) || !isRecord(childContext.outcome) || !isRecord(childContext.usage)) {
    const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    return { output: { status: 'halted', reason, text: '', messages: [], iterations: 0, usage }, below: [] };
  }
  let context = childContext as ConversationContext;
  const below: ConversationEmittedEvent[] = [];
  for (const call of context.round ?? []) {
    if (!call.agent || call.state !== 'running') continue;
    const grandchild = stoppedChildOutput(child?.childOf(agentActorId(call.toolCallId)), reason, runOutput);
    for (const event of grandchild.below) below.push(forwardedAgentEvent(call.toolCallId, event));
    const finished = agentFinished(context, call, grandchild.output);
    below.push(...(finished.emitted ?? []).filter((event) => event.type === 'agent.finished'));
    context = { ...context, ...(finished.context as Partial<ConversationContext>) };
  }
  // A round in progress is closed as the child's own cancel would close it, so its history stays valid.
  const messages = context.round
    ? appended(context.messages, toolMessage(settleRemaining(context.round, resultTexts.cancelled(reason))))
    : context.messages;
  const output = runOutput({
    ...context,
    messages,
    round: null,
    outcome: { ...context.outcome, status: 'halted', reason, finalText: context.outcome.finalText ?? '' },
  });
  return { output, below };
}

/** Two effects one after the other: the second's context wins where both set a key; events in order. */
export function bothEffects(first: Effects, second: Effects): Effects {
  return {
    // The second's keys are mostly new to the first: a spread would be Node 20's slow path.
    context: withFields(first.context ?? {}, second.context ?? {}),
    emitted: (first.emitted ?? []).concat(second.emitted ?? []),
  };
}

/** A child's event as its caller emits it: `agent.event` with the path from the caller down to the emitter. */
export function forwardedAgentEvent(toolCallId: string, event: ConversationEmittedEvent): ConversationEmittedEvent {
  if (event.type === 'agent.event') return { type: 'agent.event', path: [toolCallId, ...event.path], event: event.event };
  return { type: 'agent.event', path: [toolCallId], event };
}

/** The root's own share of the usage, and the children's, as `RunOutput.usageByAgent`. */
export function usageByAgentOf(context: Pick<ConversationContext, 'usage' | 'agents'>, rootAgent: string): UsageByAgent[] {
  let children: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  // Each entry is one agent's own share, so the root's own is what none of them holds.
  for (const entry of context.agents.usageByAgent) children = addUsage(children, entry.usage);
  return [{ path: [], agent: rootAgent, usage: subtractUsage(context.usage, children) }, ...context.agents.usageByAgent];
}

function subtractUsage(total: Usage, part: Usage): Usage {
  const own: Usage = {
    inputTokens: total.inputTokens - part.inputTokens,
    outputTokens: total.outputTokens - part.outputTokens,
    totalTokens: total.totalTokens - part.totalTokens,
  };
  for (const key of ['cachedInputTokens', 'reasoningTokens'] as const) {
    const value = (total[key] ?? 0) - (part[key] ?? 0);
    if (total[key] !== undefined || part[key] !== undefined) own[key] = value;
  }
  return own;
}

type ChildOf = (childId: string) => StoppedChild | undefined;
type OutputOf = (context: ConversationContext) => RunOutput;

/** Agent calls stopped before their child ended: each reports the child's output so far, and its usage joins. */
export function agentsStopped(
  context: Pick<ConversationContext, 'usage' | 'agents'>,
  calls: readonly RoundCall[],
  reason: 'cancelled' | 'timeout' | 'halted',
  childOf: ChildOf,
  outputOf: OutputOf,
): Effects {
  let effects: Effects = {};
  let current = context;
  for (const call of calls) {
    const stopped = stoppedChildOutput(childOf(agentActorId(call.toolCallId)), reason, outputOf);
    // What the child's own stopped agent calls report comes first, from under the child's path.
    const below = stopped.below.map((event) => forwardedAgentEvent(call.toolCallId, event));
    const finished = agentFinished(current, call, stopped.output);
    effects = bothEffects(bothEffects(effects, { emitted: below }), finished);
    current = { ...current, ...(finished.context as Pick<ConversationContext, 'usage' | 'agents'>) };
  }
  return effects;
}

/** The round's running agent calls, stopped with the run. */
export function runningAgentsFinished(
  context: Pick<ConversationContext, 'usage' | 'agents' | 'round'>,
  reason: 'cancelled' | 'halted',
  childOf: ChildOf,
  outputOf: OutputOf,
): Effects {
  const running = (context.round ?? []).filter((call) => call.agent && call.state === 'running');
  return running.length === 0 ? {} : agentsStopped(context, running, reason, childOf, outputOf);
}

/**
 * A child's events (one step's, in order), as this run passes them on: each always as
 * `agent.event` (with the path down to the child that emitted it), and an approval request also as
 * a `tool.approval.requested` of its own, with its `path`, so approvals deep in a tree surface at
 * the root, where `tool.approve` is sent; the pending approvals are kept until their call starts, is
 * answered, or its child ends. Nothing, for events that do not come from a running agent call of
 * this round.
 */
export function agentEventForwarded(
  context: Pick<ConversationContext, 'round' | 'agents'>,
  emitted: { childId: string; events: readonly ConversationEmittedEvent[] },
): Effects {
  const toolCallId = agentCallIdOf(emitted.childId);
  if (toolCallId === undefined) return {};
  const live = context.round?.some((call) => call.agent && call.state === 'running' && call.toolCallId === toolCallId);
  if (!live) return {};
  const forwarded: ConversationEmittedEvent[] = [];
  let approvals = context.agents.approvals;
  for (const event of emitted.events) {
    if (!isRecord(event) || typeof event.type !== 'string') continue;
    forwarded.push(forwardedAgentEvent(toolCallId, event));
    if (event.type === 'tool.approval.requested') {
      // The child's own call, or one deeper down that the child surfaced with its path.
      const approval = { toolCallId: event.toolCallId, name: event.name, args: event.args, path: [toolCallId, ...(event.path ?? [])] };
      const known = approvals.some((pending) => pending.toolCallId === approval.toolCallId && samePath(pending.path, approval.path));
      if (!known) approvals = [...approvals, approval];
      forwarded.push({ type: 'tool.approval.requested', ...approval });
    } else {
      const leaf = leafOf(toolCallId, event);
      if (leaf.event.type === 'tool.started' || leaf.event.type === 'tool.result') {
        const answered = leaf.event.toolCallId;
        approvals = approvals.filter((approval) => approval.toolCallId !== answered || !samePath(approval.path, leaf.path));
      }
    }
  }
  if (forwarded.length === 0) return {};
  return approvals === context.agents.approvals
    ? { emitted: forwarded }
    : { context: { agents: { ...context.agents, approvals } }, emitted: forwarded };
}

/** The event at the end of a chain of `agent.event`s, and the path down to the child that emitted it. */
function leafOf(toolCallId: string, event: ConversationEmittedEvent): { path: string[]; event: ConversationEmittedEvent } {
  return event.type === 'agent.event' ? { path: [toolCallId, ...event.path], event: event.event } : { path: [toolCallId], event };
}

const samePath = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((id, index) => id === b[index]);

/** The child an approval for `toolCallId` goes to, when one of the running children waits for it. */
export function approvalRelay(context: Pick<ConversationContext, 'agents'>, toolCallId: string): string | undefined {
  const path = context.agents.approvals.find((approval) => approval.toolCallId === toolCallId)?.path;
  return path?.[0] === undefined ? undefined : agentActorId(path[0]);
}
