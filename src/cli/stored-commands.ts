import { randomUUID } from 'node:crypto';
import { type AnyConversationHost, createConversationHost } from '../host/conversation-host.js';
import type { ConversationStore } from '../host/conversation-store.js';
import type { ConversationView } from '../host/conversation-view.js';
import type { ConversationHost } from '../host/conversation-host.js';
import { isConversationMachine } from '../machines/names/conversation-mark.js';
import type { RunOutput } from '../machines/names/types.js';
import { type Message, userContentText } from '../model/messages.js';
import { handlerProvider } from '../providers/handler/handler-provider.js';
import { sqliteStore } from '../stores/sqlite/index.js';
import { followRun } from './follow-run.js';
import { shellQuote, stateWaits } from './follow-machine-run.js';
import { type LoadedMachine, loadMachine, type MachineSpec } from './machine-module.js';
import { offlineModel } from './offline-model.js';
import type { RunCommand } from './parse-arguments.js';
import { promptContent } from './attachments.js';
import { CommandRefusedError } from './command-refused-error.js';
import { cliHostId, describeOwner } from './process-owner.js';
import { type CliEnvironment, chooseProvider, cliMachine, describeEnd, offlineNotice } from './run-command.js';
import { checkMachineOf, inFlightRefusal, lastRunOf, listAll, loadStored, shownStatusOf } from './stored-conversation.js';

/** What the CLI's hosts report that no caller waits for. */
export const reportTo =
  (environment: CliEnvironment) =>
  (error: unknown): void => {
    environment.stderr.write(`actorloop: ${error instanceof Error ? error.message : String(error)}\n`);
  };

/**
 * A host over a stored file for commands that only read it (show, history): of the CLI's
 * conversation machine, whose model is never asked — or of the user's machine (`--machine`).
 *
 * @example
 * ```ts
 * const host = readingHost(sqliteStore({ path: 'runs.db', create: false }), environment, await loadMachine(spec, process.cwd()));
 * ```
 */
export function readingHost(store: ConversationStore, environment: CliEnvironment, loaded?: LoadedMachine): AnyConversationHost {
  return createConversationHost({
    machine: loaded?.machine ?? cliMachine(undefined, handlerProvider(offlineModel())),
    store,
    hostId: cliHostId(),
    onError: reportTo(environment),
  });
}

/**
 * `actorloop run --db file [--id id] "prompt"`: one turn of a stored conversation. A new id starts
 * a conversation (and the file, when there is none); a known one continues from its stored history.
 * A conversation whose run is in flight — running in another process, or interrupted — is refused
 * (exit 3): only `resume` continues an interrupted run, and nothing else of the file is touched.
 */
export async function runStored(
  command: RunCommand & { db: string },
  environment: CliEnvironment,
): Promise<{ code: number; output: RunOutput }> {
  // Read first: a missing or refused attachment creates no file.
  const content = await promptContent(command.prompt, command.attachments);
  const chosen = chooseProvider(command, environment.env);
  const store = sqliteStore({ path: command.db });
  const host = createConversationHost({
    machine: cliMachine(command, chosen.provider),
    store,
    hostId: cliHostId(),
    onError: reportTo(environment),
  });
  const { stderr } = environment;
  try {
    const id = command.id ?? `c-${randomUUID().slice(0, 8)}`;
    const stored = await store.load(id);
    if (stored && stored.machineId !== host.machine.id) {
      throw new CommandRefusedError(
        `"${id}" in ${command.db} is a run of machine "${stored.machineId}", not a conversation of the CLI: ` +
          `actorloop send ${id} --db ${command.db} --machine <module> --event <json> sends it an event; nothing was sent`,
      );
    }
    if (stored?.status === 'running') throw inFlightRefusal(stored, command.db);
    const before = await host.get(id);
    if (chosen.offline) stderr.write(offlineNotice);
    stderr.write(
      `actorloop: conversation ${id} in ${command.db}${before ? ` (continuing: ${before.messages.length} messages, ${before.status})` : ' (new)'}\n`,
    );
    return await followRun(
      host,
      id,
      {
        json: command.json,
        started: { provider: chosen.provider.name, model: chosen.label, offline: chosen.offline },
        start: async () => {
          await host.send(id, { type: 'user.message', content });
        },
      },
      environment,
    );
  } finally {
    await host.close();
  }
}

/**
 * `actorloop list --db file`: the stored conversations, newest first — id, status (`interrupted`
 * for a run whose process is gone), last update. A missing file is an error; nothing is created.
 */
export async function listStored(db: string, json: boolean, environment: CliEnvironment): Promise<number> {
  const store = sqliteStore({ path: db, create: false });
  try {
    const conversations = (await listAll(store)).map((summary) => ({ ...summary, status: shownStatusOf(summary).status }));
    conversations.sort((a, b) => b.updatedAt - a.updatedAt);
    if (json) environment.stdout.write(`${JSON.stringify(conversations)}\n`);
    else if (conversations.length === 0) environment.stderr.write(`actorloop: no conversations in ${db}\n`);
    else {
      for (const { id, status, updatedAt } of conversations)
        environment.stdout.write(`${id}\t${status}\t${new Date(updatedAt).toISOString()}\n`);
    }
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * `actorloop show --db file id [--machine m]`: one stored conversation — its status (`interrupted`
 * included, with the process that ran it), state, history, the calls waiting for approval and the
 * outcome of its last finished run; with `--machine`, a run of the user's machine (a workflow: the
 * conversations running in it, their approvals with their path, its output). `--json`: the host's
 * view with that status, `owner` and `lastOutput`.
 */
export async function showStored(
  db: string,
  id: string,
  json: boolean,
  environment: CliEnvironment,
  machine?: MachineSpec,
): Promise<number> {
  const loaded = machine === undefined ? undefined : await loadMachine(machine, process.cwd());
  const store = sqliteStore({ path: db, create: false });
  const host = readingHost(store, environment, loaded);
  try {
    const stored = await loadStored(store, id, db);
    if (loaded === undefined) checkMachineOf(stored, host.machine.id, { command: 'show', db });
    const view = await host.get(id);
    if (!view) throw new Error(`no conversation "${id}" in ${db} (see actorloop list --db ${db})`);
    const { status, liveness } = shownStatusOf(stored);
    const lastOutput = await lastRunOf(store, id);
    if (json) {
      environment.stdout.write(`${JSON.stringify({ ...view, status, owner: stored.owner, ...(lastOutput ? { lastOutput } : {}) })}\n`);
      return 0;
    }
    const out = environment.stdout;
    out.write(`${view.id}: ${status} (${JSON.stringify(view.value)}), updated ${new Date(view.updatedAt).toISOString()}\n`);
    const workflow = loaded !== undefined && !isConversationMachine(loaded.machine);
    if (liveness) {
      const owner = describeOwner(stored.owner, liveness);
      out.write(
        status === 'interrupted'
          ? `${owner} is gone: ${loaded === undefined ? `actorloop resume --db ${db} ${id} [provider options] continues the run, actorloop cancel --db ${db} ${id} ends it` : goOnWith(view, loaded, db)}\n`
          : liveness.state === 'alive'
            ? `running in ${owner}\n`
            : `running in ${owner} (cannot be checked from this machine)\n`,
      );
    }
    for (const message of view.messages) out.write(`${formatMessage(message)}\n`);
    if (workflow) {
      for (const inner of view.conversations ?? [])
        out.write(`conversation [${inner.path.join('/')}]: ${inner.status} (${JSON.stringify(inner.value)})\n`);
    }
    for (const pending of view.pendingApprovals) {
      const path = pending.path?.length ? `[${pending.path.join('/')}] ` : '';
      out.write(`waiting for approval: ${path}${pending.name}(${JSON.stringify(pending.args)}) [${pending.toolCallId}]\n`);
    }
    if (workflow && view.output !== undefined) out.write(`output: ${JSON.stringify(view.output)}\n`);
    if (lastOutput) out.write(`last run: ${describeOutcome(lastOutput)}\n`);
    return 0;
  } finally {
    await host.close();
  }
}

/** What continues an interrupted run of the user's machine: the event its state waits for (`send`), else `resume`; `cancel` ends it. */
function goOnWith(view: ConversationView, loaded: LoadedMachine, db: string): string {
  const machine = `--db ${shellQuote(db)} --machine ${shellQuote(loaded.label)}`;
  const { id } = view;
  const waits =
    isConversationMachine(loaded.machine) || (view.conversations?.length ?? 0) > 0 ? undefined : stateWaits(loaded.machine, view.value);
  const cancel = `actorloop cancel ${shellQuote(id)} ${machine} ends it`;
  if (waits && !waits.busy) {
    const event = shellQuote(JSON.stringify({ type: waits.events[0] ?? '…' }));
    return `it waits for an event (${waits.events.join(', ') || 'none it takes is known'}): actorloop send ${shellQuote(id)} ${machine} --event ${event} sends one, ${cancel}`;
  }
  return `actorloop resume ${shellQuote(id)} ${machine} continues the run, ${cancel}`;
}

/** A finished run in a line: how it ended, its rounds and tokens. */
function describeOutcome(outcome: Omit<RunOutput, 'messages'>): string {
  const ended = outcome.status === 'done' ? 'done' : describeEnd({ ...outcome, messages: [] });
  const rounds = `${outcome.iterations} tool round${outcome.iterations === 1 ? '' : 's'}`;
  return `${ended}, ${rounds}, ${outcome.usage.inputTokens} tokens in, ${outcome.usage.outputTokens} out`;
}

/** One history message as a line a person reads. */
export function formatMessage(message: Message): string {
  switch (message.role) {
    case 'system':
      return `system: ${message.content}`;
    case 'user':
      return `user: ${userContentText(message.content)}`;
    case 'assistant':
      return `assistant: ${message.content
        .map((part) =>
          part.type === 'text'
            ? part.text
            : part.type === 'tool-call'
              ? `→ ${part.toolName}(${JSON.stringify(part.args)})`
              : part.type === 'reasoning'
                ? `(thinking: ${part.text})`
                : '(redacted thinking)',
        )
        .join(' ')}`;
    case 'tool':
      return message.content.map((part) => `tool ${part.toolName}${part.isError ? ' failed' : ''}: ${String(part.result)}`).join('\n');
  }
}

export type { ConversationHost };
