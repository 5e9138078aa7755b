import { parseArgs } from 'node:util';
import { isConversationId } from '../protocols/mcp/conversation-id.js';
import { CliUsageError } from './cli-usage-error.js';
import { type MachineSpec, machineLabelOf, machineSpecOf, type ModuleSpec, moduleSpecOf } from './machine-module.js';

export const usage = `Usage:
  actorloop run [options] "prompt"             run one turn (offline scripted model when no key or base URL is set)
  actorloop list --db <file>                   list stored conversations: id, status, last update
  actorloop show --db <file> <id>              print a stored conversation: status, history, approvals, last run
  actorloop resume --db <file> <id> [options]  continue an interrupted run, on the provider given here
  actorloop cancel --db <file> <id>            end an interrupted or waiting run, every tool call answered
  actorloop history --db <file> <id>           list a conversation's stored steps: seq, turn, time, status, state
  actorloop fork --db <file> <id> --seq <n> [--new-id <id>] [options]
                                               a new conversation from stored step n; a step in the middle
                                               of a run goes on from there, on the provider given here
  actorloop view [--db <file>] [options]       the viewer you can operate: follow, time travel, approve, fork
  actorloop inspect --db <file>                open the live viewer on a store (read-only)
  actorloop serve [--db <file>] [options]      the HTTP routes of actorloop/http on a local port
  actorloop mcp [--db <file>] [--conversation <id>] [options]
                                               the conversation as an MCP server on stdio (one tool, ask)
  actorloop start <id> --machine <module>[#export] [--input <json>] [--session-data <json>] [--db <file>]
                                               start a run of your own machine (a workflow): its conversations'
                                               text, its events, approvals asked here, its output as JSON
  actorloop send --db <file> <id> --machine <module>[#export] --event <json>
                                               send a stored run of your machine an event (an approval too),
                                               then follow it as start does
  actorloop eval <module>[#export] [options]   run your machine over a dataset and score it: a progress bar, a
                                               table, results.json and report.html; exit 1 below --threshold
  actorloop help | --version

Options of run and resume:
  --provider openai|anthropic|compatible|offline   default: compatible with --base-url, else openai with
                                                   OPENAI_API_KEY, anthropic with ANTHROPIC_API_KEY, else offline
  --model <id>            model (default gpt-4o-mini / claude-haiku-4-5; required for compatible)
  --base-url <url>        an OpenAI-compatible server (Ollama, vLLM, …) or a proxy
  --api chat|responses    OpenAI's API for openai and compatible (default chat)
  --system <text>         system prompt
  --max-iterations <n>    tool rounds at most (default 10)
  --max-tokens <n>        token budget of the run (input + output, every request): halted past it
  --budget-usd <amount>   cost budget in USD, priced by the built-in table of OpenAI and Anthropic models
  --image <path>          run: an image sent with the prompt (PNG, JPEG, GIF, WebP); repeatable
  --file <path>           run: a file sent with the prompt (.pdf, .txt, .md, .wav, .mp3); repeatable
  --json                  emitted events as JSON lines on stdout (list and show: JSON too)
  --db <file> --id <id>   run: continue a stored conversation (SQLite; a new file is created)

Options of serve (and the provider options of run):
  --port <n>              port (default 8787; 0 picks a free one)
  --hostname <address>    address to listen on (default 127.0.0.1)
  --token <token>         the bearer token every request needs (default ACTORLOOP_TOKEN, else one is
                          made up and printed); serve prints {"url", "token"?} as JSON on stdout

Options of view (and the provider options of run, for the runs an approval lets go on):
  --port <n>              port (default 4400; 0 picks a free one)
  --hostname <address>    address to listen on (default 127.0.0.1); view answers requests addressed to
                          it or to a loopback name only, and prints {"url"} as JSON on stdout

Options of fork (and the provider options of run):
  --seq <n>               the step to fork from (a seq of actorloop history)
  --new-id <id>           the new conversation's id (default <id>-<n>-<random>); one in use is refused

Options of mcp (and the provider options of run):
  --conversation <id>     the one conversation every session continues (default a new mcp-<uuid> per
                          start); with --db it outlives restarts, and a run of it a killed process left
                          is resumed at start

Options of resume and cancel:
  --force                 take over a run whose process cannot be checked from this machine
  --reason <text>         cancel: the reason stored with the cancel

Your own machine (start and send; serve, show, history, fork, resume and cancel take --machine too):
  --machine <module>[#export]   a module, relative to the current directory (.js, .mjs, .cjs; .ts with tsx
                          in the project, or on Node 22.18+); the export named, else default, else its only
                          machine: a machine, or a function of no arguments that returns one. It brings its own
                          model: the provider options do not apply
  --input <json>          start: the machine's input, e.g. '{"topic":"Lumen"}'
  --session-data <json>   start: given to the run as input.sessionData
  --event <json>          send: the event, e.g. '{"type":"review.approve"}' or
                          '{"type":"tool.approve","toolCallId":"call-1"}'
  --force                 send: take over a run whose process cannot be checked from this machine

Options of eval (the module exports { machine, dataset, scorers }: by name, as its default export, or
from a default function of no arguments; dataset an array of { id?, input, expected? } or a JSONL file):
  --dataset <file.jsonl>  the items, one JSON object a line, instead of the module's dataset
  --out <dir>             where results.json and report.html go (default eval-results/<start time>)
  --threshold <0..1>      the mean to reach: below it eval exits 1 (default 0, never)
  --concurrency <n>       items run at once (default 4)
  --max-cost <usd>        no item starts once the eval has cost this much (the machine's prices)
  --max-tokens <n>        no item starts once the eval has used this many tokens
  --item-timeout <ms>     an item that runs longer is cancelled and gets an error
  --json                  the results as JSON on stdout instead of the table

A stored run is interrupted when the process that ran it is gone (same hostname, no process with its
pid and start time); only resume continues it, on the provider given to resume. list, show, resume,
cancel, history, fork, inspect and view never create a database.

Keys come from OPENAI_API_KEY and ANTHROPIC_API_KEY. Exit codes: 0 done, 2 halted, 1 error, 3 refused
(the conversation is not in a state the command acts on; nothing changed), 130 cancelled (Ctrl-C).
start and send (resume and fork with --machine) exit 4 when they leave a run stored waiting (an approval,
an event) with no terminal to ask at. eval exits 1 when the mean is below --threshold, 2 when nothing ran
because what it was given is wrong (a flag, the module, a dataset line: named), 130 on Ctrl-C after writing
what finished.`;

/**
 * A command's line of the usage without its description (`actorloop history --db <file> <id>`),
 * or `undefined` for a word that is no command: what a usage error of that command shows.
 *
 * @example
 * ```ts
 * usageLineOf('list'); // 'actorloop list --db <file>'
 * ```
 */
export function usageLineOf(command: string | undefined): string | undefined {
  if (command === 'help') return undefined;
  for (const line of usage.split('\n')) {
    const [, synopsis, name] = /^ {2}(actorloop (\S+)(?: .*)?)$/.exec(line) ?? [];
    if (synopsis !== undefined && name === command) return synopsis.split(/ {2,}/)[0];
  }
  return undefined;
}

export type ProviderChoice = 'openai' | 'anthropic' | 'compatible' | 'offline';

/** What `run` and `resume` take to build the machine: the provider and the run's limits. */
export type ProviderOptions = {
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
};

/** A file given to `run` with `--image` or `--file`, in the order given. */
export type Attachment = { kind: 'image' | 'file'; path: string };

export type RunCommand = ProviderOptions & {
  command: 'run';
  prompt: string;
  /** `--image PATH` and `--file PATH`, repeatable: sent with the prompt as image and file parts. */
  attachments: Attachment[];
  db: string | undefined;
  id: string | undefined;
};

/** `resume`: a stored conversation, and the provider its interrupted run continues on (or, with `--machine`, a run of your machine). */
export type ResumeCommand = ProviderOptions & { command: 'resume'; db: string; id: string; force: boolean; machine?: MachineSpec };

/** `serve`: the conversation routes over HTTP on a local port, behind a bearer token. */
export type ServeCommand = ProviderOptions & {
  command: 'serve';
  db: string | undefined;
  port: number;
  hostname: string;
  token: string | undefined;
  /** `--machine`: the runs are of this machine (your module's), not of the CLI's conversation machine. */
  machine?: MachineSpec;
};

/** `mcp`: the conversation (or `--machine`'s runs) as an MCP server on stdin/stdout. */
export type McpCommand = ProviderOptions & {
  command: 'mcp';
  db: string | undefined;
  /** `--machine`: the served tool runs this machine (your module's), not the CLI's conversation machine. */
  machine?: MachineSpec;
  /** `--conversation`: the one conversation the session continues, instead of a new one per start. */
  conversation?: string;
};

/** `start`: a run of your own machine from `--input`, followed here. */
export type StartCommand = {
  command: 'start';
  id: string;
  machine: MachineSpec;
  /** `--input` parsed (`undefined` when not given). */
  input: unknown;
  /** `--session-data` parsed (`undefined` when not given). */
  sessionData: unknown;
  db: string | undefined;
};

/** `send`: an event to a stored run of your own machine, which is then followed here. */
export type SendCommand = {
  command: 'send';
  id: string;
  machine: MachineSpec;
  event: { type: string } & Record<string, unknown>;
  db: string;
  force: boolean;
};

/** `view`: the viewer you can operate, over a host on a SQLite file, on a local port. */
export type ViewCommand = ProviderOptions & { command: 'view'; db: string | undefined; port: number; hostname: string };

/** `fork`: a new conversation from a stored step, its run (if the step is mid-run) on the provider given. */
export type ForkCommand = ProviderOptions & {
  command: 'fork';
  db: string;
  id: string;
  seq: number;
  newId: string | undefined;
  machine?: MachineSpec;
};

/** `cancel`: a stored conversation whose run is ended with the machine's `cancel`. */
export type CancelCommand = {
  command: 'cancel';
  db: string;
  id: string;
  force: boolean;
  reason: string | undefined;
  machine?: MachineSpec;
};

/** `eval`: a module's machine run over a dataset and scored; its results on stdout and under `out`. */
export type EvalCommand = {
  command: 'eval';
  module: ModuleSpec;
  /** The module as given (`./evals.ts#capitals`), for messages. */
  label: string;
  /** `--dataset`: a JSONL file relative to the current directory, in place of the module's dataset. */
  dataset: string | undefined;
  /** `--out`: the folder of results.json and report.html (default `eval-results/<start time>`). */
  out: string | undefined;
  /** `--threshold`: 0..1, default 0. */
  threshold: number;
  concurrency: number | undefined;
  /** `--max-cost`: the eval's `budget.maxCostUsd`. */
  maxCostUsd: number | undefined;
  /** `--max-tokens`: the eval's `budget.maxTokens`. */
  maxTokens: number | undefined;
  /** `--item-timeout`: `itemTimeoutMs`. */
  itemTimeoutMs: number | undefined;
  json: boolean;
};

export type CliCommand =
  | RunCommand
  | EvalCommand
  | ResumeCommand
  | CancelCommand
  | ForkCommand
  | ServeCommand
  | McpCommand
  | ViewCommand
  | StartCommand
  | SendCommand
  | { command: 'history'; db: string; id: string; json: boolean; machine?: MachineSpec }
  | { command: 'list'; db: string; json: boolean }
  | { command: 'show'; db: string; id: string; json: boolean; machine?: MachineSpec }
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
      onlyFlags(values, 'run', [...providerFlags, 'json', 'db', 'id', 'image', 'file']);
      const prompt = positionals.join(' ').trim();
      if (prompt === '') throw new CliUsageError('run needs a prompt, e.g. actorloop run "what is 17*23?"');
      if (values.id !== undefined && values.db === undefined)
        throw new CliUsageError('--id needs --db <file> (the store to continue from)');
      return {
        command: 'run',
        prompt,
        attachments: attachmentsOf(parsed.tokens),
        ...providerOptions(values),
        db: values.db,
        id: values.id,
      };
    }
    case 'resume':
      onlyFlags(values, 'resume', [...providerFlags, 'json', 'db', 'id', 'force', 'machine']);
      // A run of your machine is followed as start follows one: its output is JSON already.
      if (values.machine !== undefined && values.json !== undefined) throw new CliUsageError('resume --machine does not take --json');
      return {
        command: 'resume',
        ...providerOptions(values),
        db: requireDb(values.db, 'resume'),
        id: oneId(values.id, positionals, 'resume'),
        force: values.force === true,
        ...machineOption(values),
      };
    case 'cancel':
      onlyFlags(values, 'cancel', ['db', 'id', 'force', 'reason', 'machine']);
      return {
        command: 'cancel',
        db: requireDb(values.db, 'cancel'),
        id: oneId(values.id, positionals, 'cancel'),
        force: values.force === true,
        reason: values.reason,
        ...machineOption(values),
      };
    case 'list':
      onlyFlags(values, 'list', ['db', 'json']);
      if (positionals.length > 0) throw new CliUsageError(`list takes no arguments, got "${positionals.join(' ')}"`);
      return { command: 'list', db: requireDb(values.db, 'list'), json: values.json === true };
    case 'show':
      onlyFlags(values, 'show', ['db', 'id', 'json', 'machine']);
      return {
        command: 'show',
        db: requireDb(values.db, 'show'),
        id: oneId(values.id, positionals, 'show'),
        json: values.json === true,
        ...machineOption(values),
      };
    case 'history':
      onlyFlags(values, 'history', ['db', 'id', 'json', 'machine']);
      return {
        command: 'history',
        db: requireDb(values.db, 'history'),
        id: oneId(values.id, positionals, 'history'),
        json: values.json === true,
        ...machineOption(values),
      };
    case 'start': {
      onlyFlags(values, 'start', ['db', 'id', 'machine', 'input', 'session-data']);
      return {
        command: 'start',
        id: oneId(values.id, positionals, 'start', 'run'),
        machine: requireMachine(values, 'start'),
        input: jsonFlag(values.input, '--input', `'{"topic":"Lumen"}' (the machine's input)`),
        sessionData: jsonFlag(values['session-data'], '--session-data', `'{"userId":"u1"}'`),
        db: values.db,
      };
    }
    case 'send': {
      onlyFlags(values, 'send', ['db', 'id', 'machine', 'event', 'force']);
      const example = `--event '{"type":"review.approve"}'`;
      if (values.event === undefined) throw new CliUsageError(`send needs --event <json>: the event, e.g. ${example}`);
      const event = jsonFlag(values.event, '--event', `'{"type":"review.approve"}'`);
      if (typeof event !== 'object' || event === null || Array.isArray(event) || typeof (event as { type?: unknown }).type !== 'string')
        throw new CliUsageError(`--event needs a JSON object with a "type", e.g. ${example}, got ${values.event}`);
      return {
        command: 'send',
        id: oneId(values.id, positionals, 'send', 'run'),
        machine: requireMachine(values, 'send'),
        event: event as SendCommand['event'],
        db: requireDb(values.db, 'send'),
        force: values.force === true,
      };
    }
    case 'fork': {
      onlyFlags(values, 'fork', [...providerFlags, 'json', 'db', 'id', 'seq', 'new-id', 'machine']);
      if (values.seq === undefined) throw new CliUsageError('fork needs --seq <n>: the step to fork from (see actorloop history)');
      const newId = values['new-id'];
      if (newId !== undefined && newId.trim() === '') throw new CliUsageError('--new-id needs an id');
      return {
        command: 'fork',
        ...providerOptions(values),
        db: requireDb(values.db, 'fork'),
        id: oneId(values.id, positionals, 'fork'),
        seq: positiveNumber(values.seq, '--seq', 'a step number (a positive integer)', true) as number,
        newId,
        ...machineOption(values),
      };
    }
    case 'inspect': {
      onlyFlags(values, 'inspect', ['db', 'port']);
      return { command: 'inspect', db: requireDb(values.db, 'inspect'), port: portOf(values.port) };
    }
    case 'serve': {
      onlyFlags(values, 'serve', [...providerFlags, 'db', 'port', 'hostname', 'token', 'machine']);
      if (positionals.length > 0) throw new CliUsageError(`serve takes no arguments, got "${positionals.join(' ')}"`);
      if (values.token !== undefined && !/^[\x21-\x7e]{16,}$/.test(values.token))
        throw new CliUsageError('--token needs at least 16 printable characters without spaces');
      if (values.hostname !== undefined && values.hostname.trim() === '') throw new CliUsageError('--hostname needs an address');
      return {
        command: 'serve',
        ...providerOptions(values),
        db: values.db,
        port: portOf(values.port) ?? 8787,
        hostname: values.hostname ?? '127.0.0.1',
        token: values.token,
        ...machineOption(values),
      };
    }
    case 'mcp': {
      onlyFlags(values, 'mcp', [...providerFlags, 'db', 'machine', 'conversation']);
      if (positionals.length > 0) throw new CliUsageError(`mcp takes no arguments, got "${positionals.join(' ')}"`);
      const conversation = values.conversation;
      if (conversation !== undefined && !isConversationId(conversation)) {
        throw new CliUsageError(
          `--conversation needs a conversation id (not empty, no surrounding spaces or control characters), got ${JSON.stringify(conversation)}`,
        );
      }
      return {
        command: 'mcp',
        ...providerOptions(values),
        db: values.db,
        ...(conversation === undefined ? {} : { conversation }),
        ...machineOption(values),
      };
    }
    case 'view': {
      onlyFlags(values, 'view', [...providerFlags, 'db', 'port', 'hostname']);
      if (positionals.length > 0) throw new CliUsageError(`view takes no arguments, got "${positionals.join(' ')}"`);
      if (values.hostname !== undefined && values.hostname.trim() === '') throw new CliUsageError('--hostname needs an address');
      return {
        command: 'view',
        ...providerOptions(values),
        db: values.db,
        port: portOf(values.port) ?? 4400,
        hostname: values.hostname ?? '127.0.0.1',
      };
    }
    case 'eval': {
      onlyFlags(values, 'eval', ['dataset', 'out', 'threshold', 'concurrency', 'max-cost', 'max-tokens', 'item-timeout', 'json']);
      if (positionals.length === 0)
        throw new CliUsageError('eval needs a module that exports { machine, dataset, scorers }, e.g. actorloop eval ./evals.ts');
      if (positionals.length > 1) throw new CliUsageError(`eval takes one module, got ${positionals.map((one) => `"${one}"`).join(', ')}`);
      const module = moduleSpecOf(positionals[0] as string, 'eval', { module: './evals.ts', exportName: 'capitals' });
      for (const flag of ['dataset', 'out'] as const)
        if (values[flag] !== undefined && values[flag].trim() === '')
          throw new CliUsageError(`--${flag} needs ${flag === 'out' ? 'a folder' : 'the path of a JSONL file'}`);
      const threshold = values.threshold === undefined ? 0 : Number(values.threshold);
      if (values.threshold !== undefined && (values.threshold.trim() === '' || !(threshold >= 0 && threshold <= 1)))
        throw new CliUsageError(`--threshold needs a number from 0 to 1 (the mean to reach, e.g. 0.8), got "${values.threshold}"`);
      return {
        command: 'eval',
        module,
        label: machineLabelOf(module),
        dataset: values.dataset,
        out: values.out,
        threshold,
        concurrency: positiveNumber(values.concurrency, '--concurrency', 'a number of items > 0 (e.g. 8)', true),
        maxCostUsd: positiveNumber(values['max-cost'], '--max-cost', 'an amount in USD > 0 (e.g. 0.50)', false),
        maxTokens: positiveNumber(values['max-tokens'], '--max-tokens', 'a number of tokens > 0', true),
        itemTimeoutMs: positiveNumber(values['item-timeout'], '--item-timeout', 'a number of milliseconds > 0 (e.g. 30000)', false),
        json: values.json === true,
      };
    }
    default:
      throw new CliUsageError(
        `unknown command "${command}" (expected run, list, show, history, fork, resume, cancel, inspect, view, serve, mcp, start, send, eval or help)`,
      );
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

type Flags = ReturnType<typeof parseFlags>['values'];
type FlagName = keyof Flags;

const providerFlags: FlagName[] = ['provider', 'model', 'base-url', 'api', 'system', 'max-iterations', 'max-tokens', 'budget-usd'];

/** Refuses a flag the command does not take (`--provider` to `cancel`): silently ignored, it would mislead. */
function onlyFlags(values: Flags, command: string, allowed: FlagName[]): void {
  const other = (Object.keys(values) as FlagName[]).find((flag) => values[flag] !== undefined && !allowed.includes(flag));
  if (other !== undefined) throw new CliUsageError(`${command} does not take --${other}`);
}

/** The provider and limits of `run` and `resume`, checked. */
function providerOptions(values: Flags): ProviderOptions {
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
  if (api !== undefined && api !== 'chat' && api !== 'responses') throw new CliUsageError(`--api needs chat or responses, got "${api}"`);
  if (api !== undefined && (provider === 'anthropic' || provider === 'offline'))
    throw new CliUsageError(`--api applies to --provider openai and compatible, not ${provider}`);
  return {
    provider: provider as ProviderChoice | undefined,
    model: values.model,
    baseURL: values['base-url'],
    ...(api === undefined ? {} : { api }),
    system: values.system,
    maxIterations,
    ...(maxTokens === undefined ? {} : { maxTokens }),
    ...(budgetUsd === undefined ? {} : { budgetUsd }),
    json: values.json === true,
  };
}

/** The one conversation (or run) id a command acts on: `--id` or the one positional argument. */
function oneId(flag: string | undefined, positionals: string[], command: string, what: 'conversation' | 'run' = 'conversation'): string {
  const ids = flag === undefined ? positionals : [flag, ...positionals];
  if (ids.length === 0) {
    throw new CliUsageError(
      what === 'run'
        ? `${command} needs the run's id, e.g. actorloop ${command} order-1 --machine ./workflow.js …`
        : `${command} needs a conversation id, e.g. actorloop ${command} --db conversations.db c1`,
    );
  }
  if (ids.length > 1) throw new CliUsageError(`${command} takes one ${what} id, got ${ids.map((id) => `"${id}"`).join(', ')}`);
  return ids[0] as string;
}

/** `--machine` when given; with it the provider options mean nothing (the module brings its model), so they are refused. */
function machineOption(values: Flags): { machine?: MachineSpec } {
  if (values.machine === undefined) return {};
  const provider = providerFlags.find((flag) => values[flag] !== undefined);
  if (provider !== undefined)
    throw new CliUsageError(`--${provider} is for the CLI's own conversations: with --machine your module brings its own model`);
  return { machine: machineSpecOf(values.machine) };
}

function requireMachine(values: Flags, command: string): MachineSpec {
  if (values.machine === undefined)
    throw new CliUsageError(
      `${command} needs --machine <module>[#export]: the module that makes your machine, e.g. --machine ./workflow.js`,
    );
  return machineSpecOf(values.machine);
}

/** A flag's value as JSON, or a usage error naming the flag, an example and what the parser found. */
function jsonFlag(value: string | undefined, flag: string, example: string): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new CliUsageError(
      `${flag} needs JSON, e.g. ${flag} ${example}; ${JSON.stringify(value)} is not JSON (${(error as Error).message})`,
    );
  }
}

function portOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const port = Number(value);
  if (value.trim() === '' || !(Number.isInteger(port) && port >= 0 && port < 65536))
    throw new CliUsageError(`--port needs a port number, got "${value}"`);
  return port;
}

function requireDb(db: string | undefined, command: string): string {
  if (db === undefined) throw new CliUsageError(`${command} needs --db <file>`);
  return db;
}

/** `--image` and `--file` in the order they were given (parseArgs groups a repeated flag's values by flag). */
function attachmentsOf(tokens: ReturnType<typeof parseFlags>['tokens']): Attachment[] {
  const attachments: Attachment[] = [];
  for (const token of tokens) {
    if (token.kind !== 'option' || (token.name !== 'image' && token.name !== 'file')) continue;
    const path = token.value ?? '';
    if (path.trim() === '') throw new CliUsageError(`--${token.name} needs the path of a file`);
    attachments.push({ kind: token.name, path });
  }
  return attachments;
}

function parseFlags(args: string[]) {
  return parseArgs({
    args,
    allowPositionals: true,
    strict: true,
    tokens: true,
    options: {
      image: { type: 'string', multiple: true },
      file: { type: 'string', multiple: true },
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
      force: { type: 'boolean' },
      reason: { type: 'string' },
      hostname: { type: 'string' },
      token: { type: 'string' },
      seq: { type: 'string' },
      'new-id': { type: 'string' },
      machine: { type: 'string' },
      input: { type: 'string' },
      'session-data': { type: 'string' },
      event: { type: 'string' },
      dataset: { type: 'string' },
      out: { type: 'string' },
      threshold: { type: 'string' },
      concurrency: { type: 'string' },
      'max-cost': { type: 'string' },
      'item-timeout': { type: 'string' },
      conversation: { type: 'string' },
    },
  });
}
