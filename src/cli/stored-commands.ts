import { randomUUID } from 'node:crypto';
import { createConversationHost } from '../host/conversation-host.js';
import type { ConversationStore } from '../host/conversation-store.js';
import type { ConversationHost } from '../host/conversation-host.js';
import type { RunOutput } from '../machines/types.js';
import { type Message, userContentText } from '../model/messages.js';
import { handlerProvider } from '../providers/handler/handler-provider.js';
import { sqliteStore } from '../stores/sqlite/index.js';
import { followRun } from './follow-run.js';
import { offlineModel } from './offline-model.js';
import type { RunCommand } from './parse-arguments.js';
import { promptContent } from './attachments.js';
import { cliHostId, describeOwner } from './process-owner.js';
import { type CliEnvironment, chooseProvider, cliMachine, describeEnd, offlineNotice } from './run-command.js';
import { inFlightRefusal, lastRunOf, listAll, loadStored, shownStatusOf } from './stored-conversation.js';

/** What the CLI's hosts report that no caller waits for. */
export const reportTo =
  (environment: CliEnvironment) =>
  (error: unknown): void => {
    environment.stderr.write(`actorloop: ${error instanceof Error ? error.message : String(error)}\n`);
  };

/** A host over a stored file for commands that only read it (show, history): its model is never asked. */
export function readingHost(store: ConversationStore, environment: CliEnvironment): ConversationHost {
  return createConversationHost({
    machine: cliMachine(undefined, handlerProvider(offlineModel())),
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
 * `actorloop show --db file id`: one stored conversation — its status (`interrupted` included, with
 * the process that ran it), state, history, the calls waiting for approval and the outcome of its
 * last finished run. `--json`: the host's view with that status, `owner` and `lastOutput`.
 */
export async function showStored(db: string, id: string, json: boolean, environment: CliEnvironment): Promise<number> {
  const store = sqliteStore({ path: db, create: false });
  const host = readingHost(store, environment);
  try {
    const stored = await loadStored(store, id, db);
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
    if (liveness) {
      const owner = describeOwner(stored.owner, liveness);
      out.write(
        status === 'interrupted'
          ? `${owner} is gone: actorloop resume --db ${db} ${id} [provider options] continues the run, actorloop cancel --db ${db} ${id} ends it\n`
          : liveness.state === 'alive'
            ? `running in ${owner}\n`
            : `running in ${owner} (cannot be checked from this machine)\n`,
      );
    }
    for (const message of view.messages) out.write(`${formatMessage(message)}\n`);
    for (const pending of view.pendingApprovals)
      out.write(`waiting for approval: ${pending.name}(${JSON.stringify(pending.args)}) [${pending.toolCallId}]\n`);
    if (lastOutput) out.write(`last run: ${describeOutcome(lastOutput)}\n`);
    return 0;
  } finally {
    await host.close();
  }
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
