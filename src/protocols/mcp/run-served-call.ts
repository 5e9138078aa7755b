import type { AnyConversationHost } from '../../host/conversation-host.js';
import type { PendingApproval } from '../../host/conversation-view.js';
import type { RunOutput } from '../../machines/hostable.js';
import { isRecord } from '../../util/is-record.js';
import { approvalEvent } from './approval-prompt.js';
import { type McpCallResult, textResult } from './mcp-call-result.js';
import { progressMessage } from './progress-message.js';

/** An elicitation answer, as the SDK's `elicitInput` resolves. */
export type ElicitAnswer = { action: string; content?: Record<string, unknown> | undefined };

/**
 * One `tools/call` of the served tool, against the host: what to run, and what the MCP request it
 * answers offers (its abort signal, progress, elicitation).
 */
export type ServedCall = {
  host: AnyConversationHost;
  workflow: boolean;
  conversationId: string;
  /** A conversation's user message. */
  message?: string;
  /** A workflow's input. */
  input?: unknown;
  /** Aborted when the client cancels the request (`notifications/cancelled`) or its session ends. */
  signal: AbortSignal;
  /** Set when the request has a `progressToken`. */
  progress?: (message: string) => void;
  /** How long to wait for a run of the conversation still going before this call's (0: refuse at once). */
  waitForRunMs?: number;
  /** Set when the client declared the `elicitation` capability. */
  elicit?: (approval: PendingApproval) => Promise<ElicitAnswer>;
};

const cancelReason = 'the MCP client cancelled the call';

/**
 * Runs one call to its end and answers it: sends the user message (or starts the workflow), reports
 * progress from the host's events, turns each pending approval into an elicitation (or fails naming
 * it), cancels the run when the request is aborted, and resolves with the run's answer — never
 * rejects: whatever goes wrong is the call's `isError` result.
 *
 * @example
 * ```ts
 * const result = await runServedCall({ host, workflow: false, conversationId: 'mcp-1', message: 'Hi', signal });
 * ```
 */
export async function runServedCall(call: ServedCall): Promise<McpCallResult> {
  const { host, conversationId: id, signal } = call;
  if (signal.aborted) return textResult(`the call was cancelled before the run started (${cancelReason})`, true);
  let approvalSeen = false;
  let wake: (() => void) | undefined;
  let cancelled = false;
  /** Set once this call sends its message: events before are another run's, not this call's progress. */
  let ours = false;
  /** Wakes a call waiting for the run before it: that run left `running` (ended, or waits for an approval). */
  let runLeft: (() => void) | undefined;
  const unsubscribe = host.subscribe(id, (event) => {
    if (event.type === 'state' && event.status !== 'running') runLeft?.();
    if (!ours) return;
    const message = call.progress && progressMessage(event, call.workflow);
    if (message) call.progress?.(message);
    if (event.type === 'state' && event.status === 'awaitingApproval') {
      approvalSeen = true;
      wake?.();
    }
  });
  const cancel = () => {
    cancelled = true;
    // Rejected only when the run already ended (nothing left to stop): its end answers the call.
    host.send(id, { type: 'cancel', reason: cancelReason }).catch(() => undefined);
    wake?.();
  };
  let started = false;
  try {
    const waiting = {
      deadline: Date.now() + (call.waitForRunMs ?? 0),
      told: false,
      onRunLeft: (wakeUp: () => void) => {
        runLeft = wakeUp;
      },
    };
    let view: Awaited<ReturnType<typeof host.send>>;
    for (;;) {
      const waited = await waitForRunBefore(call, waiting);
      if (waited !== undefined) return waited;
      ours = true;
      try {
        view = call.workflow
          ? await host.start(id, { input: call.input })
          : await host.send(id, { type: 'user.message', content: call.message ?? '' });
        break;
      } catch (error) {
        // Another call started a run between the wait and this send: wait for that one too, within the same bound.
        if (Date.now() < waiting.deadline && (await host.get(id).catch(() => undefined))?.status === 'running') {
          ours = false;
          continue;
        }
        throw error;
      }
    }
    started = true;
    signal.addEventListener('abort', cancel, { once: true });
    if (signal.aborted) cancel();
    if (view.status === 'awaitingApproval') approvalSeen = true;
    const ended = host.result(id).then(
      (output) => ({ output }),
      (error: unknown) => ({ error }),
    );
    const asked = new Set<string>();
    for (;;) {
      const next = await Promise.race([
        ended,
        new Promise<'approval'>((resolve) => {
          wake = () => resolve('approval');
          if (approvalSeen && !cancelled) resolve('approval');
        }),
      ]);
      wake = undefined;
      if (next !== 'approval') return await answerOf(call, next);
      approvalSeen = false;
      if (cancelled) continue;
      const current = await host.get(id);
      const pending =
        current?.status === 'awaitingApproval' ? current.pendingApprovals.filter(({ toolCallId }) => !asked.has(toolCallId)) : [];
      if (pending.length === 0) continue;
      if (!call.elicit) return unanswered(id, pending);
      for (const approval of pending) {
        asked.add(approval.toolCallId);
        const answer = await call.elicit(approval).catch(
          (error: unknown): ElicitAnswer => ({
            action: 'cancel',
            content: { reason: `the MCP client did not answer the approval (${error instanceof Error ? error.message : String(error)})` },
          }),
        );
        if (cancelled) break;
        await host.send(id, approvalEvent(approval.toolCallId, answer)).catch(() => undefined);
      }
    }
  } catch (error) {
    // Refused because an earlier call left the run waiting for an approval: say which, not only "refused".
    const current = started ? undefined : await host.get(id).catch(() => undefined);
    if (current?.status === 'awaitingApproval' && current.pendingApprovals.length > 0) {
      return unanswered(id, current.pendingApprovals, 'nothing was sent: ');
    }
    const what = started
      ? 'the call failed while the run went on'
      : (call.waitForRunMs ?? 0) > 0 && (await host.get(id).catch(() => undefined))?.status === 'running'
        ? `the run could not start: the conversation "${id}" was still running after waiting ${call.waitForRunMs} ms for its run to end`
        : 'the run could not start';
    return textResult(`${what}: ${error instanceof Error ? error.message : String(error)}`, true);
  } finally {
    unsubscribe();
    signal.removeEventListener('abort', cancel);
  }
}

/**
 * While the conversation's run is still going (one `recover()` resumed, another session's, an
 * earlier call's), waits for it to leave `running` — at most `waitForRunMs`, or until the client
 * cancels — saying so by progress. Resolves `undefined` to go on and send, or the call's answer
 * when it must not: cancelled while waiting, or `waitForRunMs` 0. Past the wait it goes on too, and
 * the host's refusal (which names the host holding the run) is the answer.
 */
async function waitForRunBefore(
  call: ServedCall,
  waiting: { deadline: number; told: boolean; onRunLeft: (wake: () => void) => void },
): Promise<McpCallResult | undefined> {
  const { host, conversationId: id, signal } = call;
  const waitMs = call.waitForRunMs ?? 0;
  const { deadline, onRunLeft } = waiting;
  for (;;) {
    if ((await host.get(id))?.status !== 'running') return undefined;
    const left = deadline - Date.now();
    if (waitMs === 0) {
      return textResult(
        `nothing was sent: the conversation "${id}" has a run in progress, and this server does not wait for it (waitForRunMs 0)`,
        true,
      );
    }
    if (left <= 0) return undefined;
    if (!waiting.told) {
      waiting.told = true;
      call.progress?.(`waiting for the run in progress in conversation "${id}" to end`);
    }
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    await new Promise<void>((resolve) => {
      onRunLeft(resolve);
      timer = setTimeout(resolve, left);
      onAbort = resolve;
      signal.addEventListener('abort', onAbort, { once: true });
      // Checked again once listening: the run may have ended between the read above and now.
      void host.get(id).then((view) => view?.status !== 'running' && resolve(), resolve);
    });
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
    if (signal.aborted) {
      return textResult(
        `the call was cancelled while it waited for the run in progress in conversation "${id}" to end (${cancelReason}); nothing was sent`,
        true,
      );
    }
  }
}

/** The call's answer from how the run ended. */
async function answerOf(call: ServedCall, ended: { output: unknown } | { error: unknown }): Promise<McpCallResult> {
  if ('error' in ended) {
    return textResult(`the run failed: ${ended.error instanceof Error ? ended.error.message : String(ended.error)}`, true);
  }
  if (!call.workflow) return conversationAnswer(ended.output as RunOutput);
  const view = await call.host.get(call.conversationId);
  const text = JSON.stringify(ended.output ?? null);
  if (view?.status !== 'done') {
    const halted = isRecord(ended.output) && typeof ended.output.message === 'string' ? `: ${ended.output.message}` : '';
    return textResult(`the workflow ended ${view?.status ?? 'unknown'}${halted} (output ${text})`, true);
  }
  const result = textResult(text);
  return isRecord(ended.output) ? { ...result, structuredContent: ended.output } : result;
}

function conversationAnswer(output: RunOutput): McpCallResult {
  if (output.status === 'done') {
    const result = textResult(output.text);
    return isRecord(output.object) ? { ...result, structuredContent: output.object } : result;
  }
  const why = output.error ? `: ${output.error.message}` : '';
  if (output.status === 'halted') {
    const text =
      output.reason === 'cancelled' ? `the run was cancelled${why}` : `the run halted (${output.reason ?? 'unknown reason'})${why}`;
    return textResult(text, true);
  }
  return textResult(`the run failed${why}`, true);
}

/** A client that cannot answer approvals: the call fails naming them, and how else they are answered. */
function unanswered(id: string, pending: PendingApproval[], before = ''): McpCallResult {
  const calls = pending.map(({ name, toolCallId, args }) => `"${name}" (call ${toolCallId}, arguments ${JSON.stringify(args)})`).join(', ');
  const first = pending[0]?.toolCallId ?? '';
  return textResult(
    `${before}the run waits for approval of ${calls}, and this MCP client cannot answer it (it did not declare the elicitation capability). ` +
      `The run stays waiting in conversation "${id}": approve or deny in the host — ` +
      `host.send(${JSON.stringify(id)}, { type: 'tool.approve', toolCallId: ${JSON.stringify(first)} }) ` +
      `(or 'tool.deny'), or POST /conversations/{id}/approve with actorloop/http — or connect with a client that supports elicitation.`,
    true,
  );
}
