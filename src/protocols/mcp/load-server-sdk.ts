/**
 * The SDK's server modules, imported on first use: `actorloop/mcp` loads without the optional
 * `@modelcontextprotocol/sdk`, and serving without it fails saying what to install rather than with
 * a bare ERR_MODULE_NOT_FOUND.
 */
async function load<TModule>(importModule: () => Promise<TModule>, what = 'the MCP SDK'): Promise<TModule> {
  try {
    return await importModule();
  } catch (error) {
    throw new Error(
      `serveMcp needs ${what}, an optional peer dependency of actorloop: npm install @modelcontextprotocol/sdk ` +
        `(${error instanceof Error ? error.message : String(error)})`,
      { cause: error },
    );
  }
}

export const loadServerModule = () => load(() => import('@modelcontextprotocol/sdk/server/index.js'));
export const loadServerTypesModule = () => load(() => import('@modelcontextprotocol/sdk/types.js'));
export const loadServerStdioModule = () => load(() => import('@modelcontextprotocol/sdk/server/stdio.js'));
/**
 * The Fetch API transport: SDK 1.24 (the floor of the peer range) has only the node:http one, so
 * Streamable HTTP needs a newer SDK, and the message says so.
 */
export const loadWebStandardModule = () =>
  load(
    () => import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    'an MCP SDK with server/webStandardStreamableHttp.js for Streamable HTTP (1.24 has none; stdio works with it)',
  );
