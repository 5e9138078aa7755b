/** What `execute` gets when a test calls a tool itself. */
export function callContext(signal: AbortSignal = new AbortController().signal) {
  return { signal, toolCallId: 'direct', messages: [], sessionData: undefined };
}
