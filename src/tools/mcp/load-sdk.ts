/**
 * The SDK modules, imported on use: `actorloop/mcp` itself loads without them, a stdio source never
 * loads the HTTP transport and the other way round, and a missing SDK gets an error that says what
 * to install rather than a bare ERR_MODULE_NOT_FOUND.
 */
async function load<TModule>(importModule: () => Promise<TModule>): Promise<TModule> {
  try {
    return await importModule();
  } catch (error) {
    throw new Error(
      'actorloop/mcp needs the MCP SDK, an optional peer dependency of actorloop: npm install @modelcontextprotocol/sdk ' +
        `(${error instanceof Error ? error.message : String(error)})`,
      { cause: error },
    );
  }
}

export const loadClientModule = () => load(() => import('@modelcontextprotocol/sdk/client/index.js'));
export const loadTypesModule = () => load(() => import('@modelcontextprotocol/sdk/types.js'));
export const loadStdioModule = () => load(() => import('@modelcontextprotocol/sdk/client/stdio.js'));
export const loadHttpModule = () => load(() => import('@modelcontextprotocol/sdk/client/streamableHttp.js'));
