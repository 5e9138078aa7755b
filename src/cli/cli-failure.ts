import { existsSync } from 'node:fs';
import { ActorloopError } from '../errors/actorloop-error.js';
import { EventRejectedError } from '../host/errors/event-rejected-error.js';
import { SqliteStoreError } from '../stores/sqlite/sqlite-store-error.js';
import { CliUsageError } from './cli-usage-error.js';
import { CommandRefusedError } from './command-refused-error.js';
import { usageLineOf } from './parse-arguments.js';

/** How the command ends on an error: its exit code and what it prints to stderr (after `actorloop: `). */
export type CliFailure = { code: number; text: string };

/** A row of the table: the failure of an error it knows (`command`: the command line's first word), else `undefined`. */
type FailureMapping = (error: unknown, command: string | undefined) => CliFailure | undefined;

/** A row of the table, for the errors of one class (`isInstance` also knows those of another copy of actorloop). */
function byClass<E extends Error>(
  type: { readonly prototype: E; isInstance(error: unknown): error is NoInfer<E> },
  failure: (error: E) => CliFailure | undefined,
): FailureMapping {
  return (error) => (type.isInstance(error) ? failure(error) : undefined);
}

/** The exit code of a command refused for the state of its conversation, which changed nothing. */
export const refusedExitCode = 3;

/**
 * `eval`'s exit code when nothing ran because what it was given is wrong: the command line, the
 * module (missing, not loading, without `{ machine, dataset, scorers }`), its dataset, `--out`. Not 1,
 * which says the mean was below `--threshold`: a CI tells a broken eval from a failing agent.
 */
export const evalNotRunExitCode = 2;

/**
 * The exit code of a usage error of `command`: 1, as for every command, but {@link evalNotRunExitCode}
 * for `eval`, whose 1 means below the threshold.
 *
 * @example
 * ```ts
 * usageExitCodeOf('run'); // 1
 * usageExitCodeOf('eval'); // 2
 * ```
 */
export function usageExitCodeOf(command: string | undefined): number {
  return command === 'eval' ? evalNotRunExitCode : 1;
}

/** Where a usage error points for the rest: the whole usage is too long to bury the error under. */
export const helpPointer = 'actorloop --help lists every command and option';

/**
 * A usage error's text: its message, the line of the command's usage when the command is one
 * (`usage: actorloop history --db <file> <id>`), and where the rest is.
 */
function usageErrorText(message: string, command: string | undefined): string {
  const line = usageLineOf(command);
  return [message, ...(line === undefined ? [] : [`usage: ${line}`]), helpPointer].join('\n');
}

/**
 * The exit code and text of each error class, first match wins. Exit 2 is not used but by `eval`'s
 * usage errors: it means a run that halted (`exitCodeOf`), and a failing command never ran one to
 * its end; `eval`'s 2 means nothing ran (its 1 is a mean below the threshold).
 */
const failures: readonly FailureMapping[] = [
  // The command line itself is wrong: its command's usage line says what it takes, `--help` the rest.
  (error, command) =>
    CliUsageError.isInstance(error) ? { code: usageExitCodeOf(command), text: usageErrorText(error.message, command) } : undefined,
  // The conversation is not in a state the command acts on (the host refused the event, or the CLI did): nothing changed.
  byClass(CommandRefusedError, (error) => ({ code: refusedExitCode, text: error.message })),
  byClass(EventRejectedError, (error) => ({ code: refusedExitCode, text: error.message })),
  // Only `run --db` makes a database: the commands that read one say the file is not there, in the CLI's words.
  byClass(SqliteStoreError, (error) =>
    error.code === 'not_found' && !existsSync(error.path)
      ? { code: 1, text: `no database at ${error.path} (run --db ${error.path} "…" creates one); nothing was created` }
      : undefined,
  ),
  // actorloop's own errors say what is wrong in their message (the store file, the conversation, the package to install).
  byClass(ActorloopError, (error) => ({ code: 1, text: error.message })),
];

/**
 * What the command prints and exits with for an error that ended it (`command`: the command line's
 * first word, for a usage error's usage line). An error of no actorloop class prints its message
 * too, but never its stack: a command line is no place for a trace.
 *
 * @example
 * ```ts
 * const { code, text } = cliFailure(new CliUsageError('run needs a prompt'), 'run');
 * process.stderr.write(`actorloop: ${text}\n`); // the message, `usage: actorloop run [options] "prompt"`, the pointer to --help
 * process.exitCode = code; // 1
 * ```
 */
export function cliFailure(error: unknown, command?: string): CliFailure {
  for (const row of failures) {
    const failure = row(error, command);
    if (failure) return failure;
  }
  return { code: 1, text: error instanceof Error ? error.message || error.name : String(error) };
}
