/**
 * The parts of MCP's wire types actorloop reads, written out so the rest of the package needs no
 * type from the SDK: objects the SDK returns fit them as they are.
 */

/**
 * A tool as the server lists it (`tools/list`).
 *
 * @example
 * ```ts
 * const destructive = (tool: McpToolDefinition) => tool.annotations?.destructiveHint !== false;
 * ```
 */
export type McpToolDefinition = {
  /** The server's name for the tool (before any `prefix`). */
  name: string;
  title?: string;
  description?: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  outputSchema?: { type: 'object'; [key: string]: unknown };
  /** Hints from the server; trust them only as far as you trust the server. */
  annotations?: {
    title?: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
    [key: string]: unknown;
  };
  [key: string]: unknown;
};

/**
 * One piece of a tool result: `text`, `image`, `audio`, `resource` (embedded) or `resource_link`.
 *
 * @example
 * ```ts
 * const part: McpContent = { type: 'image', data: base64Png, mimeType: 'image/png' };
 * ```
 */
export type McpContent =
  | { type: 'text'; text: string; [key: string]: unknown }
  | { type: 'image'; data: string; mimeType: string; [key: string]: unknown }
  | { type: 'audio'; data: string; mimeType: string; [key: string]: unknown }
  | {
      type: 'resource';
      resource: { uri: string; mimeType?: string; text?: string; blob?: string; [key: string]: unknown };
      [key: string]: unknown;
    }
  | { type: 'resource_link'; uri: string; name: string; title?: string; description?: string; mimeType?: string; [key: string]: unknown };

/**
 * What a server answers to `tools/call`.
 *
 * @example
 * ```ts
 * const result: McpCallToolResult = { content: [{ type: 'text', text: '5' }] };
 * ```
 */
export type McpCallToolResult = {
  content?: McpContent[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  [key: string]: unknown;
};
