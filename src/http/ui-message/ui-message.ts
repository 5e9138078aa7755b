/**
 * The AI SDK's `UIMessage` (what `useChat` holds and sends back), declared by the shape actorloop
 * reads and writes: text, reasoning, step boundaries and tool calls. Other parts a client may hold
 * (files, sources, data parts) pass through the client untouched; actorloop neither makes nor
 * takes them.
 */

/**
 * Where a tool call stands in a UI message.
 *
 * @example
 * ```ts
 * const waiting = (state: UIToolState) => state === 'approval-requested';
 * ```
 */
export type UIToolState =
  | 'input-streaming'
  | 'input-available'
  | 'approval-requested'
  | 'approval-responded'
  | 'output-available'
  | 'output-error'
  | 'output-denied';

/**
 * A tool call of a UI message: its part type is `tool-<name>`; `approval.id` is the call's
 * `toolCallId` (actorloop approves calls by it).
 *
 * @example
 * ```ts
 * const part: UIToolPart = { type: 'tool-add', toolCallId: 'c1', state: 'output-available', input: { a: 2, b: 3 }, output: 5 };
 * ```
 */
export type UIToolPart = {
  type: `tool-${string}`;
  toolCallId: string;
  state: UIToolState;
  input?: unknown;
  output?: unknown;
  errorText?: string;
  approval?: { id: string; approved?: boolean; reason?: string };
};

/**
 * One part of a UI message.
 *
 * @example
 * ```ts
 * const parts: UIMessagePart[] = [{ type: 'step-start' }, { type: 'text', text: 'Hi', state: 'done' }];
 * ```
 */
export type UIMessagePart =
  | { type: 'text'; text: string; state?: 'streaming' | 'done' }
  | { type: 'reasoning'; text: string; state?: 'streaming' | 'done' }
  | { type: 'step-start' }
  /** An image or file of a user message: a `data:` URL, or the URL it was given by. */
  | { type: 'file'; mediaType: string; url: string; filename?: string }
  | UIToolPart;

/**
 * A message as `useChat` holds it.
 *
 * @example
 * ```ts
 * const message: UIMessage = { id: 'm0', role: 'user', parts: [{ type: 'text', text: 'What is 2+3?' }] };
 * ```
 */
export type UIMessage = { id: string; role: 'user' | 'assistant'; parts: UIMessagePart[]; metadata?: unknown };
