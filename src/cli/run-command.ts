import { createActor, toPromise } from 'xstate';
import { createConversationMachine } from '../machines/chart/conversation.js';
import type { ConversationMachine, RunOutput } from '../machines/names/types.js';
import type { Message } from '../model/messages.js';
import type { Provider } from '../model/provider.js';
import { anthropicProvider } from '../providers/anthropic/anthropic-provider.js';
import { handlerProvider } from '../providers/handler/handler-provider.js';
import { openaiProvider } from '../providers/openai/openai-provider.js';
import { defaultModelRegistry } from '../providers/ai-sdk/model-registry.js';
import { InvalidOptionsError } from '../errors/invalid-options-error.js';
import { promptContent } from './attachments.js';
import { CliUsageError } from './cli-usage-error.js';
import { demoTools } from './demo-tools.js';
import { offlineModel, offlineModelName } from './offline-model.js';
import type { ProviderChoice, ProviderOptions, RunCommand } from './parse-arguments.js';
import { actorProgress, showProgress } from './progress.js';

/** What the command reads from its process: environment, streams, signals. */
export type CliEnvironment = {
  env: Record<string, string | undefined>;
  /** `columns`: the terminal's width, when stdout is one (`eval` fits its table to it). */
  stdout: { write(text: string): unknown; isTTY?: boolean; columns?: number };
  stderr: { write(text: string): unknown; isTTY?: boolean };
  /** Registers a Ctrl-C handler; returns a function that removes it. */
  onInterrupt(handler: () => void): () => void;
  /**
   * Asks a question at the terminal and resolves with the answer (rejects once `signal` aborts);
   * absent when stdin is no terminal, so that nothing waits for an answer no one can give.
   */
  ask?: (question: string, signal: AbortSignal) => Promise<string>;
};

/** The provider a run uses, and how to describe it. */
export type ChosenProvider = { provider: Provider; label: string; offline: boolean };

/** The registry's prefixes the CLI resolves (OpenAI and Anthropic keep their own flags and defaults). */
const registryPrefixes = /^(google|vertex|bedrock|azure|mistral|ollama)\//;

function registryModel(model: string, env: CliEnvironment['env']): ChosenProvider | undefined {
  if (!registryPrefixes.test(model)) return undefined;
  try {
    const provider = defaultModelRegistry(env).provider(model);
    return { provider, label: `${provider.name} ${provider.model ?? ''}`.trim(), offline: false };
  } catch (error) {
    throw new CliUsageError(`--model ${model}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * Picks the provider: `--model <provider>/<model>` for a provider of the model registry (google,
 * vertex, bedrock, azure, mistral, ollama), else `--provider`, else `compatible` with `--base-url`, `openai` with
 * OPENAI_API_KEY, `anthropic` with ANTHROPIC_API_KEY, and the offline scripted model otherwise.
 */
export function chooseProvider(
  command: Pick<ProviderOptions, 'provider' | 'model' | 'baseURL' | 'api'>,
  env: CliEnvironment['env'],
): ChosenProvider {
  // The Responses API is opt-in: most OpenAI-compatible servers speak only Chat Completions.
  const api = command.api === 'responses' ? { api: 'responses' as const } : {};
  // `--model google/gemini-2.5-flash`: a provider of the model registry, through its package and key variables.
  const registered = !command.provider && !command.baseURL && command.model ? registryModel(command.model, env) : undefined;
  if (registered) return registered;
  const choice: ProviderChoice =
    command.provider ?? (command.baseURL ? 'compatible' : env.OPENAI_API_KEY ? 'openai' : env.ANTHROPIC_API_KEY ? 'anthropic' : 'offline');
  switch (choice) {
    case 'openai': {
      const apiKey = env.OPENAI_API_KEY;
      if (!apiKey && !command.baseURL) throw new CliUsageError('--provider openai needs OPENAI_API_KEY (or --base-url)');
      const model = command.model ?? 'gpt-4o-mini';
      return {
        provider: openaiProvider({
          ...api,
          model,
          // An empty OPENAI_API_KEY (a blank line in .env) is no key: the SDK refuses '' as one.
          apiKey: apiKey || 'not-needed',
          ...(command.baseURL ? { baseURL: command.baseURL } : {}),
        }),
        label: `openai ${model}${command.api === 'responses' ? ' (Responses API)' : ''}`,
        offline: false,
      };
    }
    case 'anthropic': {
      const apiKey = env.ANTHROPIC_API_KEY;
      if (!apiKey) throw new CliUsageError('--provider anthropic needs ANTHROPIC_API_KEY');
      const model = command.model ?? 'claude-haiku-4-5';
      return {
        provider: anthropicProvider({ model, apiKey, maxTokens: 4096, ...(command.baseURL ? { baseURL: command.baseURL } : {}) }),
        label: `anthropic ${model}`,
        offline: false,
      };
    }
    case 'compatible': {
      if (!command.baseURL)
        throw new CliUsageError('--provider compatible needs --base-url <url> (e.g. http://127.0.0.1:11434/v1 for Ollama)');
      if (!command.model) throw new CliUsageError('--provider compatible needs --model <id> (the server decides which models exist)');
      return {
        provider: openaiProvider({
          ...api,
          model: command.model,
          baseURL: command.baseURL,
          apiKey: env.OPENAI_API_KEY || 'not-needed',
          name: 'compatible',
        }),
        label: `${command.model} at ${command.baseURL}`,
        offline: false,
      };
    }
    case 'offline':
      return {
        provider: {
          ...handlerProvider(offlineModel({ delayMs: Number(env.ACTORLOOP_OFFLINE_DELAY_MS ?? 15) })),
          name: 'offline',
          model: offlineModelName,
        },
        label: offlineModelName,
        offline: true,
      };
  }
}

/** What a command running the offline model says on stderr first. */
export const offlineNotice =
  'actorloop: offline scripted model (no OPENAI_API_KEY, ANTHROPIC_API_KEY or --base-url): a real engine and real tools, no real model\n';

/** The exit code of a run: 0 done, 2 halted, 1 error, 130 cancelled by Ctrl-C. */
export function exitCodeOf(output: RunOutput, interrupted: boolean): number {
  if (interrupted && output.status === 'halted' && output.reason === 'cancelled') return 130;
  return output.status === 'done' ? 0 : output.status === 'halted' ? 2 : 1;
}

/**
 * Builds the machine a CLI run uses: the chosen provider and the demo tools. Without a command (a
 * stored conversation opened to look at or continue) it has the defaults.
 */
export function cliMachine(
  command: Pick<ProviderOptions, 'system' | 'maxIterations' | 'maxTokens' | 'budgetUsd'> | undefined,
  provider: Provider,
): ConversationMachine {
  const budget = {
    ...(command?.maxTokens === undefined ? {} : { maxTotalTokens: command.maxTokens }),
    ...(command?.budgetUsd === undefined ? {} : { maxCostUsd: command.budgetUsd }),
  };
  try {
    return createConversationMachine({
      provider,
      tools: demoTools,
      ...(command?.system === undefined ? {} : { system: command.system }),
      ...(command?.maxIterations === undefined ? {} : { maxToolIterations: command.maxIterations }),
      ...(Object.keys(budget).length === 0 ? {} : { budget }),
      // The offline model costs nothing; other models are priced by the built-in table.
      ...(command?.budgetUsd === undefined ? {} : { prices: { [offlineModelName]: { input: 0, output: 0 } } }),
    });
  } catch (error) {
    if (InvalidOptionsError.isInstance(error) && error.option === 'provider' && command?.budgetUsd !== undefined)
      throw new CliUsageError(
        `--budget-usd needs a model with a known price, and ${provider.model ?? 'this model'} has none: use --max-tokens instead`,
      );
    throw error;
  }
}

/**
 * Runs one turn: streams the answer to stdout (or every event as a JSON line with `--json`),
 * progress to stderr, and resolves with the exit code. Ctrl-C cancels the run cleanly (the request
 * and running tools are aborted) and exits 130.
 */
export async function runCommand(
  command: RunCommand,
  environment: CliEnvironment,
  history: Message[] = [],
): Promise<{ code: number; output: RunOutput }> {
  const content = await promptContent(command.prompt, command.attachments);
  const chosen = chooseProvider(command, environment.env);
  const machine = cliMachine(command, chosen.provider);
  const actor = createActor(machine, { input: { messages: history } });
  const { stdout, stderr } = environment;
  if (chosen.offline) {
    stderr.write(offlineNotice);
    // Asking for a model and getting the scripted one must not pass unnoticed.
    if (command.model !== undefined) {
      stderr.write(
        `actorloop: --model ${command.model} is not used: set OPENAI_API_KEY or ANTHROPIC_API_KEY, or pass --base-url for an OpenAI-compatible server\n`,
      );
    }
  }
  let progress: ReturnType<typeof showProgress> | undefined;
  if (command.json) {
    stdout.write(
      `${JSON.stringify({ type: 'run.started', provider: chosen.provider.name, model: chosen.label, offline: chosen.offline })}\n`,
    );
    actor.on('*', (event) => stdout.write(`${JSON.stringify(event)}\n`));
  } else {
    progress = showProgress(actorProgress(actor), stderr);
    let wrote = false;
    actor.on('text.delta', (event) => {
      progress?.beforeText();
      stdout.write(event.delta);
      wrote = true;
    });
    // An answer already streamed is not printed again; a new request starts a new paragraph.
    actor.on('request.started', () => {
      if (wrote) stdout.write('\n');
      wrote = false;
    });
  }
  let interrupted = false;
  const removeInterrupt = environment.onInterrupt(() => {
    interrupted = true;
    actor.send({ type: 'cancel', reason: 'interrupted (Ctrl-C)' });
  });
  actor.start();
  actor.send({ type: 'user.message', content });
  const output = await toPromise(actor);
  removeInterrupt();
  progress?.stop();
  writeEnd(output, command.json, environment);
  return { code: exitCodeOf(output, interrupted), output };
}

/** The end of a followed run: the `run.output` line with `--json`, else the answer's last newline and, unless done, how it ended. */
export function writeEnd(output: RunOutput, json: boolean, { stdout, stderr }: Pick<CliEnvironment, 'stdout' | 'stderr'>): void {
  if (json) stdout.write(`${JSON.stringify({ type: 'run.output', output })}\n`);
  else {
    stdout.write(output.text === '' || output.text.endsWith('\n') ? '' : '\n');
    if (output.status !== 'done') stderr.write(`actorloop: ${describeEnd(output)}\n`);
  }
}

/** How a run that did not end `done` ended, in a line. */
export function describeEnd(output: RunOutput): string {
  if (output.status === 'error') return `error: ${output.error?.message || output.error?.name || 'unknown error'}`;
  if (output.budget) {
    const { limit, used, max } = output.budget;
    const amount = (value: number) =>
      limit === 'maxCostUsd' ? `$${value.toFixed(4)}` : limit === 'maxDurationMs' ? `${value} ms` : `${value}`;
    return `halted: budget (${limit}: used ${amount(used)} of ${amount(max)})`;
  }
  return `halted: ${output.reason ?? 'halted'}`;
}
