import { parseArgs } from 'node:util';
import { CliUsageError } from './cli-usage-error.js';

export const usage = `Usage:
  actorloop run [options] "prompt"     run one turn (offline scripted model when no key or base URL is set)
  actorloop list --db <file>            list stored conversations
  actorloop show --db <file> <id>       print a stored conversation
  actorloop inspect --db <file>         open the live viewer on a store
  actorloop help | --version

Options of run:
  --provider openai|anthropic|compatible|offline   default: compatible with --base-url, else openai with
                                                   OPENAI_API_KEY, anthropic with ANTHROPIC_API_KEY, else offline
  --model <id>            model (default gpt-4o-mini / claude-haiku-4-5; required for compatible)
  --base-url <url>        an OpenAI-compatible server (Ollama, vLLM, …) or a proxy
  --api chat|responses    OpenAI's API for openai and compatible (default chat)
  --system <text>         system prompt
  --max-iterations <n>    tool rounds at most (default 10)
  --max-tokens <n>        token budget of the run (input + output, every request): halted past it
  --budget-usd <amount>   cost budget in USD, priced by the built-in table of OpenAI and Anthropic models
  --json                  emitted events as JSON lines on stdout
  --db <file> --id <id>   continue a stored conversation (SQLite)

Keys come from OPENAI_API_KEY and ANTHROPIC_API_KEY. Exit codes: 0 done, 2 halted, 1 error, 130 cancelled (Ctrl-C).`;

export type ProviderChoice = 'openai' | 'anthropic' | 'compatible' | 'offline';

export type RunCommand = {
  command: 'run';
  prompt: string;
  provider: ProviderChoice | undefined;
  model: string | undefined;
  baseURL: string | undefined;
  /** OpenAI's API (openai and compatible): Chat Completions (the default) or Responses. */
  api?: 'chat' | 'responses';
  system: string | undefined;
  maxIterations: number | undefined;
  /** `--max-tokens`: `budget.maxTotalTokens`. */
  maxTokens?: number;
  /** `--budget-usd`: `budget.maxCostUsd`. */
  budgetUsd?: number;
  json: boolean;
  db: string | undefined;
  id: string | undefined;
};

export type CliCommand =
  | RunCommand
  | { command: 'list'; db: string; json: boolean }
  | { command: 'show'; db: string; id: string; json: boolean }
  | { command: 'inspect'; db: string; port: number | undefined }
  | { command: 'help' }
  | { command: 'version' };

const providers: ReadonlySet<string> = new Set(['openai', 'anthropic', 'compatible', 'offline']);

/**
 * Reads the command line (without `node` and the script). Throws `CliUsageError` with a one-line
 * message for anything it cannot run.
 *
 * @example
 * ```ts
 * parseArguments(['run', '--json', 'what is 17*23?']); // { command: 'run', prompt: 'what is 17*23?', json: true, … }
 * ```
 */
export function parseArguments(argv: string[]): CliCommand {
  const [command, ...rest] = argv;
  if (command === undefined || command === 'help' || command === '--help' || command === '-h') return { command: 'help' };
  if (command === '--version' || command === '-v' || command === 'version') return { command: 'version' };
  let parsed: ReturnType<typeof parseFlags>;
  try {
    parsed = parseFlags(rest);
  } catch (error) {
    throw new CliUsageError((error as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
  const { values, positionals } = parsed;
  switch (command) {
    case 'run': {
      const prompt = positionals.join(' ').trim();
      if (prompt === '') throw new CliUsageError('run needs a prompt, e.g. actorloop run "what is 17*23?"');
      const provider = values.provider;
      if (provider !== undefined && !providers.has(provider)) {
        throw new CliUsageError(`unknown provider "${provider}" (expected openai, anthropic, compatible or offline)`);
      }
      const maxIterations = values['max-iterations'] === undefined ? undefined : Number(values['max-iterations']);
      if (maxIterations !== undefined && !(Number.isInteger(maxIterations) && maxIterations >= 0)) {
        throw new CliUsageError(`--max-iterations needs an integer ≥ 0, got "${values['max-iterations']}"`);
      }
      const maxTokens = positiveNumber(values['max-tokens'], '--max-tokens', 'a number of tokens > 0', true);
      const budgetUsd = positiveNumber(values['budget-usd'], '--budget-usd', 'an amount in USD > 0 (e.g. 0.05)', false);
      const api = values.api;
      if (api !== undefined && api !== 'chat' && api !== 'responses')
        throw new CliUsageError(`--api needs chat or responses, got "${api}"`);
      if (api !== undefined && (provider === 'anthropic' || provider === 'offline'))
        throw new CliUsageError(`--api applies to --provider openai and compatible, not ${provider}`);
      if (values.id !== undefined && values.db === undefined)
        throw new CliUsageError('--id needs --db <file> (the store to continue from)');
      return {
        command: 'run',
        prompt,
        provider: provider as ProviderChoice | undefined,
        model: values.model,
        baseURL: values['base-url'],
        ...(api === undefined ? {} : { api }),
        system: values.system,
        maxIterations,
        ...(maxTokens === undefined ? {} : { maxTokens }),
        ...(budgetUsd === undefined ? {} : { budgetUsd }),
        json: values.json === true,
        db: values.db,
        id: values.id,
      };
    }
    case 'list':
      return { command: 'list', db: requireDb(values.db, 'list'), json: values.json === true };
    case 'show': {
      const id = values.id ?? positionals[0];
      if (id === undefined) throw new CliUsageError('show needs a conversation id, e.g. actorloop show --db conversations.db c1');
      return { command: 'show', db: requireDb(values.db, 'show'), id, json: values.json === true };
    }
    case 'inspect': {
      const port = values.port === undefined ? undefined : Number(values.port);
      if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536))
        throw new CliUsageError(`--port needs a port number, got "${values.port}"`);
      return { command: 'inspect', db: requireDb(values.db, 'inspect'), port };
    }
    default:
      throw new CliUsageError(`unknown command "${command}" (expected run, list, show, inspect or help)`);
  }
}

/** A flag's value as a positive finite number (an integer when `integer`), or a usage error naming the flag. */
function positiveNumber(value: string | undefined, flag: string, expected: string, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (value.trim() === '' || !Number.isFinite(number) || number <= 0 || (integer && !Number.isInteger(number)))
    throw new CliUsageError(`${flag} needs ${expected}, got "${value}"`);
  return number;
}

function requireDb(db: string | undefined, command: string): string {
  if (db === undefined) throw new CliUsageError(`${command} needs --db <file>`);
  return db;
}

function parseFlags(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    options: {
      provider: { type: 'string' },
      model: { type: 'string' },
      'base-url': { type: 'string' },
      api: { type: 'string' },
      system: { type: 'string' },
      'max-iterations': { type: 'string' },
      'max-tokens': { type: 'string' },
      'budget-usd': { type: 'string' },
      json: { type: 'boolean' },
      db: { type: 'string' },
      id: { type: 'string' },
      port: { type: 'string' },
    },
  });
}
