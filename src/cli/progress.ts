import type { ConversationActor, ConversationEmittedEvent, ConversationStateValue } from '../machines/names/types.js';

/** What progress is drawn from: a run's emitted events and its state changes. */
export type ProgressEvent = ConversationEmittedEvent | { type: 'state'; value: ConversationStateValue };
/** Subscribes to a run's progress events; returns the function that stops. */
export type ProgressSource = (listener: (event: ProgressEvent) => void) => () => void;

/** The progress events of a plain actor. */
export function actorProgress(actor: Pick<ConversationActor, 'on' | 'subscribe'>): ProgressSource {
  return (listener) => {
    const events = actor.on('*', listener);
    const states = actor.subscribe({ next: (snapshot) => listener({ type: 'state', value: snapshot.value }), error: () => undefined });
    return () => {
      events.unsubscribe();
      states.unsubscribe();
    };
  };
}

/** Where progress goes: stderr, and whether it is a terminal (spinner, colours) or a pipe (plain lines). */
export type ProgressOutput = { write(text: string): unknown; isTTY?: boolean };

const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

const brief = (value: unknown, max = 60) => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
};

/**
 * Shows a run's progress on stderr: the state, the round and attempt of each request, each tool
 * call as it starts and ends with its duration, retries with their wait. On a terminal a spinner
 * turns while the run waits; a pipe gets plain lines. `beforeText` must be called before the
 * answer's text is written to stdout (it clears the spinner line); returns a function that stops.
 *
 * @example
 * ```ts
 * const progress = showProgress(actorProgress(actor), process.stderr);
 * actor.on('text.delta', (event) => { progress.beforeText(); process.stdout.write(event.delta); });
 * ```
 */
export function showProgress(source: ProgressSource, output: ProgressOutput) {
  const tty = output.isTTY === true;
  let spinning: { label: string; frame: number; timer: ReturnType<typeof setInterval> } | undefined;
  let midLine = false;
  const started = new Map<string, number>();

  const clear = () => {
    if (spinning && tty) output.write('\r\x1b[K');
  };
  const stopSpinner = () => {
    if (!spinning) return;
    clearInterval(spinning.timer);
    clear();
    spinning = undefined;
  };
  const line = (text: string) => {
    stopSpinner();
    if (midLine) {
      output.write('\n');
      midLine = false;
    }
    output.write(tty ? `\x1b[2m${text}\x1b[0m\n` : `[actorloop] ${text}\n`);
  };
  const spin = (label: string) => {
    if (!tty) return;
    stopSpinner();
    const state = { label, frame: 0, timer: setInterval(() => draw(), 80) };
    state.timer.unref();
    spinning = state;
    const draw = () => {
      output.write(`\r\x1b[K\x1b[2m${frames[state.frame % frames.length]} ${state.label}\x1b[0m`);
      state.frame += 1;
    };
    draw();
  };

  let lastState = '';
  const stop = source((event) => {
    switch (event.type) {
      case 'state': {
        const value = typeof event.value === 'string' ? event.value : (Object.keys(event.value)[0] ?? '');
        if (value === lastState) return;
        lastState = value;
        if (value === 'awaitingApproval') line('state: awaiting approval');
        else if (value === 'executingTools' || value === 'retrying' || value === 'repairing') line(`state: ${value}`);
        return;
      }
      case 'request.started':
        line(
          `requesting ${event.provider}${event.model ? ` ${event.model}` : ''} (round ${event.iteration + 1}, attempt ${event.attempt})`,
        );
        spin('waiting for the model');
        return;
      case 'text.delta':
        stopSpinner();
        midLine = true;
        return;
      case 'tool.started':
        started.set(event.toolCallId, performance.now());
        line(`tool ${event.name} started`);
        spin(`running ${event.name}`);
        return;
      case 'tool.call':
        line(`tool call ${event.name}(${brief(event.args)})`);
        return;
      case 'tool.result': {
        const start = started.get(event.toolCallId);
        started.delete(event.toolCallId);
        const took = start === undefined ? '' : ` in ${Math.round(performance.now() - start)} ms`;
        line(`tool ${event.name} ${event.isError ? 'failed' : 'done'}${took}: ${brief(event.result)}`);
        return;
      }
      case 'tool.approval.requested':
        line(`tool ${event.name}(${brief(event.args)}) waits for approval (${event.toolCallId})`);
        return;
      case 'request.retry':
        line(`retry ${event.attempt} in ${event.delayMs} ms: ${event.error.message}`);
        spin(`waiting ${event.delayMs} ms before retrying`);
        return;
    }
  });

  return {
    /** Call before writing answer text to stdout: clears the spinner so the two do not mix. */
    beforeText: () => {
      stopSpinner();
      midLine = true;
    },
    line,
    stop: () => {
      stopSpinner();
      stop();
    },
  };
}
