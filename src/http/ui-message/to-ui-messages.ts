import type { PendingApproval } from '../../host/conversation-view.js';
import { toolErrorType } from '../../machines/rounds/tool-round.js';
import { mediaSourceOf } from '../../model/media.js';
import type { Message, ToolResultPart, UserContentPart } from '../../model/messages.js';
import { uiMessageIdAt } from './message-ids.js';
import { toolContentOutput, toolOutputOf } from './tool-output.js';
import type { UIMessage, UIMessagePart, UIToolPart } from './ui-message.js';

const deniedPrefix = 'denied by user: ';

/** A user part as `useChat` shows it: text, or a file part whose URL carries the bytes (or is the URL the part was given by). */
function userPart(part: UserContentPart): UIMessagePart {
  if (part.type === 'text') return { type: 'text', text: part.text };
  const source = mediaSourceOf(part);
  const url = source.kind === 'url' ? source.url : `data:${source.mediaType};base64,${source.base64}`;
  return {
    type: 'file',
    mediaType: source.mediaType ?? 'application/octet-stream',
    url,
    ...(part.type === 'file' && part.filename ? { filename: part.filename } : {}),
  };
}

/**
 * A conversation's history as `useChat` shows it: each user message one UI message, each answer
 * (the assistant and tool messages after a user message) one assistant UI message with a
 * `step-start` per model response and a `tool-<name>` part per call, its result filled in. Calls
 * in `pendingApprovals` (a view's) show as `approval-requested`, so a page loaded while a run waits
 * shows its approval buttons. Ids follow `uiMessageIdAt`, the ids the UI message streams use.
 * System messages are left out.
 *
 * @example
 * ```ts
 * const view = await host.get('c-42');
 * const initialMessages = view ? toUIMessages(view.messages, { pendingApprovals: view.pendingApprovals }) : [];
 * ```
 */
export function toUIMessages(messages: readonly Message[], options: { pendingApprovals?: readonly PendingApproval[] } = {}): UIMessage[] {
  const out: UIMessage[] = [];
  let answer: UIMessage | undefined;
  const calls = new Map<string, UIToolPart>();
  for (const [index, message] of messages.entries()) {
    if (message.role === 'system') continue;
    if (message.role === 'user') {
      answer = undefined;
      const parts =
        typeof message.content === 'string' ? [{ type: 'text', text: message.content } as const] : message.content.map(userPart);
      out.push({ id: uiMessageIdAt(index), role: 'user', parts });
      continue;
    }
    if (!answer) {
      answer = { id: uiMessageIdAt(index), role: 'assistant', parts: [] };
      out.push(answer);
    }
    if (message.role === 'assistant') {
      answer.parts.push({ type: 'step-start' });
      for (const part of message.content) {
        const shown = assistantPart(part);
        if (!shown) continue;
        answer.parts.push(shown);
        if (shown.type.startsWith('tool-')) calls.set((shown as UIToolPart).toolCallId, shown as UIToolPart);
      }
      continue;
    }
    for (const result of message.content) {
      const call = calls.get(result.toolCallId);
      if (call) Object.assign(call, resultFields(result));
    }
  }
  for (const pending of options.pendingApprovals ?? []) {
    const approval = { state: 'approval-requested', approval: { id: pending.toolCallId } } as const;
    const call = calls.get(pending.toolCallId);
    if (call) {
      Object.assign(call, approval);
      continue;
    }
    // A call of an agent call's child: it is in no message of this history.
    if (!answer) {
      answer = { id: uiMessageIdAt(messages.length), role: 'assistant', parts: [] };
      out.push(answer);
    }
    answer.parts.push({ type: `tool-${pending.name}`, toolCallId: pending.toolCallId, input: pending.args, ...approval });
  }
  return out;
}

function assistantPart(part: Extract<Message, { role: 'assistant' }>['content'][number]): UIMessagePart | undefined {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text, state: 'done' };
    case 'reasoning':
      return { type: 'reasoning', text: part.text, state: 'done' };
    case 'tool-call':
      return { type: `tool-${part.toolName}`, toolCallId: part.toolCallId, state: 'input-available', input: part.args };
    default:
      return undefined;
  }
}

function resultFields({ toolCallId, result, isError, content }: ToolResultPart): Partial<UIToolPart> {
  const text = typeof result === 'string' ? result : JSON.stringify(result);
  if (isError === true && toolErrorType(text) === 'denied') {
    return { state: 'output-denied', approval: { id: toolCallId, approved: false, reason: text.slice(deniedPrefix.length) } };
  }
  if (isError === true) return { state: 'output-error', errorText: text };
  return { state: 'output-available', output: content ? toolContentOutput(content) : toolOutputOf(result) };
}
