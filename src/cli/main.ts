#!/usr/bin/env node
/**
 * The `actorloop` command: `actorloop run "prompt"` and friends (see `usage`).
 * @packageDocumentation
 */
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline/promises';
import { cliFailure } from './cli-failure.js';
import { parseArguments, usage } from './parse-arguments.js';
import { type CliEnvironment, runCommand } from './run-command.js';
import { requireNodeRuntime } from '../util/runtime.js';

/** A question at the terminal, on stderr: stdout keeps the run's text and output. */
async function askAtTerminal(question: string, signal: AbortSignal): Promise<string> {
  const terminal = createInterface({ input: process.stdin, output: process.stderr });
  // Ctrl-C at a question reaches readline, not the process: passed on, it cancels the run as it does elsewhere.
  terminal.on('SIGINT', () => process.emit('SIGINT', 'SIGINT'));
  try {
    return await terminal.question(question, { signal });
  } finally {
    terminal.close();
  }
}

const environment: CliEnvironment = {
  ...(process.stdin.isTTY ? { ask: askAtTerminal } : {}),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  onInterrupt(handler) {
    let presses = 0;
    const listener = () => {
      presses += 1;
      // A second Ctrl-C does not wait for the clean cancel.
      if (presses > 1) process.exit(130);
      handler();
    };
    process.on('SIGINT', listener);
    return () => process.off('SIGINT', listener);
  },
};

/** Calls `stop` on SIGINT or SIGTERM (a server's end); returns the function that stops listening. */
function stopOnSignals(stop: () => void): () => void {
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return () => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  };
}

async function main(argv: string[]): Promise<number> {
  // `bun x actorloop` runs this file with Bun: its child processes, signals and SQLite are Node's.
  requireNodeRuntime('the actorloop CLI', 'run it with Node.js (npx actorloop …), or embed the library (docs/runtimes.md)');
  const command = parseArguments(argv);
  switch (command.command) {
    case 'help':
      process.stdout.write(`${usage}\n`);
      return 0;
    case 'version': {
      const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };
      process.stdout.write(`${pkg.version}\n`);
      return 0;
    }
    case 'run':
      // The store and the viewer load only when asked for: `run` alone needs neither optional peer.
      if (command.db !== undefined)
        return (await (await import('./stored-commands.js')).runStored({ ...command, db: command.db }, environment)).code;
      return (await runCommand(command, environment)).code;
    case 'list':
      return (await import('./stored-commands.js')).listStored(command.db, command.json, environment);
    case 'show':
      return (await import('./stored-commands.js')).showStored(command.db, command.id, command.json, environment, command.machine);
    case 'resume':
      // `--machine`: a run of the user's machine, not one of the CLI's conversations.
      if (command.machine !== undefined)
        return (await (await import('./machine-commands.js')).resumeMachineRun({ ...command, machine: command.machine }, environment)).code;
      return (await (await import('./resume-command.js')).resumeStored(command, environment)).code;
    case 'history':
      return (await import('./history-command.js')).historyStored(command.db, command.id, command.json, environment, command.machine);
    case 'fork':
      if (command.machine !== undefined)
        return (await (await import('./machine-commands.js')).forkMachineRun({ ...command, machine: command.machine }, environment)).code;
      return (await (await import('./history-command.js')).forkStored(command, environment)).code;
    case 'cancel':
      if (command.machine !== undefined)
        return (await import('./machine-commands.js')).cancelMachineRun({ ...command, machine: command.machine }, environment);
      return (await import('./cancel-command.js')).cancelStored(command, environment);
    case 'start':
      return (await (await import('./machine-commands.js')).startRun(command, environment)).code;
    case 'send':
      return (await (await import('./machine-commands.js')).sendEvent(command, environment)).code;
    case 'serve':
      return (await import('./serve-command.js')).serveCommand(command, { ...environment, onStop: stopOnSignals });
    case 'mcp':
      // The MCP SDK (an optional peer) loads only here: the other commands run without it.
      return (await import('./mcp-command.js')).mcpCommand(command, { ...environment, onStop: stopOnSignals });
    case 'view':
      return (await import('./view-command.js')).viewCommand(command, { ...environment, onStop: stopOnSignals });
    case 'eval':
      // The eval's modules (actorloop/testing's evaluate, the report) load only for eval.
      return (await import('./eval-command.js')).evalCommand(command, environment);
    case 'inspect':
      return (await import('./inspect-command.js')).inspectStored(command.db, command.port, environment);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    const { code, text } = cliFailure(error, process.argv[2]);
    process.stderr.write(`actorloop: ${text}\n`);
    process.exitCode = code;
  },
);
