import type { StepInfo } from '../../machines/restore/step-journal.js';
import type { ConversationEmittedEvent } from '../../machines/names/types.js';

/**
 * `request.started` / `tool.started` of a segment, published once the step really starts: a step
 * the journal declines starts in a later invocation, and its announcement with it. Each conversation
 * asks for its requests in the order it announces them, so the n-th request step of a caller is its
 * n-th `request.started` — the journal's steps and the events meet on that key.
 *
 * @example
 * ```ts
 * const announcements = new StepAnnouncements(publish, mode === 'advance');
 * journalOptions.started = (step) => announcements.started(announcements.keyOf(step, step.caller ?? rootId));
 * actor.on('*', (event) => announcements.heard(leafOf(event), callerOf(event), event));
 * ```
 */
export class StepAnnouncements {
  private readonly startedSteps = new Set<string>();
  private readonly declinedSteps = new Set<string>();
  private readonly held = new Map<string, ConversationEmittedEvent>();
  private readonly requestsAsked = new Map<string, number>();
  private readonly requestsAnnounced = new Map<string, number>();

  constructor(
    private readonly publish: (event: ConversationEmittedEvent) => void,
    /** Whether tools run in this segment (an `advance`): a tool's start waits for the journal's word only then. */
    private readonly toolsRun: boolean,
  ) {}

  /** The key of a step the journal asks about; `caller` names the conversation that asks (a request's). */
  keyOf(step: StepInfo, caller: string): string {
    if (step.kind === 'request') return nthRequest(this.requestsAsked, caller);
    return step.kind === 'guardrail' ? `guardrail ${step.phase} ${step.name}` : `tool ${step.toolCallId}`;
  }

  /** The step runs in this segment: its announcement goes out (now, or when it is heard). */
  started(key: string): void {
    this.startedSteps.add(key);
    const held = this.held.get(key);
    if (!held) return;
    this.held.delete(key);
    this.publish(held);
  }

  /** The step runs in a later invocation: its announcement is dropped here. */
  declined(key: string): void {
    this.declinedSteps.add(key);
    this.held.delete(key);
  }

  /** An event the run emitted (`leaf` is what `caller` emitted, `event` what is published): held until its step's fate is known. */
  heard(leaf: ConversationEmittedEvent, caller: string, event: ConversationEmittedEvent): void {
    if (leaf.type === 'request.started') {
      const key = nthRequest(this.requestsAnnounced, caller);
      if (this.startedSteps.has(key)) this.publish(event);
      else if (!this.declinedSteps.has(key)) this.held.set(key, event);
      return;
    }
    if (leaf.type === 'tool.started') {
      const key = `tool ${leaf.toolCallId}`;
      if (this.startedSteps.has(key)) this.publish(event);
      else if (this.toolsRun) this.held.set(key, event);
      return;
    }
    this.publish(event);
  }
}

function nthRequest(counts: Map<string, number>, caller: string): string {
  const index = counts.get(caller) ?? 0;
  counts.set(caller, index + 1);
  return `request ${caller} ${index}`;
}
