/**
 * The A2A SDK, imported on first use: `actorloop/a2a` itself loads without it (the SDK is an
 * optional peer), and a missing SDK gets an error that says what to install rather than a bare
 * ERR_MODULE_NOT_FOUND.
 */
async function load<TModule>(importModule: () => Promise<TModule>): Promise<TModule> {
  try {
    return await importModule();
  } catch (error) {
    throw new Error(
      'a2aAgentTool needs the A2A SDK, an optional peer dependency of actorloop: npm install @a2a-js/sdk ' +
        `(${error instanceof Error ? error.message : String(error)})`,
      { cause: error },
    );
  }
}

/** The client module and the root module (for the `TaskState` and `Role` enums), loaded together. */
export const loadA2AClientSdk = async () => {
  const [client, root] = await Promise.all([load(() => import('@a2a-js/sdk/client')), load(() => import('@a2a-js/sdk'))]);
  return { client, root };
};

/** The loaded SDK modules. */
export type A2AClientSdk = Awaited<ReturnType<typeof loadA2AClientSdk>>;
