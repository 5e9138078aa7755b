/**
 * The parts that need Node refuse other runtimes by name, and the rest takes nothing from Node at
 * load time. Here the other runtimes are worn as disguises — the globals each one is known by
 * (`Bun`, `Deno`, workerd's user agent) set on this Node process — so every refusal is checked
 * where it is thrown; test/runtimes.test.ts checks the real runtimes end to end, and the CLI below
 * is started by the real Bun and Deno.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { UnsupportedRuntimeError } from '../src/index.js';
import { defaultHostId } from '../src/host/host-id.js';
import { createNodeFetch } from '../src/providers/transport/node-fetch.js';
import { restateConversations } from '../src/scale/restate/conversation-object.js';
import { sqliteStore } from '../src/stores/sqlite/sqlite-store.js';
import { mcpTools } from '../src/tools/mcp/mcp-tools.js';
import { environmentVariable, nodeBuiltin, runtimeName } from '../src/util/runtime.js';
import { utf8Length } from '../src/util/utf8-length.js';
import { builtCli } from './support/built-tree.js';
import { root } from './support/cli-process.js';
import { runtimeBinary } from './support/runtime-binaries.js';

const disguises = {
  bun: { key: 'Bun', value: { version: '1.4.5' }, label: 'Bun' },
  deno: { key: 'Deno', value: { version: { deno: '2.9.6' } }, label: 'Deno' },
  workerd: { key: 'navigator', value: { userAgent: 'Cloudflare-Workers' }, label: 'Cloudflare workerd' },
} as const;
type Disguise = keyof typeof disguises;

const saved = new Map<string, PropertyDescriptor | undefined>();
function wear(runtime: Disguise): void {
  const { key, value } = disguises[runtime];
  saved.set(key, Object.getOwnPropertyDescriptor(globalThis, key));
  Object.defineProperty(globalThis, key, { value, configurable: true, writable: true });
}
afterEach(() => {
  for (const [key, descriptor] of saved) {
    if (descriptor) Object.defineProperty(globalThis, key, descriptor);
    else delete (globalThis as Record<string, unknown>)[key];
  }
  saved.clear();
});

function refusal(run: () => unknown): UnsupportedRuntimeError {
  try {
    run();
  } catch (error) {
    if (UnsupportedRuntimeError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an UnsupportedRuntimeError');
}

describe('runtimeName', () => {
  it('is node here, and tells each other runtime by its globals', () => {
    expect(runtimeName()).toBe('node');
    for (const runtime of Object.keys(disguises) as Disguise[]) {
      wear(runtime);
      expect(runtimeName()).toBe(runtime);
      for (const [key, descriptor] of saved) {
        if (descriptor) Object.defineProperty(globalThis, key, descriptor);
        else delete (globalThis as Record<string, unknown>)[key];
      }
      saved.clear();
    }
  });

  it('a Node built-in comes through process.getBuiltinModule; an unknown one is undefined, not thrown', () => {
    expect(nodeBuiltin<typeof import('node:os')>('node:os')?.hostname()).toEqual(expect.any(String));
    expect(nodeBuiltin('node:no-such-module')).toBeUndefined();
  });

  it("the host's default id is host name, process id and a random part", () => {
    expect(defaultHostId()).toMatch(/^[^:]+:\d+:[0-9a-f]{8}$/);
    expect(defaultHostId()).not.toBe(defaultHostId());
  });
});

describe("without Node's globals (workerd without nodejs_compat)", () => {
  /** Runs `check` with `names` gone from the global object, restoring them after. */
  function without(names: string[], check: () => void): void {
    const kept = names.map((name) => [name, Object.getOwnPropertyDescriptor(globalThis, name)] as const);
    for (const name of names) delete (globalThis as Record<string, unknown>)[name];
    try {
      check();
    } finally {
      for (const [name, descriptor] of kept) if (descriptor) Object.defineProperty(globalThis, name, descriptor);
    }
  }

  it('utf8Length counts as Buffer.byteLength does, lone surrogates included, when there is no Buffer', () => {
    const texts = fc.sample(fc.string({ unit: 'binary', maxLength: 40 }), { numRuns: 2_000, seed: 47 });
    texts.push('', 'é', '€', '😀', '\ud83d', '\ude00x', 'a\ud83d\ude00b');
    const expected = texts.map((text) => Buffer.byteLength(text, 'utf8'));
    let counted: number[] = [];
    without(['Buffer'], () => {
      counted = texts.map(utf8Length);
    });
    expect(counted).toEqual(expected);
  });

  it('an environment variable is undefined where there is no process, not a ReferenceError', () => {
    expect(environmentVariable('PATH')).toBe(process.env.PATH);
    without(['process'], () => {
      expect(environmentVariable('PATH')).toBeUndefined();
      expect(nodeBuiltin('node:os')).toBeUndefined();
    });
  });
});

describe.each(Object.keys(disguises) as Disguise[])('dressed as %s', (runtime) => {
  const { label } = disguises[runtime];

  it('sqliteStore refuses, naming the runtime and the alternatives', () => {
    wear(runtime);
    const error = refusal(() => sqliteStore({ path: join(root, 'never.db') }));
    expect(error).toMatchObject({ runtime, feature: 'actorloop/sqlite', name: 'UnsupportedRuntimeError' });
    expect(error.message).toBe(
      `actorloop/sqlite needs Node.js (≥ 20.19) and cannot run on ${label}: use memoryStore() from actorloop, a ConversationStore of your own, or actorloop/postgres from a Node.js process`,
    );
  });

  it('the Restate endpoint refuses; the client is named as what runs there', () => {
    wear(runtime);
    const error = refusal(() => restateConversations({ machine: undefined as never }));
    expect(error.message).toContain(`actorloop/restate needs Node.js (≥ 20.19) and cannot run on ${label}`);
    expect(error.message).toContain('actorloop/restate/client');
  });

  it('an MCP server over stdio is refused when the tools are asked for; streamable HTTP is named', async () => {
    wear(runtime);
    const error = await mcpTools({ command: 'node', args: ['server.js'] }).then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(UnsupportedRuntimeError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(`An MCP server over stdio needs Node.js (≥ 20.19) and cannot run on ${label}`);
    expect((error as Error).message).toContain('streamable HTTP');
  });

  it("createNodeFetch refuses, pointing to the runtime's own fetch", () => {
    wear(runtime);
    expect(refusal(() => createNodeFetch()).message).toContain("pass no fetch: the providers then use the runtime's own fetch");
  });
});

describe('the CLI under another runtime', () => {
  const runtimes = {
    Bun: [runtimeBinary('bun')],
    Deno: [runtimeBinary('deno'), 'run', '--allow-all', '--no-prompt'],
  };
  it.each(Object.entries(runtimes))('%s: stops at once, saying it needs Node', (label, [binary = '', ...args]) => {
    const result = spawnSync(binary, [...args, builtCli(), 'run', 'hello'], { cwd: root, encoding: 'utf8', timeout: 60_000 });
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain(`actorloop: the actorloop CLI needs Node.js (≥ 20.19) and cannot run on ${label}`);
  });
});
