import { existsSync } from 'node:fs';
import { ActorloopError } from '../errors/actorloop-error.js';
import { EventRejectedError } from '../host/errors/event-rejected-error.js';
import { SqliteStoreError } from '../stores/sqlite/sqlite-store-error.js';
import { CliUsageError } from './cli-usage-error.js';
import { CommandRefusedError } from './command-refused-error.js';
import { usage } from './parse-arguments.js';

/** How the command ends on an error: its exit code and what it prints to stderr (after `actorloop: `). */
export type CliFailure = { code: number; text: string };

type FailureMapping = (error: unknown) => CliFailure | undefined;

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
 * The exit code and text of each error class, first match wins. Exit 2 is not used: it means a run
 * that halted (`exitCodeOf`), and a failing command never ran one to its end.
 */
const failures: readonly FailureMapping[] = [
  // The command line itself is wrong: the usage shows what it takes.
  byClass(CliUsageError, (error) => ({ code: 1, text: `${error.message}\n\n${usage}` })),
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
 * What the command prints and exits with for an error that ended it. An error of no actorloop class
 * prints its message too, but never its stack: a command line is no place for a trace.
 *
 * @example
 * ```ts
 * const { code, text } = cliFailure(new CliUsageError('run needs a prompt'));
 * process.stderr.write(`actorloop: ${text}\n`); // the message, then the usage
 * process.exitCode = code; // 1
 * ```
 */
export function cliFailure(error: unknown): CliFailure {
  for (const row of failures) {
    const failure = row(error);
    if (failure) return failure;
  }
  return { code: 1, text: error instanceof Error ? error.message || error.name : String(error) };
}
