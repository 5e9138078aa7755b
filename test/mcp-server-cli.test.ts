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
import { sqliteStore } from '../src/stores/sqlite/index.js';
import { builtCli } from './support/built-tree.js';
import { actorloop } from './support/cli-process.js';
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
  return { text: `echo: ${step.lastUser} (turn ${step.turn})` };
}

beforeAll(async () => {
  wire = await startPlannedWireServer(plan);
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

  it("answers a usage error with the CLI's usage exit code, 1 (2 means a halted run), saying what is wrong", async () => {
    const { code, stderr, stdout } = await actorloop(['mcp', 'extra-argument']);
    expect(code).toBe(1);
    expect(stderr).toMatch(/mcp takes no arguments, got "extra-argument"\nusage: actorloop mcp/);
    expect(stdout).toBe('');
  });
});
