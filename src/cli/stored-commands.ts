import { randomUUID } from 'node:crypto';
import { createConversationHost } from '../host/conversation-host.js';
import type { ConversationHost } from '../host/conversation-host.js';
import type { RunOutput } from '../machines/types.js';
import type { Message } from '../model/messages.js';
import { handlerProvider } from '../providers/handler/handler-provider.js';
import { sqliteStore } from '../stores/sqlite/index.js';
import { offlineModel } from './offline-model.js';
import type { RunCommand } from './parse-arguments.js';
import { showProgress } from './progress.js';
import { type CliEnvironment, chooseProvider, cliMachine, describeEnd, exitCodeOf } from './run-command.js';

/** A host on the SQLite file `db` with the CLI's machine (provider chosen by `command`, or offline). */
function openHost(db: string, command: RunCommand | undefined, environment: CliEnvironment) {
  const chosen = command ? chooseProvider(command, environment.env) : undefined;
  const machine = cliMachine(command, chosen?.provider ?? handlerProvider(offlineModel()));
  const host = createConversationHost({
    machine,
    store: sqliteStore({ path: db }),
    onError: (error) => environment.stderr.write(`actorloop: ${String(error)}\n`),
  });
  return { host, chosen };
}

/**
 * `actorloop run --db file [--id id] "prompt"`: one turn of a stored conversation. A new id starts
 * a conversation; a known one continues from its stored history. Runs a crashed earlier command
 * left in flight are resumed first (one command at a time per file).
 */
export async function runStored(
  command: RunCommand & { db: string },
  environment: CliEnvironment,
): Promise<{ code: number; output: RunOutput }> {
  const { host, chosen } = openHost(command.db, command, environment);
  const { stdout, stderr } = environment;
  try {
    await host.recover();
    const id = command.id ?? `c-${randomUUID().slice(0, 8)}`;
    const before = await host.get(id);
    if (chosen?.offline) {
      stderr.write(
        'actorloop: offline scripted model (no OPENAI_API_KEY, ANTHROPIC_API_KEY or --base-url): a real engine and real tools, no real model\n',
      );
    }
    stderr.write(
      `actorloop: conversation ${id} in ${command.db}${before ? ` (continuing: ${before.messages.length} messages, ${before.status})` : ' (new)'}\n`,
    );
    let progress: ReturnType<typeof showProgress> | undefined;
    let stopJson: (() => void) | undefined;
    let wrote = false;
    if (command.json) {
      stdout.write(
        `${JSON.stringify({ type: 'run.started', provider: chosen?.provider.name, model: chosen?.label, offline: chosen?.offline, conversationId: id })}\n`,
      );
      stopJson = host.subscribe(id, (event) => stdout.write(`${JSON.stringify(event)}\n`));
    } else {
      progress = showProgress(
        (listener) => host.subscribe(id, (event) => (event.type === 'write.failed' ? undefined : listener(event))),
        stderr,
      );
      stopJson = host.subscribe(id, (event) => {
        if (event.type === 'request.started' && wrote) {
          stdout.write('\n');
          wrote = false;
        }
        if (event.type !== 'text.delta') return;
        progress?.beforeText();
        stdout.write(event.delta);
        wrote = true;
      });
    }
    let interrupted = false;
    const removeInterrupt = environment.onInterrupt(() => {
      interrupted = true;
      void host.send(id, { type: 'cancel', reason: 'interrupted (Ctrl-C)' }).catch(() => undefined);
    });
    try {
      await host.send(id, { type: 'user.message', content: command.prompt });
    } catch (error) {
      removeInterrupt();
      // Thrown as it is: main() reports it by its class, and the host's errors name the conversation already.
      throw error;
    }
    const output = await host.result(id);
    removeInterrupt();
    progress?.stop();
    stopJson?.();
    if (command.json) stdout.write(`${JSON.stringify({ type: 'run.output', output })}\n`);
    else {
      stdout.write(output.text === '' || output.text.endsWith('\n') ? '' : '\n');
      if (output.status !== 'done') stderr.write(`actorloop: ${describeEnd(output)}\n`);
    }
    return { code: exitCodeOf(output, interrupted), output };
  } finally {
    await host.close();
  }
}

/** `actorloop list --db file`: the stored conversations, newest first. */
export async function listStored(db: string, json: boolean, environment: CliEnvironment): Promise<number> {
  const store = sqliteStore({ path: db });
  try {
    const conversations = await store.list();
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

/** `actorloop show --db file id`: one stored conversation, its state and history. */
export async function showStored(db: string, id: string, json: boolean, environment: CliEnvironment): Promise<number> {
  const { host } = openHost(db, undefined, environment);
  try {
    const view = await host.get(id);
    if (!view) throw new Error(`no conversation "${id}" in ${db} (see actorloop list --db ${db})`);
    if (json) {
      environment.stdout.write(`${JSON.stringify(view)}\n`);
      return 0;
    }
    const out = environment.stdout;
    out.write(`${view.id}: ${view.status} (${JSON.stringify(view.value)}), updated ${new Date(view.updatedAt).toISOString()}\n`);
    for (const message of view.messages) out.write(`${formatMessage(message)}\n`);
    for (const pending of view.pendingApprovals)
      out.write(`waiting for approval: ${pending.name}(${JSON.stringify(pending.args)}) [${pending.toolCallId}]\n`);
    return 0;
  } finally {
    await host.close();
  }
}

/** One history message as a line a person reads. */
export function formatMessage(message: Message): string {
  switch (message.role) {
    case 'system':
      return `system: ${message.content}`;
    case 'user':
      return `user: ${typeof message.content === 'string' ? message.content : message.content.map((part) => part.text).join('')}`;
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
