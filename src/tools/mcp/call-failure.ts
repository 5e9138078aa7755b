import { McpToolError } from './mcp-tool-error.js';

/** The SDK's code for a connection that closed with the request unanswered. */
const connectionClosedCode = -32000;

type SdkMcpError = Error & { code: number };

/** An `McpError` of the SDK (matched by shape: the SDK module is not loaded here). */
const isMcpError = (error: unknown): error is SdkMcpError =>
  error instanceof Error && error.name === 'McpError' && typeof (error as { code?: unknown }).code === 'number';

/** A schema error of the SDK's result parsing: the server answered, with something that is no tool result. */
const isSchemaError = (error: unknown): error is Error => error instanceof Error && Array.isArray((error as { issues?: unknown }).issues);

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The SDK's code for a request it stopped waiting for (its `timeout` option). */
const requestTimeoutCode = -32001;

/**
 * Why a request of actorloop's own (initialize, tools/list) failed, for an error text: the SDK's
 * "Request timed out" says neither what was waited for nor which option set how long.
 */
export function requestFailure(error: unknown, method: string, timeoutMs: number): string {
  if (isMcpError(error) && error.code === requestTimeoutCode) {
    return `it did not answer ${method} within ${timeoutMs} ms (connectTimeoutMs)`;
  }
  return messageOf(error);
}

/**
 * What a failed `tools/call` means: `error` for the model (an error result names the cause) and
 * whether the connection is gone (`connectionLost`), so the next call opens a new one. A JSON-RPC
 * error or a malformed answer came from a working connection; anything else — the connection
 * closed, the HTTP request failed, the session is unknown — did not.
 */
export function classifyCallFailure(
  thrown: unknown,
  server: { label: string; reconnects: boolean },
): { error: McpToolError; connectionLost: boolean } {
  const again = server.reconnects ? '; the next call reconnects' : '';
  if (isMcpError(thrown) && thrown.code !== connectionClosedCode) {
    // The SDK prefixes "MCP error <code>: " on each side of the wire; the code is named once.
    const text = thrown.message.replace(/^(MCP error -?\d+: )+/, '');
    return {
      error: new McpToolError(`the MCP server answered with error ${thrown.code}: ${text}`, {
        kind: 'server',
        code: thrown.code,
        cause: thrown,
      }),
      connectionLost: false,
    };
  }
  if (isSchemaError(thrown)) {
    return {
      error: new McpToolError(`the MCP server's answer is not a valid tool result: ${messageOf(thrown)}`, {
        kind: 'server',
        cause: thrown,
      }),
      connectionLost: false,
    };
  }
  if (isMcpError(thrown)) {
    return {
      error: new McpToolError(`the connection to the ${server.label} closed before it answered${again}`, {
        kind: 'connection',
        cause: thrown,
      }),
      connectionLost: true,
    };
  }
  return {
    error: new McpToolError(`could not reach the ${server.label}: ${messageOf(thrown)}${again}`, { kind: 'connection', cause: thrown }),
    connectionLost: true,
  };
}
