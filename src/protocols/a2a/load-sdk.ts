import { MissingDependencyError } from '../../errors/missing-dependency-error.js';

/**
 * The A2A SDK's modules, imported on use: `actorloop/a2a` itself loads without `@a2a-js/sdk` (an
 * optional peer), and a missing SDK gets an error that says what to install rather than a bare
 * ERR_MODULE_NOT_FOUND.
 */
async function load<TModule>(importModule: () => Promise<TModule>): Promise<TModule> {
  try {
    return await importModule();
  } catch (error) {
    throw new MissingDependencyError('@a2a-js/sdk', 'actorloop/a2a', error);
  }
}

export type A2AServerSdk = {
  server: typeof import('@a2a-js/sdk/server');
  errors: typeof import('@a2a-js/sdk/errors');
};

let loading: Promise<A2AServerSdk> | undefined;

/** The server and error modules of `@a2a-js/sdk`, loaded once. */
export function loadA2AServerSdk(): Promise<A2AServerSdk> {
  loading ??= Promise.all([load(() => import('@a2a-js/sdk/server')), load(() => import('@a2a-js/sdk/errors'))]).then(
    ([server, errors]) => ({ server, errors }),
    (error: unknown) => {
      // A failed import is not cached: installing the SDK and trying again works without a restart.
      loading = undefined;
      throw error;
    },
  );
  return loading;
}
