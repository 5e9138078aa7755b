import type { Message as A2AMessage } from '@a2a-js/sdk';
import { isRecord } from '../../util/is-record.js';

/**
 * What a message sent to an `input-required` task decides: approve or deny the pending calls (all
 * of them, or the one `toolCallId` names), or `undefined` when the message is not an answer.
 */
export type ApprovalAnswer = { approve: boolean; reason?: string; toolCallId?: string };

/**
 * Reads an approval answer from a message: a data part `{ approve: true | false, reason?, toolCallId? }`,
 * or a text that is `approve` or `deny` (any case, `deny: <reason>` gives the reason). Anything
 * else is `undefined`: the caller refuses it, so a stray message never approves a call.
 */
export function approvalAnswerOf(message: A2AMessage): ApprovalAnswer | undefined {
  for (const part of message.parts) {
    const content = part.content;
    if (content?.$case === 'data' && isRecord(content.value) && typeof content.value.approve === 'boolean') {
      const { approve, reason, toolCallId } = content.value;
      return {
        approve,
        ...(typeof reason === 'string' ? { reason } : {}),
        ...(typeof toolCallId === 'string' ? { toolCallId } : {}),
      };
    }
  }
  const text = textOfParts(message).trim();
  const match = /^(approve|deny)\b\s*:?\s*([\s\S]*)$/i.exec(text);
  if (!match) return undefined;
  const approve = match[1]?.toLowerCase() === 'approve';
  const reason = match[2]?.trim();
  if (approve && reason) return undefined;
  return { approve, ...(reason ? { reason } : {}) };
}

/** The text parts of a message, joined with newlines. */
export function textOfParts(message: A2AMessage): string {
  return message.parts
    .map((part) => (part.content?.$case === 'text' ? part.content.value : undefined))
    .filter((text): text is string => text !== undefined)
    .join('\n');
}
