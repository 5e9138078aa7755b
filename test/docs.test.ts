/**
 * The documentation stays true: the README's quick start type-checks and runs (against a local
 * replay server, through the real `openai` SDK), every `ts` block that starts with an `import`
 * type-checks against the source, and every relative link, anchor, `npm run` script and example
 * the docs name exists — as does every docs section a test cites.
 *
 * A block may be a fragment: names it uses without defining them (`machine`, `actor`, a `pool`)
 * are the reader's own and are not reported. Everything it imports, and every call and option on
 * what it imports, must exist with the types used.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { startReplayServer } from '../examples/support/replay-server.js';
import pkg from '../package.json' with { type: 'json' };
import { entryPoints } from '../scripts/entry-points.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** The Markdown files a user or contributor reads. */
const documents = [
  'README.md',
  'CONTRIBUTING.md',
  'CHANGELOG.md',
  'examples/README.md',
  'bench/README.md',
  'visualizations/README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((file) => file.endsWith('.md'))
    .map((file) => `docs/${file}`),
];

type CodeBlock = { file: string; line: number; language: string; code: string };

function codeBlocks(file: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = read(file).split('\n');
  for (let index = 0; index < lines.length; index++) {
    const open = /^```(\w*)\s*$/.exec(lines[index] ?? '');
    if (!open) continue;
    const start = index;
    const body: string[] = [];
    for (index++; index < lines.length && !/^```\s*$/.test(lines[index] ?? ''); index++) body.push(lines[index] ?? '');
    blocks.push({ file, line: start + 1, language: open[1] ?? '', code: `${body.join('\n')}\n` });
  }
  return blocks;
}

const exists = (file: string) => {
  try {
    readFileSync(join(root, file));
    return true;
  } catch {
    return false;
  }
};

/** The text outside fenced code blocks. */
function prose(file: string): string {
  return read(file).replace(/^```[\s\S]*?^```\s*$/gm, '');
}

/** Whether a Markdown file has a heading that is, or starts with, `title` ("Tracing" matches "Tracing (`actorloop/otel`)"). */
function hasHeading(file: string, title: string): boolean {
  const escaped = title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^#{1,6} ${escaped}(\\s|$)`, 'm').test(prose(file));
}

/** `actorloop` and each subpath export resolved to its source, as the package's `exports` map them to dist. */
function sourcePaths(): Record<string, string[]> {
  return Object.fromEntries(entryPoints(pkg.exports).map(({ specifier, source }) => [specifier, [join(root, source)]]));
}

/**
 * Diagnostics a fragment produces for names its reader defines elsewhere: cannot find name, no
 * value for a shorthand property, and the implicit `any` of a callback passed to such a name.
 */
const undefinedNameCodes = new Set([2304, 2552, 18004, 7006, 7031]);

/** GitHub's anchor for each heading of a Markdown file. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  for (const match of prose(file).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = (match[1] ?? '')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    let anchor = base;
    for (let suffix = 1; anchors.has(anchor); suffix++) anchor = `${base}-${suffix}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The TypeScript blocks that are whole modules: the ones starting with an `import`. */
function checkedBlocks(): CodeBlock[] {
  return documents.flatMap((file) => codeBlocks(file)).filter((block) => block.language === 'ts' && /^import\s/.test(block.code));
}

describe('docs', () => {
  it('the README quick start runs as written, through the real openai SDK against a local replay server', { timeout: 60_000 }, async () => {
    const quickStart = codeBlocks('README.md').find((block) => block.language === 'ts');
    expect(quickStart?.code).toContain('openaiProvider(');
    const server = await startReplayServer(({ toolResults }) =>
      toolResults.length === 0 ? { toolCalls: [{ name: 'add', args: { a: 2, b: 3 } }] } : { text: `2 + 3 = ${toolResults[0]}.` },
    );
    try {
      const { stdout } = await promisify(execFile)(
        join(root, 'node_modules/.bin/tsx'),
        ['--input-type=module', '-e', quickStart?.code ?? ''],
        // The SDK reads its key and base URL from the environment, as the quick start says.
        { cwd: root, env: { ...process.env, OPENAI_API_KEY: 'offline-test', OPENAI_BASE_URL: server.openaiBaseURL }, timeout: 50_000 },
      );
      expect(stdout).toContain('→ add({"a":2,"b":3})');
      expect(stdout).toContain('2 + 3 = 5.\ndone: 2 + 3 = 5.');
      expect(server.requests()).toBe(2);
    } finally {
      await server.close();
    }
  });

  it('the README quick start without a key prints why the run failed and what to set', { timeout: 60_000 }, async () => {
    const quickStart = codeBlocks('README.md').find((block) => block.language === 'ts');
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.OPENAI_API_KEY;
    delete env.OPENAI_BASE_URL;
    const { stdout } = await promisify(execFile)(
      join(root, 'node_modules/.bin/tsx'),
      ['--input-type=module', '-e', quickStart?.code ?? ''],
      {
        cwd: root,
        env,
        timeout: 50_000,
      },
    );
    expect(stdout).toContain('\nerror: openaiProvider has no API key: set OPENAI_API_KEY or pass `apiKey`');
  });

  it('every ts block that starts with an import type-checks against the source', { timeout: 120_000 }, () => {
    const blocks = checkedBlocks();
    expect(blocks.map((block) => block.file)).toEqual(expect.arrayContaining(['README.md', 'docs/tools.md', 'docs/providers.md']));
    const configFile = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
    const config = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
    // Virtual files inside the repository, so `actorloop` and the dependencies resolve as in the examples.
    const virtual = new Map(blocks.map((block, index) => [join(root, 'docs', `__block-${index}.ts`), block]));
    const host = ts.createCompilerHost(config.options);
    const { getSourceFile, fileExists, readFile } = host;
    host.fileExists = (file) => virtual.has(file) || fileExists.call(host, file);
    host.readFile = (file) => virtual.get(file)?.code ?? readFile.call(host, file);
    host.getSourceFile = (file, language, ...rest) => {
      const block = virtual.get(file);
      return block ? ts.createSourceFile(file, block.code, language) : getSourceFile.call(host, file, language, ...rest);
    };
    const options = { ...config.options, noEmit: true, paths: { ...config.options.paths, ...sourcePaths() } };
    const program = ts.createProgram([...virtual.keys()], options, host);
    const problems = ts.getPreEmitDiagnostics(program).flatMap((diagnostic) => {
      const block = diagnostic.file && virtual.get(diagnostic.file.fileName);
      if (!block || diagnostic.file === undefined || diagnostic.start === undefined) return [];
      if (undefinedNameCodes.has(diagnostic.code)) return [];
      const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
      return [`${block.file}:${block.line + 1 + line}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`];
    });
    expect(problems).toEqual([]);
  });

  it('every relative link and anchor points at something that exists', () => {
    const broken: string[] = [];
    for (const file of documents) {
      for (const match of prose(file).matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = match[1] ?? '';
        if (/^[a-z]+:/.test(target)) continue;
        const [path = '', anchor] = target.split('#');
        const resolved = path === '' ? join(root, file) : resolve(dirname(join(root, file)), path);
        let exists = true;
        try {
          readdirSync(resolved);
        } catch {
          try {
            readFileSync(resolved);
          } catch {
            exists = false;
          }
        }
        if (!exists) broken.push(`${file}: ${target} (no such file)`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !anchorsOf(relative(root, resolved)).has(anchor)) {
          broken.push(`${file}: ${target} (no heading with that anchor)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('every npm script and example the docs name exists', () => {
    // A file `examples/<name>.ts`, or a folder `examples/<name>/` with its `main.ts`.
    const examples = new Set(
      readdirSync(join(root, 'examples'))
        .filter((file) => file.endsWith('.ts') || exists(`examples/${file}/main.ts`))
        .map((file) => file.replace(/\.ts$/, '')),
    );
    const missing: string[] = [];
    for (const file of documents) {
      const text = read(file);
      for (const match of text.matchAll(/npm run ([\w:-]*\w)/g)) {
        const script = match[1] ?? '';
        if (!(script in pkg.scripts)) missing.push(`${file}: npm run ${script}`);
      }
      for (const match of text.matchAll(/(?:npm run example -- |tsx examples\/)([\w-]+)/g)) {
        if (!examples.has(match[1] ?? '')) missing.push(`${file}: example ${match[1]}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('every docs item and section a test cites exists', () => {
    const testFiles = readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.ts'));
    const missing: string[] = [];
    const cited = new Set<string>();
    for (const testFile of testFiles) {
      const text = read(join('test', testFile));
      for (const match of text.matchAll(/(docs\/[\w-]+\.md) items? ([\d/, and]+)/g)) {
        const file = match[1] ?? '';
        for (const item of (match[2] ?? '').match(/\d+/g) ?? []) {
          cited.add(`${file} item ${item}`);
          if (!exists(file)) missing.push(`test/${testFile}: ${file} (no such file)`);
          else if (!new RegExp(`^${item}\\. `, 'm').test(prose(file))) missing.push(`test/${testFile}: ${file} item ${item}`);
        }
      }
      for (const match of text.matchAll(/(README|docs\/[\w-]+\.md) "([^"]+)"/g)) {
        const file = match[1] === 'README' ? 'README.md' : (match[1] ?? '');
        cited.add(`${file} "${match[2]}"`);
        if (!exists(file)) missing.push(`test/${testFile}: ${file} (no such file)`);
        else if (!hasHeading(file, match[2] ?? '')) missing.push(`test/${testFile}: ${file} "${match[2]}"`);
      }
    }
    for (const testFile of testFiles) {
      for (const match of read(join('test', testFile)).matchAll(/\b(docs\/[\w-]+\.md)\b/g)) {
        if (!exists(match[1] ?? '')) missing.push(`test/${testFile}: ${match[1]} (no such file)`);
      }
    }
    expect(cited.size).toBeGreaterThan(0);
    expect([...new Set(missing)]).toEqual([]);
  });
});
