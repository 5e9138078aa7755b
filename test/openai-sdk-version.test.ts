import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import { unsupportedOpenaiProblem } from '../src/providers/openai/openai-sdk-version.js';
import latest from './support/latest-majors.json' with { type: 'json' };

/**
 * Which `openai` the OpenAI suites run against: the pinned dev copy under `npm test`; the newest
 * major when `.ci/run` installed it over that copy (Node 24 pass: ACTORLOOP_OPENAI=latest); the
 * floor of the peer range under `npm run test:floor` (the `floor` project of vitest.config.ts aliases the SDK to
 * `openai-floor`).
 */
describe('the openai SDK under test', () => {
  it('is the version this run is meant to prove', async () => {
    const { VERSION } = (await import('openai/version')) as { VERSION: string };
    const floor = (createRequire(import.meta.url)('openai-floor/version') as { VERSION: string }).VERSION;
    if (process.env.XSTATE_FLOOR === '1') expect(VERSION).toBe(floor);
    else if (process.env.ACTORLOOP_OPENAI === 'latest') expect(VERSION).toBe(latest.openai);
    else expect(VERSION).toBe(pkg.devDependencies.openai);
    // The peer range starts at the floor and admits every major tested.
    expect(pkg.peerDependencies.openai).toBe(`^${floor} || ^6.0.0 || ^7.0.0`);
    expect(latest.openai.split('.')[0]).toBe('7');
  });
});

describe('an openai older than the providers support', () => {
  it('is named with the fix; 5.11 and every later major pass', () => {
    expect(unsupportedOpenaiProblem('4.104.0')).toBe(
      'openaiProvider needs openai 5.11.0 or newer (5.11+, 6 or 7), and the installed openai is 4.104.0: npm install openai@latest',
    );
    expect(unsupportedOpenaiProblem('5.10.2')).toContain('the installed openai is 5.10.2');
    for (const version of ['5.11.0', '5.23.2', '6.0.0', '6.49.0', '7.60.0', '8.0.0-beta.1'])
      expect(unsupportedOpenaiProblem(version)).toBeUndefined();
  });

  // A project of its own: actorloop's sources, this project's packages, and a stand-in openai 4
  // whose code throws if it is ever loaded — the version is read, the SDK is not.
  const project = mkdtempSync(join(tmpdir(), 'actorloop-openai4-'));
  afterAll(() => rmSync(project, { recursive: true, force: true }));

  it('is refused when openaiProvider is created, before any request, on both APIs; a client passed in is the caller’s', () => {
    cpSync(join(import.meta.dirname, '..', 'src'), join(project, 'src'), { recursive: true });
    writeFileSync(join(project, 'package.json'), JSON.stringify({ type: 'module' }));
    const modules = join(import.meta.dirname, '..', 'node_modules');
    mkdirSync(join(project, 'node_modules'));
    for (const entry of readdirSync(modules)) {
      if (entry !== 'openai' && !entry.startsWith('.')) symlinkSync(join(modules, entry), join(project, 'node_modules', entry));
    }
    const sdk = join(project, 'node_modules', 'openai');
    mkdirSync(sdk);
    writeFileSync(
      join(sdk, 'package.json'),
      JSON.stringify({ name: 'openai', version: '4.104.0', main: 'index.js', exports: { '.': './index.js', './version': './version.js' } }),
    );
    writeFileSync(join(sdk, 'index.js'), "throw new Error('the stand-in openai was loaded');\n");
    writeFileSync(join(sdk, 'version.js'), "exports.VERSION = '4.104.0';\n");
    writeFileSync(
      join(project, 'create.ts'),
      `import { openaiProvider } from './src/index.ts';
       const outcome = (create: () => unknown) => { try { create(); return 'created'; } catch (error) { return \`\${error.name}: \${error.message}\`; } };
       console.log(JSON.stringify({
         chat: outcome(() => openaiProvider({ model: 'm', apiKey: 'k' })),
         responses: outcome(() => openaiProvider({ model: 'm', apiKey: 'k', api: 'responses' })),
         client: outcome(() => openaiProvider({ model: 'm', client: { chat: { completions: { create: async () => ({}) } } } as never })),
       }));`,
    );
    const printed = execFileSync(join(modules, '.bin', 'tsx'), [join(project, 'create.ts')], { cwd: project, encoding: 'utf8' });
    const refused =
      'ProviderError: openaiProvider needs openai 5.11.0 or newer (5.11+, 6 or 7), and the installed openai is 4.104.0: npm install openai@latest';
    expect(JSON.parse(printed.trim())).toEqual({ chat: refused, responses: refused, client: 'created' });
  });
});
