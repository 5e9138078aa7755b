import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { cacheFolder } from './cache-folder.js';

const root = join(import.meta.dirname, '..', '..');

/** The folders compiled: the package's sources and the test helpers that run as processes. */
const compiled = ['src', 'test/support'];

const settings = ['package.json', 'tsconfig.json', 'tsconfig.build.json'];

/** Every file the build depends on: those of the compiled folders and the settings it is built with. */
function inputs(): string[] {
  const files: string[] = [];
  const visit = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) visit(path);
      else files.push(path);
    }
  };
  for (const folder of compiled) visit(join(root, folder));
  return [...files, ...settings.map((file) => join(root, file))];
}

/** The last hash a process computed, with the files' sizes and times it was computed from: hashing is read again only when they change. */
let known: { stamp: string; hash: string } | undefined;

/** The build's name: a hash of every input's path and bytes. */
function sourceHash(): string {
  const files = inputs();
  const stamp = files
    .map((path) => {
      const { size, mtimeMs } = statSync(path);
      return `${path}:${size}:${mtimeMs}`;
    })
    .join('\n');
  if (known?.stamp === stamp) return known.hash;
  const hash = createHash('sha256');
  for (const path of files) hash.update(relative(root, path)).update('\0').update(readFileSync(path)).update('\0');
  known = { stamp, hash: hash.digest('hex').slice(0, 16) };
  return known.hash;
}

/** A build is kept a day after it was made, so a run still using one never loses it; older ones go. */
const keptMs = 24 * 60 * 60 * 1000;

/**
 * `src/` and `test/support/` compiled as `npm run build` compiles the package (TypeScript 7, the
 * settings of `tsconfig.json`, no declarations), once per state of those folders, into
 * `node_modules/.cache/actorloop-build/<hash>/`, with `package.json` at its top as in the package —
 * so what reads it relative to its own file (the CLI's `--version`) finds it.
 *
 * The suites that run the `actorloop` command or a helper of theirs as a process run this build:
 * JavaScript that Node loads as it loads a user's install, where `node --import tsx` would compile
 * the sources again in every process — about 0.6 s of CPU each, a minute and more across the
 * suite's few hundred processes. Always current: an edit to those folders is a new hash, so a new build.
 */
export function builtTree(): string {
  const marker = cacheFolder('actorloop-build', sourceHash(), 'package.json', (folder) => {
    const config = join(folder, 'tsconfig.json');
    writeFileSync(
      config,
      JSON.stringify({
        extends: join(root, 'tsconfig.json'),
        compilerOptions: { noEmit: false, rootDir: root, outDir: folder, declaration: false, sourceMap: false },
        include: compiled.map((path) => join(root, path)),
        exclude: [],
      }),
    );
    try {
      execFileSync(process.execPath, [join(root, 'node_modules/typescript-7/bin/tsc'), '-p', config], { cwd: root, encoding: 'utf8' });
    } catch (error) {
      // tsc reports type errors on stdout.
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(
        `src/ and test/support/ did not compile, so the suites cannot run them as processes:\n${stdout ?? ''}${stderr ?? ''}`,
      );
    }
    rmSync(config);
    copyFileSync(join(root, 'package.json'), join(folder, 'package.json'));
  });
  const folder = dirname(marker);
  const builds = dirname(folder);
  for (const other of readdirSync(builds)) {
    const path = join(builds, other);
    if (path !== folder && Date.now() - statSync(path).mtimeMs > keptMs) rmSync(path, { recursive: true, force: true });
  }
  return folder;
}

/** The built `actorloop` command: `node <this> run …`. */
export const builtCli = (): string => join(builtTree(), 'src/cli/main.js');

/**
 * A helper of `test/support/` as built JavaScript, to run as `node <this> …args`.
 *
 * @example
 * ```ts
 * spawn(process.execPath, [supportScript('crash-worker.ts'), database]);
 * ```
 */
export const supportScript = (name: `${string}.ts`): string => join(builtTree(), 'test/support', name.replace(/\.ts$/, '.js'));
