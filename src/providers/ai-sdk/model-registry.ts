import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { MissingDependencyError } from '../../errors/missing-dependency-error.js';
import { ProviderError } from '../../model/errors/provider-error.js';
import type { Provider, ProviderEvent, ProviderRequest } from '../../model/provider.js';
import { anthropicProvider } from '../anthropic/anthropic-provider.js';
import { openaiProvider } from '../openai/openai-provider.js';
import { aiSdkProvider } from './ai-sdk-provider.js';
import type { AiSdkLanguageModel } from './language-model.js';

/**
 * Resolves `'provider/model'` strings to providers.
 *
 * @example
 * ```ts
 * const registry: ModelRegistry = defaultModelRegistry();
 * const provider = registry.provider('google/gemini-2.5-flash');
 * ```
 */
export type ModelRegistry = {
  /** The provider for `'<prefix>/<model id>'`; an unknown prefix is an `InvalidOptionsError` naming the known ones. */
  provider(id: string): Provider;
  /** The prefixes it knows, sorted. */
  readonly prefixes: readonly string[];
};

/**
 * A registry of your own: each prefix makes the provider for a model id.
 *
 * @example
 * ```ts
 * import { google } from '@ai-sdk/google';
 * const registry = createModelRegistry({
 *   google: (modelId) => aiSdkProvider(google(modelId)),
 *   local: (modelId) => openaiProvider({ model: modelId, baseURL: 'http://127.0.0.1:11434/v1', apiKey: 'ollama' }),
 * });
 * const machine = createConversationMachine({ provider: registry.provider('google/gemini-2.5-flash') });
 * ```
 */
export function createModelRegistry(factories: Readonly<Record<string, (modelId: string) => Provider>>): ModelRegistry {
  if (typeof factories !== 'object' || factories === null || Array.isArray(factories)) {
    throw new InvalidOptionsError('factories', 'an object of prefix → (modelId) => Provider', factories);
  }
  for (const [prefix, factory] of Object.entries(factories)) {
    if (typeof factory !== 'function') throw new InvalidOptionsError(`factories.${prefix}`, 'a function (modelId) => Provider', factory);
    if (!/^[a-z0-9][a-z0-9._-]*$/i.test(prefix) || prefix.includes('/'))
      throw new InvalidOptionsError('factories', 'prefixes of letters, digits, ".", "_" and "-"', prefix);
  }
  const prefixes = Object.keys(factories).sort();
  return {
    prefixes,
    provider(id) {
      const slash = typeof id === 'string' ? id.indexOf('/') : -1;
      const prefix = slash > 0 ? (id as string).slice(0, slash) : undefined;
      const modelId = slash > 0 ? (id as string).slice(slash + 1) : '';
      const factory = prefix === undefined ? undefined : factories[prefix];
      if (!factory || modelId === '') {
        throw new InvalidOptionsError('model', `'<provider>/<model id>' with a provider one of ${prefixes.join(', ')}`, id);
      }
      return factory(modelId);
    },
  };
}

/** Whether a package can be found from here, where the runtime can tell without loading it. */
function installed(specifier: string): boolean | undefined {
  const resolve = (import.meta as { resolve?: (specifier: string) => string }).resolve;
  if (typeof resolve !== 'function') return undefined;
  try {
    resolve(specifier);
    return true;
  } catch {
    return false;
  }
}

/**
 * A provider made on its first request from an optional package: the package is looked for when
 * the provider is made (a missing one is a `MissingDependencyError` naming it) and loaded on the
 * first request.
 */
function packageProvider(
  prefix: string,
  modelId: string,
  specifier: string,
  make: (module: Record<string, unknown>) => AiSdkLanguageModel,
): Provider {
  if (installed(specifier) === false) {
    throw new MissingDependencyError(
      specifier,
      `the "${prefix}/…" models of defaultModelRegistry()`,
      new Error(`${specifier} is not installed`),
    );
  }
  let loaded: Promise<Provider> | undefined;
  const load = () => {
    const pending = (async () => {
      let module: Record<string, unknown>;
      try {
        module = (await import(specifier)) as Record<string, unknown>;
      } catch (error) {
        throw new ProviderError(`"${prefix}/${modelId}" needs the package ${specifier}: npm install ${specifier}`, {
          code: 'unknown',
          retryable: false,
          cause: error,
        });
      }
      return aiSdkProvider(make(module), { name: prefix });
    })();
    pending.catch(() => {
      if (loaded === pending) loaded = undefined;
    });
    return pending;
  };
  return {
    name: prefix,
    model: modelId,
    async *stream(request: ProviderRequest): AsyncIterable<ProviderEvent> {
      loaded ??= load();
      yield* (await loaded).stream(request);
    },
  };
}

/** The default export's model factory of an AI SDK provider package (`google`, `bedrock`, …). */
const modelOf = (name: string, modelId: string) => (module: Record<string, unknown>) => {
  const factory = module[name];
  if (typeof factory !== 'function') throw new Error(`the package has no ${name}() export`);
  return (factory as (id: string) => AiSdkLanguageModel)(modelId);
};

/**
 * The registry of the usual providers, each through its usual package and key variables:
 *
 * | prefix | through | keys |
 * |---|---|---|
 * | `openai` | `openaiProvider` (the `openai` SDK) | `OPENAI_API_KEY` |
 * | `anthropic` | `anthropicProvider` (`@anthropic-ai/sdk`) | `ANTHROPIC_API_KEY` |
 * | `google` | `@ai-sdk/google` | `GOOGLE_GENERATIVE_AI_API_KEY` |
 * | `vertex` | `@ai-sdk/google-vertex` | Google Cloud credentials, `GOOGLE_VERTEX_PROJECT`, `GOOGLE_VERTEX_LOCATION` |
 * | `bedrock` | `@ai-sdk/amazon-bedrock` | AWS credentials, `AWS_REGION` |
 * | `azure` | `@ai-sdk/azure` | `AZURE_API_KEY`, `AZURE_RESOURCE_NAME` (the model id is the deployment) |
 * | `mistral` | `@ai-sdk/mistral` | `MISTRAL_API_KEY` |
 * | `ollama` | `openaiProvider` on Ollama's OpenAI-compatible endpoint | `OLLAMA_BASE_URL` (default `http://127.0.0.1:11434/v1`) |
 *
 * A package that is not installed is named, with the command to install it, when the provider is made.
 *
 * @example
 * ```ts
 * const machine = createConversationMachine({ provider: defaultModelRegistry().provider('google/gemini-2.5-flash'), tools });
 * ```
 */
export function defaultModelRegistry(env: Readonly<Record<string, string | undefined>> = processEnv()): ModelRegistry {
  return createModelRegistry({
    openai: (model) => openaiProvider({ model }),
    anthropic: (model) => anthropicProvider({ model, maxTokens: 4096 }),
    google: (model) => packageProvider('google', model, '@ai-sdk/google', modelOf('google', model)),
    vertex: (model) => packageProvider('vertex', model, '@ai-sdk/google-vertex', modelOf('vertex', model)),
    bedrock: (model) => packageProvider('bedrock', model, '@ai-sdk/amazon-bedrock', modelOf('bedrock', model)),
    azure: (model) => packageProvider('azure', model, '@ai-sdk/azure', modelOf('azure', model)),
    mistral: (model) => packageProvider('mistral', model, '@ai-sdk/mistral', modelOf('mistral', model)),
    ollama: (model) =>
      openaiProvider({ model, baseURL: env.OLLAMA_BASE_URL || 'http://127.0.0.1:11434/v1', apiKey: 'ollama', name: 'ollama' }),
  });
}

/** The process's environment where there is one (Node, Bun, Deno's `process` shim); none on Workers. */
function processEnv(): Record<string, string | undefined> {
  return (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {};
}
