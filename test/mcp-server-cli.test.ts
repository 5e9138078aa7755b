/**
 * `actorloop mcp --db f`: the CLI's conversation as an MCP server on stdio, started as a process by
 * the official SDK client's `StdioClientTransport`, as Claude Desktop or Cursor would. The model is
 * the planned OpenAI Chat Completions server (test/support), reached with `--base-url`; the
 * conversation is stored in the SQLite file and outlives the process.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConversationHost } from '../src/host/conversation-host.js';
import { openaiProvider } from '../src/providers/openai/index.js';
import { cliMachine } from '../src/cli/run-command.js';
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { builtCli } from './support/built-tree.js';
import { actorloop } from './support/cli-process.js';
import { expectValidHistory } from './support/history.js';
import type { PlanStep } from './support/planned-model.js';
import { type PlannedAnswer, type PlannedWireServer, startPlannedWireServer } from './support/planned-wire-server.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-mcp-'));
let wire: PlannedWireServer;

function plan(step: PlanStep): PlannedAnswer {
  if (step.lastUser === 'what is 6*7?') {
    return step.round === 0
      ? { toolCalls: [{ id: 'call_calc', name: 'calculator', args: { expression: '6*7' } }] }
      : { text: `it is ${String(step.messages.at(-1)?.content)}` };
  }
  if (step.lastUser === 'slow one') return { text: `slow answer (turn ${step.turn})` };
  return { text: `echo: ${step.lastUser} (turn ${step.turn})` };
}

/** While set, the model's answer to the pinned conversation's `slow one` stays in flight. */
let holding = false;

beforeAll(async () => {
  wire = await startPlannedWireServer(plan, { holdResponses: ({ step }) => holding && step.lastUser === 'slow one' });
});
afterAll(async () => {
  await wire?.close();
});

describe('actorloop mcp', () => {
  it('serves the conversation over stdio, one conversation per connection, stored in --db', async () => {
    const db = join(work, 'mcp.db');
    const stderr: string[] = [];
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [builtCli(), 'mcp', '--db', db, '--base-url', `${wire.url}/v1`, '--model', 'gpt-test'],
      env: { PATH: process.env.PATH ?? '' },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (data: Buffer) => stderr.push(data.toString()));
    const client = new Client({ name: 'cli-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBe('actorloop');
      const progress: string[] = [];
      const first = await client.callTool({ name: 'ask', arguments: { message: 'what is 6*7?' } }, undefined, {
        onprogress: ({ message }) => progress.push(message ?? ''),
      });
      expect(first.content).toEqual([{ type: 'text', text: expect.stringMatching(/^it is .*42/) }]);
      expect(progress).toContain('calling tool calculator');
      const second = await client.callTool({ name: 'ask', arguments: { message: 'thanks' } });
      expect(second.content).toEqual([{ type: 'text', text: 'echo: thanks (turn 2)' }]);
    } finally {
      await client.close();
    }
    expect(stderr.join('')).toMatch(/MCP server on stdio/);

    // The process has gone (stdin closed); the conversation stays in the file.
    const store = sqliteStore({ path: db });
    try {
      const stored = await store.list();
      expect(stored).toHaveLength(1);
      expect(stored[0]?.id).toMatch(/^mcp-/);
      expect(stored[0]?.status).toBe('done');
    } finally {
      await store.close();
    }
  });

  it('--conversation keeps one conversation across a SIGKILL: the interrupted run is resumed at start, a new call waits for it and continues', async () => {
    const db = join(work, 'pinned.db');
    const spawnServer = async () => {
      const stderr: string[] = [];
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [builtCli(), 'mcp', '--db', db, '--conversation', 'c1', '--base-url', `${wire.url}/v1`, '--model', 'gpt-test'],
        env: { PATH: process.env.PATH ?? '' },
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (data: Buffer) => stderr.push(data.toString()));
      const client = new Client({ name: 'kill-test', version: '1.0.0' });
      await client.connect(transport);
      return { client, transport, stderr };
    };
    const until = async (check: () => boolean, what: string) => {
      const deadline = Date.now() + 5_000;
      while (!check()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };

    const first = await spawnServer();
    expect((await first.client.callTool({ name: 'ask', arguments: { message: 'hello' } })).content).toEqual([
      { type: 'text', text: 'echo: hello (turn 1)' },
    ]);
    holding = true;
    const interrupted = first.client.callTool({ name: 'ask', arguments: { message: 'slow one' } }).then(
      () => 'answered',
      () => 'lost',
    );
    const inFlight = () => wire.requestLog().filter((request) => request.conversation === 'hello' && request.turn === 2).length;
    await until(() => inFlight() === 1, "the second turn's model request is in flight");
    // The host writes behind the run: killed before the running state is stored, there would be nothing to resume.
    const watcher = sqliteStore({ path: db, create: false });
    try {
      for (const deadline = Date.now() + 5_000; (await watcher.load('c1'))?.status !== 'running'; ) {
        if (Date.now() > deadline) throw new Error('timed out waiting until the running turn is stored');
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    } finally {
      await watcher.close();
    }
    const pid = first.transport.pid as number;
    process.kill(pid, 'SIGKILL');
    expect(await interrupted).toBe('lost');
    await first.client.close().catch(() => undefined);
    // Gone, not a zombie yet to be reaped: a zombie still shows in /proc, so it would count as the run's live owner.
    const exists = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await until(() => !exists(), 'the killed process is reaped');

    // Started again with the same flags: it resumes c1's run (the request is made again, still held).
    const second = await spawnServer();
    try {
      await until(() => inFlight() === 2, 'the resumed run asks the model again');
      const progress: string[] = [];
      const next = second.client.callTool({ name: 'ask', arguments: { message: 'after restart' } }, undefined, {
        onprogress: ({ message }) => progress.push(message ?? ''),
      });
      await until(() => progress.includes('waiting for the run in progress in conversation "c1" to end'), 'the call waits');
      holding = false;
      expect((await next).content).toEqual([{ type: 'text', text: 'echo: after restart (turn 3)' }]);
      expect(second.stderr.join('')).toMatch(/resumed the run of conversation c1 that process \d+ on this machine left/);
    } finally {
      await second.client.close();
    }

    const host = createConversationHost({
      machine: cliMachine(undefined, openaiProvider({ model: 'gpt-test', apiKey: 'sk-test', baseURL: `${wire.url}/v1` })),
      store: sqliteStore({ path: db }),
    });
    try {
      expect((await host.list()).map(({ id, status }) => ({ id, status }))).toEqual([{ id: 'c1', status: 'done' }]);
      const messages = (await host.get('c1'))?.messages ?? [];
      expectValidHistory(messages);
      const texts = messages.map(
        ({ role, content }) =>
          `${role}: ${typeof content === 'string' ? content : content.map((part) => ('text' in part ? part.text : part.type)).join('')}`,
      );
      // The interrupted turn's answer is stored once, between its message and the next call's.
      expect(texts).toEqual([
        'user: hello',
        'assistant: echo: hello (turn 1)',
        'user: slow one',
        'assistant: slow answer (turn 2)',
        'user: after restart',
        'assistant: echo: after restart (turn 3)',
      ]);
    } finally {
      await host.close();
    }
  });

  it('refuses a --conversation without an id, exit 1, saying what is wrong', async () => {
    for (const [args, said] of [
      [
        ['mcp', '--conversation', ''],
        /--conversation needs a conversation id \(not empty, no surrounding spaces or control characters\), got ""/,
      ],
      [['mcp', '--conversation', ' c1'], /--conversation needs a conversation id .*got " c1"/],
      [['mcp', '--conversation'], /--conversation <value>' argument missing/],
    ] as const) {
      const { code, stderr, stdout } = await actorloop([...args]);
      expect(code).toBe(1);
      expect(stderr).toMatch(said);
      expect(stderr).toMatch(/usage: actorloop mcp \[--db <file>\] \[--conversation <id>\]/);
      expect(stdout).toBe('');
    }
  });

  it("answers a usage error with the CLI's usage exit code, 1 (2 means a halted run), saying what is wrong", async () => {
    const { code, stderr, stdout } = await actorloop(['mcp', 'extra-argument']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/mcp takes no arguments, got "extra-argument"\nusage: actorloop mcp/);
    expect(stdout).toBe('');
  });
});
