/**
 * The package as a user installs it (README "Install"): `npm pack`, then the tarball installed into
 * a fresh project that has only the required peers — no provider SDK, no zod — where the README
 * quick start must import, type-check with `strict` and `skipLibCheck: false`, and run. Repeated
 * with the oldest xstate of the peer range.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };

const root = join(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'actorloop-pack-'));
let tarball = '';

/** Runs a command; on failure the error carries what it printed (tsc reports on stdout). */
function run(command: string, args: string[], cwd: string): string {
  try {
    return execFileSync(command, args, {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, npm_config_loglevel: 'error' },
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}\n${stderr ?? ''}`);
  }
}

/**
 * A fresh project with the tarball and the given xstate installed (from the npm cache when it can),
 * and `source` (a file of test/packaging) as its one program; `extra` packages are installed too;
 * `lib` is the program's TypeScript lib.
 */
function project(name: string, xstateVersion: string, source = 'quick-start.ts', extra: string[] = [], lib = ['ES2023']): string {
  const directory = join(work, name);
  mkdirSync(directory);
  writeFileSync(join(directory, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  writeFileSync(
    join(directory, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: false,
        noEmit: true,
        types: ['node'],
      },
      include: [source],
    }),
  );
  writeFileSync(join(directory, source), readFileSync(join(root, 'test/packaging', source), 'utf8'));
  run(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      tarball,
      `xstate@${xstateVersion}`,
      `@types/node@${pkg.devDependencies['@types/node']}`,
      `typescript@${pkg.devDependencies.typescript}`,
      ...extra,
    ],
    directory,
  );
  return directory;
}

/** The project's program compiled by its own TypeScript, then run as JavaScript. */
function check(directory: string, source = 'quick-start.ts') {
  run(join(directory, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json'], directory);
  // The same source with its types stripped by TypeScript itself, run by plain Node (no tsx).
  run(join(directory, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json', '--noEmit', 'false', '--outDir', 'out'], directory);
  return JSON.parse(run(process.execPath, [`out/${source.replace(/\.ts$/, '.js')}`], directory)) as Record<string, unknown>;
}

beforeAll(() => {
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], root)) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  tarball = join(work, packed[0]!.filename);
  packedFiles = packed[0]!.files.map((file) => file.path);
}, 120_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));
let packedFiles: string[] = [];

describe('the packed package in a fresh project', () => {
  it('ships the build, its sources for the declaration maps, the licence and the changelog, and no tests', () => {
    for (const file of [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/index.d.ts.map',
      'src/index.ts',
      'LICENSE',
      'CHANGELOG.md',
      'README.md',
    ]) {
      expect(packedFiles).toContain(file);
    }
    expect(packedFiles.filter((file) => file.startsWith('test/') || file.startsWith('bench/'))).toEqual([]);
  });

  it('declares xstate a peer with a range and needs no provider SDK or zod at run time', () => {
    expect(pkg.peerDependencies.xstate).toMatch(/^\^5\.\d+\.\d+$/);
    expect(Object.keys(pkg.dependencies)).toEqual(['ajv']);
    expect(pkg.peerDependenciesMeta).toMatchObject({
      openai: { optional: true },
      '@anthropic-ai/sdk': { optional: true },
      'better-sqlite3': { optional: true },
      '@modelcontextprotocol/sdk': { optional: true },
      '@restatedev/restate-sdk': { optional: true },
      '@restatedev/restate-sdk-clients': { optional: true },
    });
  });

  for (const [name, version] of [
    ['current xstate', pkg.devDependencies.xstate],
    ['oldest supported xstate', pkg.peerDependencies.xstate.slice(1)],
  ] as const) {
    it(`imports, type-checks (strict, skipLibCheck: false) and runs the quick start with ${name} (${version})`, () => {
      const directory = project(name.replaceAll(' ', '-'), version);
      const installed = JSON.parse(readFileSync(join(directory, 'node_modules/xstate/package.json'), 'utf8')) as { version: string };
      expect(installed.version).toBe(version);
      for (const absent of [
        'openai',
        '@anthropic-ai/sdk',
        'zod',
        'better-sqlite3',
        '@restatedev/restate-sdk',
        '@restatedev/restate-sdk-clients',
      ]) {
        expect(() => readFileSync(join(directory, 'node_modules', absent, 'package.json'))).toThrow();
      }
      // One xstate in the tree: the package uses the project's own copy.
      expect(() => readFileSync(join(directory, 'node_modules/actorloop/node_modules/xstate/package.json'))).toThrow();
      // The command a user gets with the package: offline, no key, no network.
      const { OPENAI_API_KEY: _openai, ANTHROPIC_API_KEY: _anthropic, ...env } = process.env;
      const answer = execFileSync('npx', ['--no-install', 'actorloop', 'run', 'what is 17*23?'], {
        cwd: directory,
        encoding: 'utf8',
        env: { ...env, ACTORLOOP_OFFLINE_DELAY_MS: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      expect(answer).toBe('17*23 = 391\n');
      expect(check(directory)).toEqual({
        status: 'done',
        text: 'It is 5.',
        deltas: ['It is 5.'],
        results: ['5'],
        value: 'done',
        messages: 4,
        host: 'done',
        hostView: 'done',
        sqlite: 'driver_missing',
      });
      // actorloop/mcp loads without the MCP SDK too, and says what to install when it is used.
      const missing = run(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          "import('actorloop/mcp').then((m) => m.mcpTools({ command: 'x' })).catch((e) => console.log(e.message))",
        ],
        directory,
      );
      expect(missing).toMatch(
        /^actorloop\/mcp needs the MCP SDK, an optional peer dependency of actorloop: npm install @modelcontextprotocol\/sdk/,
      );
    }, 180_000);
  }

  it('actorloop/rx and actorloop/inspect import, type-check and run with their optional peers (rxjs, elkjs), @statelyai/inspect absent', () => {
    const directory = project('observe', pkg.devDependencies.xstate, 'observe.ts', [
      `rxjs@${pkg.devDependencies.rxjs}`,
      `elkjs@${pkg.devDependencies.elkjs}`,
    ]);
    expect(() => readFileSync(join(directory, 'node_modules/@statelyai/inspect/package.json'))).toThrow();
    expect(check(directory, 'observe.ts')).toEqual({
      states: ['idle', 'requesting', 'done'],
      text: 'Hello there.',
      tools: 0,
      status: 'done',
      viewer: { runs: ['r1'], chart: true },
      statelyMissing: 'MissingDependencyError @statelyai/inspect',
    });
  }, 180_000);

  it('actorloop/mcp with the MCP SDK installed: type-checks (strict, skipLibCheck: false) and runs a tool from a stdio MCP server', () => {
    const directory = project(
      'with-mcp-sdk',
      pkg.devDependencies.xstate,
      'mcp-check.ts',
      [`@modelcontextprotocol/sdk@${pkg.devDependencies['@modelcontextprotocol/sdk']}`, `zod@${pkg.devDependencies.zod}`],
      // The SDK's own declarations use the DOM lib's fetch types (HeadersInit); actorloop's do not.
      ['ES2023', 'DOM'],
    );
    writeFileSync(join(directory, 'mcp-server.mjs'), readFileSync(join(root, 'test/packaging/mcp-server.mjs'), 'utf8'));
    expect(check(directory, 'mcp-check.ts')).toEqual({
      tools: ['calc_add'],
      status: 'done',
      text: 'It is 5.',
      results: ['5'],
      isError: false,
    });
  }, 300_000);

  it('actorloop/restate with the Restate SDK installed: type-checks (strict, skipLibCheck: false), builds the object and serves it', () => {
    const directory = project('with-restate-sdk', pkg.devDependencies.xstate, 'restate-check.ts', [
      `@restatedev/restate-sdk@${pkg.devDependencies['@restatedev/restate-sdk']}`,
    ]);
    // A worker needs no clients package; on Node 20 the SDK's Promise.withResolvers is the subpath's polyfill.
    expect(() => readFileSync(join(directory, 'node_modules/@restatedev/restate-sdk-clients/package.json'))).toThrow();
    expect(check(directory, 'restate-check.ts')).toEqual({ name: 'chat', withResolvers: 'function' });
  }, 300_000);

  it('actorloop/restate/client with only the clients package installed: type-checks and loads without the Restate SDK', () => {
    const directory = project('with-restate-clients', pkg.devDependencies.xstate, 'restate-client-check.ts', [
      `@restatedev/restate-sdk-clients@${pkg.devDependencies['@restatedev/restate-sdk-clients']}`,
    ]);
    expect(() => readFileSync(join(directory, 'node_modules/@restatedev/restate-sdk/package.json'))).toThrow();
    expect(check(directory, 'restate-client-check.ts')).toEqual({ failed: 'rejected', invalid: 'InvalidOptionsError' });
  }, 300_000);
});

describe('the root entry point', () => {
  it('declares no type from an optional library: the d.ts files it reaches never name @modelcontextprotocol/sdk, openai or @anthropic-ai/sdk', () => {
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      // TSDoc examples may import anything; the declarations themselves may not.
      const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');
      expect(text, file).not.toMatch(/(?:from |import\()['"](?:@modelcontextprotocol\/sdk|openai|@anthropic-ai\/sdk)/);
      for (const [, specifier] of text.matchAll(/(?:from |import\()['"](\.[^'"]+)['"]/g)) {
        visit(join(dirname(file), specifier!.replace(/\.js$/, '.d.ts')));
      }
    };
    visit(join(root, 'dist/index.d.ts'));
    expect(seen.size).toBeGreaterThan(10);
  });
});
