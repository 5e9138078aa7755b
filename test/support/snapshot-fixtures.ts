/**
 * What the versioned-snapshot fixtures (test/fixtures/snapshots/v1/) were written with and what the
 * tests that load them need again: the conversation ids, the tools (same names, same parameters,
 * same `idempotent` and `needsApproval`) and the scripted model of the Chat Completions runs.
 * scripts/write-snapshot-fixtures.ts writes the fixtures; test/snapshot-versions.test.ts reads them.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineTool, type Tool } from '../../src/index.js';
import type { ChunkHandler } from '../../src/providers/handler/handler-provider.js';
import { turnChunks } from './scripted-model.js';

export const fixturesRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/snapshots');

/** Where the fixtures of one schema version are: the folder is named after the version they hold. */
export const fixtureDirOf = (version: number) => path.join(fixturesRoot, `v${version}`);
export const fixtureDatabaseOf = (version: number) => path.join(fixtureDirOf(version), 'conversations.db');
export const fixtureSnapshotOf = (version: number, id: FixtureId) => path.join(fixtureDirOf(version), `${id}.snapshot.json`);

export const fixtureIds = ['finished', 'awaiting-approval', 'mid-tool', 'anthropic-thinking', 'responses-reasoning'] as const;
export type FixtureId = (typeof fixtureIds)[number];

/** The first user message of each Chat Completions fixture: the scripted model answers by it. */
export const prompts = {
  finished: 'What is 2 + 3?',
  'awaiting-approval': 'Add 1 + 1 and pay 42.',
  'mid-tool': 'Add 4 + 5, look up k1 and charge 100.',
} as const;

export const anthropicSignature = 'EqQBCkYIBxgCKkCs+/fixtureSig==';
export const anthropicRedacted = 'EmwKAhgBEgy3va/fixtureRedacted==';
export const responsesEncrypted = 'gAAAAABfixture-encrypted-reasoning';

/** What a tool does when called: the generator hangs `lookup` and `charge`, the tests count calls. */
export type ToolRunner = (name: string, args: unknown, toolCallId: string) => unknown;

/** The tools every fixture run had: `lookup` is idempotent, `charge` is not, `transfer` needs approval. */
export function fixtureTools(run: ToolRunner): Array<Tool<never, unknown>> {
  const number = z.object({ a: z.number(), b: z.number() });
  return [
    defineTool({ name: 'add', parameters: number, execute: (args, { toolCallId }) => run('add', args, toolCallId) }),
    defineTool({
      name: 'lookup',
      parameters: z.object({ key: z.string() }),
      idempotent: true,
      execute: (args, { toolCallId }) => run('lookup', args, toolCallId),
    }),
    defineTool({
      name: 'charge',
      parameters: z.object({ cents: z.number() }),
      execute: (args, { toolCallId }) => run('charge', args, toolCallId),
    }),
    defineTool({
      name: 'transfer',
      parameters: z.object({ cents: z.number() }),
      needsApproval: true,
      execute: (args, { toolCallId }) => run('transfer', args, toolCallId),
    }),
    defineTool({
      name: 'weather',
      parameters: z.object({ city: z.string() }),
      execute: (args, { toolCallId }) => run('weather', args, toolCallId),
    }),
  ] as Array<Tool<never, unknown>>;
}

/**
 * The Chat Completions model of the fixture runs: the first answer of a run calls the tools its
 * prompt names, the next answers in text. Later turns (what the tests send) get `reply <n>`.
 */
export const fixtureModel: ChunkHandler = (request) => {
  const users = request.messages.filter((message) => message.role === 'user');
  const first = users[0]?.content;
  const last = request.messages.at(-1);
  if (users.length > 1) return turnChunks({ text: `reply ${users.length}` });
  if (last?.role === 'tool') return turnChunks({ text: `done: ${request.messages.filter((m) => m.role === 'tool').length} results` });
  if (first === prompts.finished) return turnChunks({ toolCalls: [{ id: 'call-add-1', name: 'add', args: { a: 2, b: 3 } }] });
  if (first === prompts['awaiting-approval']) {
    return turnChunks({
      toolCalls: [
        { id: 'call-add-2', name: 'add', args: { a: 1, b: 1 } },
        { id: 'call-transfer-1', name: 'transfer', args: { cents: 4200 } },
      ],
    });
  }
  if (first === prompts['mid-tool']) {
    return turnChunks({
      toolCalls: [
        { id: 'call-add-3', name: 'add', args: { a: 4, b: 5 } },
        { id: 'call-lookup-1', name: 'lookup', args: { key: 'k1' } },
        { id: 'call-charge-1', name: 'charge', args: { cents: 100 } },
      ],
    });
  }
  return turnChunks({ text: 'unexpected request' });
};
