/**
 * A `tools/call` result as actorloop answers it: text content, the structured answer when there is
 * one, `isError` when the run did not end `done`. The SDK's `CallToolResult` takes it as it is.
 *
 * @example
 * ```ts
 * const failed: McpCallResult = { content: [{ type: 'text', text: 'the run halted: cancelled' }], isError: true };
 * ```
 */
export type McpCallResult = {
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/** A result of `text`; `isError` when the call failed. */
export function textResult(text: string, isError = false): McpCallResult {
  return isError ? { content: [{ type: 'text', text }], isError: true } : { content: [{ type: 'text', text }] };
}
