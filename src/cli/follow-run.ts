import type { ConversationHost } from '../host/conversation-host.js';
import type { RunOutput } from '../machines/names/types.js';
import { showProgress } from './progress.js';
import { type CliEnvironment, exitCodeOf, writeEnd } from './run-command.js';

/**
 * Follows a run of a stored conversation the way `actorloop run` follows its own: the answer
 * streams to stdout and progress to stderr (or, with `json`, every event as a JSON line after
 * `started`, ending with `run.output`); Ctrl-C cancels the run. `start` sets the run going —
 * `host.send` of the message, or `host.recover()` of the run taken over — and runs after the
 * listeners are in place, so no event is missed. Resolves with the exit code of `run`.
 */
export async function followRun(
  host: ConversationHost,
  id: string,
  options: { json: boolean; started: Record<string, unknown>; start: () => Promise<void> },
  environment: CliEnvironment,
): Promise<{ code: number; output: RunOutput }> {
  const { stdout, stderr } = environment;
  const stops: Array<() => void> = [];
  let progress: ReturnType<typeof showProgress> | undefined;
  if (options.json) {
    stdout.write(`${JSON.stringify({ type: 'run.started', ...options.started, conversationId: id })}\n`);
    stops.push(host.subscribe(id, (event) => stdout.write(`${JSON.stringify(event)}\n`)));
  } else {
    progress = showProgress(
      (listener) => host.subscribe(id, (event) => (event.type === 'write.failed' ? undefined : listener(event))),
      stderr,
    );
    let wrote = false;
    stops.push(
      host.subscribe(id, (event) => {
        if (event.type === 'request.started' && wrote) {
          stdout.write('\n');
          wrote = false;
        }
        if (event.type !== 'text.delta') return;
        progress?.beforeText();
        stdout.write(event.delta);
        wrote = true;
      }),
    );
  }
  let interrupted = false;
  stops.push(
    environment.onInterrupt(() => {
      interrupted = true;
      void host.send(id, { type: 'cancel', reason: 'interrupted (Ctrl-C)' }).catch(() => undefined);
    }),
  );
  let output: RunOutput;
  try {
    await options.start();
    output = await host.result(id);
  } finally {
    for (const stop of stops) stop();
    progress?.stop();
  }
  writeEnd(output, options.json, environment);
  return { code: exitCodeOf(output, interrupted), output };
}
