import type { AnyStateMachine } from 'xstate';
import type { AnyConversationHost } from '../host/conversation-host.js';
import type { ConversationView, PendingApproval } from '../host/conversation-view.js';
import { stateKeyOf } from '../host/stored-state.js';
import { isConversationMachine } from '../machines/names/conversation-mark.js';
import { isRecord } from '../util/is-record.js';
import type { LoadedMachine } from './machine-module.js';
import type { CliEnvironment } from './run-command.js';

/**
 * The exit code of a run left stored while it waits — for an approval, or for one of the
 * workflow's own events — with no terminal to ask at: `actorloop send` continues it.
 */
export const waitingExitCode = 4;

/** What a run's state takes from outside while nothing in it runs: its own events (`busy` when a timer or an invoked actor will move it). */
export type StateWaits = { busy: boolean; events: string[] };

/**
 * What a machine in state `value` waits for: `busy` when one of its active states invokes an actor
 * or has an `after` delay (it moves by itself), else the event types its active states take.
 *
 * @example
 * ```ts
 * stateWaits(orderMachine, 'confirming'); // { busy: false, events: ['order.confirm'] }
 * ```
 */
export function stateWaits(machine: AnyStateMachine, value: unknown): StateWaits {
  type Node = AnyStateMachine['root'];
  const active: Node[] = [];
  const visit = (node: Node, below: unknown) => {
    active.push(node);
    if (typeof below === 'string') {
      const child = node.states[below];
      if (child) visit(child, undefined);
    } else if (isRecord(below)) {
      for (const [key, inner] of Object.entries(below)) {
        const child = node.states[key];
        if (child) visit(child, inner);
      }
    }
  };
  visit(machine.root, value);
  const events = new Set<string>();
  for (const node of active) for (const type of Object.keys(node.on)) if (!type.startsWith('xstate.')) events.add(type);
  return { busy: active.some((node) => node.invoke.length > 0 || node.after.length > 0), events: [...events] };
}

/**
 * Quotes a word for a POSIX shell, so a printed command can be pasted as it is.
 *
 * @example
 * ```ts
 * shellQuote('runs.db');               // runs.db
 * shellQuote('{"type":"order.confirm"}'); // '{"type":"order.confirm"}'
 * ```
 */
export function shellQuote(word: string): string {
  return /^[\w./#:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** Writes streamed text to stdout a line at a time, each line opened with the `[path]` of the conversation that wrote it. */
function streamPrinter(out: CliEnvironment['stdout']) {
  let open: string | undefined;
  const startLine = (label: string) => {
    if (open !== undefined) out.write('\n');
    out.write(label === '' ? '' : `[${label}] `);
    open = label;
  };
  const endLine = (label?: string) => {
    if (open === undefined || (label !== undefined && open !== label)) return;
    out.write('\n');
    open = undefined;
  };
  return {
    text(label: string, delta: string) {
      for (const [index, piece] of delta.split('\n').entries()) {
        if (index > 0) {
          // An empty line of an answer still says whose it is.
          if (open !== label) startLine(label);
          out.write('\n');
          open = undefined;
        }
        if (piece === '') continue;
        if (open !== label) startLine(label);
        out.write(piece);
      }
    },
    endLine,
    line(text: string) {
      endLine();
      out.write(`${text}\n`);
    },
  };
}

/** An event from a conversation anywhere in the run, with the path from the root down to it. */
function unwrap(event: { type: string }, path: string[] = []): { path: string[]; event: { type: string } & Record<string, unknown> } {
  const wrapped = event as { type: string; path?: unknown; event?: unknown };
  if (wrapped.type === 'agent.event' && Array.isArray(wrapped.path) && isRecord(wrapped.event))
    return unwrap(wrapped.event as { type: string }, [...path, ...(wrapped.path as string[])]);
  return { path, event: event as { type: string } & Record<string, unknown> };
}

/** How a run's output says it ended: a conversation's `RunOutput` and a workflow's own output alike (`status: 'halted' | 'error'`). */
function outcomeOf(output: unknown): 'done' | 'halted' | 'error' {
  return isRecord(output) && (output.status === 'halted' || output.status === 'error') ? output.status : 'done';
}

/** The output as printed: a conversation's without its history (the store has it), a workflow's as its machine made it. */
function printedOutput(output: unknown, conversation: boolean): unknown {
  if (!conversation || !isRecord(output)) return output;
  const { messages: _messages, ...rest } = output;
  return rest;
}

const approvalLabel = (approval: PendingApproval) =>
  `${approval.path?.length ? `[${approval.path.join('/')}] ` : ''}${approval.name}(${JSON.stringify(approval.args)})`;

/** An event typed at the terminal: JSON, or an event type alone. */
function eventOfText(text: string): { type: string } & Record<string, unknown> {
  if (!text.startsWith('{')) return { type: text };
  const event: unknown = JSON.parse(text);
  if (!isRecord(event) || typeof event.type !== 'string') throw new Error('an event is an object with a "type"');
  return event as { type: string } & Record<string, unknown>;
}

/** Why following stopped before the run ended: it waits, and no one here can answer. */
type Waiting = { kind: 'approval'; approvals: PendingApproval[] } | { kind: 'event'; value: unknown; events: string[] };

export type MachineRunOptions = {
  /** The `--db` file; `undefined` for a run in memory, which nothing keeps once this process ends. */
  db: string | undefined;
  loaded: LoadedMachine;
  /** Sets the run going once the listeners are in place (`host.start`, or the take-over and the event of `send`). */
  start: () => Promise<void>;
};

/**
 * Follows a run of a user's machine (a workflow, or a conversation machine) the way `run` follows
 * its own: each conversation's streamed text on stdout, a line at a time opened with its `[path]`
 * (the invoke or spawn ids down to it); the workflow's own emitted events a line each
 * (`[id] type {fields}`); its states and tool calls on stderr. A call waiting for approval is asked
 * at the terminal (y/N; `environment.ask`), and a workflow waiting for one of its own events asks
 * for one; with no terminal, following stops there and says how to go on (`actorloop send`), the
 * run stored as it is. Ctrl-C cancels the run. At the end the output is printed as one JSON line.
 * Resolves with the exit code: 0 done, 2 halted, 1 error, 130 cancelled by Ctrl-C, and
 * {@link waitingExitCode} when it was left waiting.
 *
 * @example
 * ```ts
 * const { code } = await followMachineRun(host, 'o1', { db: 'runs.db', loaded, start: async () => {
 *   await host.start('o1', { input: { item: 'lamp' } });
 * } }, environment);
 * ```
 */
export async function followMachineRun(
  host: AnyConversationHost,
  id: string,
  options: MachineRunOptions,
  environment: CliEnvironment,
): Promise<{ code: number; output?: unknown }> {
  const { stdout, stderr } = environment;
  const { machine } = options.loaded;
  const conversation = isConversationMachine(machine);
  const printer = streamPrinter(stdout);
  const note = (text: string) => stderr.write(`actorloop: ${text}\n`);
  const asked = new Set<string>();
  const questions = new AbortController();
  let settled = false;
  let interrupted = false;
  let stopWaiting: (waiting: Waiting) => void = () => undefined;
  const waiting = new Promise<Waiting>((resolve) => {
    stopWaiting = resolve;
  });

  const ask = async (question: string): Promise<string | undefined> => {
    try {
      return await environment.ask?.(question, questions.signal);
    } catch (error) {
      // A question Ctrl-C closed: the cancel is on its way.
      if (questions.signal.aborted) return undefined;
      throw error;
    }
  };

  const send = async (event: { type: string } & Record<string, unknown>) => {
    try {
      await host.send(id, event as never);
      return true;
    } catch (error) {
      note(`${event.type} not taken: ${error instanceof Error ? error.message : String(error)}`);
      return false;
    }
  };

  const answerApprovals = async (pending: PendingApproval[]) => {
    for (const approval of pending) {
      asked.add(approval.toolCallId);
      const answer = await ask(`${approvalLabel(approval)} needs approval. Approve? [y/N] `);
      if (answer === undefined || settled) return;
      const approve = /^y(es)?$/i.test(answer.trim());
      const taken = await send(
        approve
          ? { type: 'tool.approve', toolCallId: approval.toolCallId }
          : { type: 'tool.deny', toolCallId: approval.toolCallId, reason: 'denied at the terminal' },
      );
      // Not taken: the call still waits, and is asked again.
      if (!taken) {
        asked.delete(approval.toolCallId);
        schedule();
      }
    }
  };

  const askForEvent = async (view: ConversationView, events: string[]) => {
    const takes = events.length === 0 ? 'an event' : events.join(' or ');
    const answer = await ask(
      `${id} waits in ${stateKeyOf(view.value)} for ${takes}. Event to send (JSON, or its type; empty to stop here): `,
    );
    if (answer === undefined || settled) return;
    const text = answer.trim();
    if (text === '') return stopWaiting({ kind: 'event', value: view.value, events });
    let event: ReturnType<typeof eventOfText>;
    try {
      event = eventOfText(text);
    } catch (error) {
      note(`not an event (${error instanceof Error ? error.message : String(error)}): type {"type":"…"} or the type alone`);
      return schedule();
    }
    await send(event);
    // Taken without a change of state, or refused: nothing else would ask again.
    schedule();
  };

  /** Looks at the run once something in it changed: asks what it waits for, or stops following when no one here can answer. */
  const check = async () => {
    if (settled) return;
    const view = await host.get(id);
    if (!view || settled || view.status === 'done' || view.status === 'halted' || view.status === 'error') return;
    const conversations = view.conversations ?? [];
    const running = conversation ? view.status === 'running' : conversations.some((inner) => inner.status === 'running');
    const fresh = view.pendingApprovals.filter((approval) => !asked.has(approval.toolCallId));
    if (environment.ask && fresh.length > 0) return answerApprovals(fresh);
    // What still runs may yet ask for more: stop only once all of it waits.
    if (running) return;
    if (view.pendingApprovals.length > 0) {
      if (!environment.ask) stopWaiting({ kind: 'approval', approvals: view.pendingApprovals });
      return;
    }
    if (conversation || conversations.length > 0) return;
    const waits = stateWaits(machine, view.value);
    if (waits.busy) return;
    if (environment.ask) return askForEvent(view, waits.events);
    stopWaiting({ kind: 'event', value: view.value, events: waits.events });
  };

  let checking = Promise.resolve();
  let scheduled = false;
  /** A check soon, once the change that called for it is in the run's snapshot; one at a time, never two questions at once. */
  function schedule() {
    if (scheduled || settled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      checking = checking.then(check).catch((error: unknown) => {
        note(error instanceof Error ? error.message : String(error));
      });
    });
  }

  let lastState: string | undefined;
  const stops = [
    host.subscribe(id, (hostEvent) => {
      if (hostEvent.type === 'write.failed') return;
      if (hostEvent.type === 'state') {
        const state = stateKeyOf(hostEvent.value);
        const key = hostEvent.status === 'running' || hostEvent.status === state ? state : `${state} (${hostEvent.status})`;
        if (key !== lastState && !conversation) note(`${id}: ${key}`);
        lastState = key;
        return schedule();
      }
      const { path, event } = conversation
        ? { path: [], event: hostEvent as { type: string } & Record<string, unknown> }
        : unwrap(hostEvent);
      // The workflow's own events: what its chart emits, not a conversation's.
      if (!conversation && hostEvent.type !== 'agent.event') {
        const { type, ...fields } = event;
        printer.line(`[${id}] ${type}${Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields)}` : ''}`);
        return;
      }
      const label = path.join('/');
      const who = label === '' ? '' : `[${label}] `;
      switch (event.type) {
        case 'text.delta':
          printer.text(label, String(event.delta));
          return;
        case 'request.finished':
          printer.endLine(label);
          return schedule();
        case 'tool.started':
          note(`${who}tool ${String(event.name)} started`);
          return;
        case 'tool.result':
          note(`${who}tool ${String(event.name)} ${event.isError ? 'failed' : 'ended'}`);
          return schedule();
        case 'tool.approval.requested':
          note(`${who}${String(event.name)}(${JSON.stringify(event.args)}) waits for approval`);
          return schedule();
      }
    }),
    environment.onInterrupt(() => {
      interrupted = true;
      questions.abort();
      void host.send(id, { type: 'cancel', reason: 'interrupted (Ctrl-C)' } as never).catch(() => undefined);
    }),
  ];

  let outcome: { kind: 'ended'; output: unknown } | { kind: 'failed'; error: unknown } | { kind: 'waiting'; waiting: Waiting };
  try {
    await options.start();
    schedule();
    const ended = host.result(id).then(
      (output) => ({ kind: 'ended' as const, output }),
      (error: unknown) => ({ kind: 'failed' as const, error }),
    );
    outcome = await Promise.race([ended, waiting.then((why) => ({ kind: 'waiting' as const, waiting: why }))]);
  } finally {
    settled = true;
    questions.abort();
    for (const stop of stops) stop();
    // A check under way ends before the host it reads closes.
    await checking;
  }
  printer.endLine();

  if (outcome.kind === 'failed') {
    const message = outcome.error instanceof Error ? outcome.error.message : String(outcome.error);
    note(`${id} ended in error: ${message}`);
    return { code: 1 };
  }
  if (outcome.kind === 'waiting') return { code: leftWaiting(id, outcome.waiting, options, environment) };
  const { output } = outcome;
  stdout.write(`${JSON.stringify(printedOutput(output, conversation))}\n`);
  const ended = outcomeOf(output);
  if (ended !== 'done') {
    const why = isRecord(output) ? [output.reason, output.message ?? (isRecord(output.error) ? output.error.message : undefined)] : [];
    const said = why.filter((part): part is string => typeof part === 'string' && part !== '');
    note(`${id} ended ${ended}${said.length > 0 ? `: ${said.join(': ')}` : ''}`);
  }
  const cancelled = interrupted && ended === 'halted' && isRecord(output) && output.reason === 'cancelled';
  return { code: cancelled ? 130 : ended === 'done' ? 0 : ended === 'halted' ? 2 : 1, output };
}

/** Says what the run waits for and how to go on from another command; the exit code. */
function leftWaiting(id: string, waiting: Waiting, options: MachineRunOptions, { stderr, ask }: CliEnvironment): number {
  const note = (text: string) => stderr.write(`actorloop: ${text}\n`);
  const what =
    waiting.kind === 'approval'
      ? `approval of ${waiting.approvals.map(approvalLabel).join(', ')}`
      : `an event in state ${stateKeyOf(waiting.value)} (${waiting.events.length === 0 ? 'none it takes is known' : waiting.events.join(', ')})`;
  // At a terminal it was asked, and the answer was to stop here.
  const unanswered = ask === undefined ? ', and no terminal here can answer' : '';
  if (options.db === undefined) {
    note(
      `${id} waits for ${what}${unanswered}: it was in memory only (no --db), so it ends here; ` +
        'start it with --db <file> to answer later with actorloop send',
    );
    return 1;
  }
  const send = (event: Record<string, unknown>) =>
    `actorloop send ${shellQuote(id)} --db ${shellQuote(options.db as string)} --machine ${shellQuote(options.loaded.label)} --event ${shellQuote(JSON.stringify(event))}`;
  note(`${id} waits for ${what}; it is stored in ${options.db}${unanswered}.`);
  if (waiting.kind === 'approval') {
    for (const { toolCallId, name } of waiting.approvals) {
      note(`approve ${name} with: ${send({ type: 'tool.approve', toolCallId })}`);
      note(`deny it with: ${send({ type: 'tool.deny', toolCallId, reason: 'not now' })}`);
    }
  } else {
    note(`send it one with: ${send({ type: waiting.events[0] ?? '…' })}`);
  }
  return waitingExitCode;
}
