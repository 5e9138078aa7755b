import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findImportCircles, findLayerProblems, importsOf, layerOf } from '../scripts/layers.js';

describe('layer direction check (docs/architecture.md)', () => {
  it('finds static, type-only, re-export and dynamic imports with their lines', () => {
    const source = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "export { c } from './c.js';",
      "const d = await import('./d.js');",
      "import './side-effect.js';",
    ].join('\n');
    expect(importsOf(source)).toEqual([
      { specifier: './a.js', line: 1 },
      { specifier: '../b.js', line: 2 },
      { specifier: './c.js', line: 3 },
      { specifier: './d.js', line: 4 },
      { specifier: './side-effect.js', line: 5 },
    ]);
  });

  it('ignores imports inside comments (TSDoc examples)', () => {
    const source = [
      '/**',
      " * import { createConversationHost } from 'actorloop';",
      ' */',
      "// import { x } from '../x.js';",
      "import { y } from './y.js';",
    ].join('\n');
    expect(importsOf(source)).toEqual([{ specifier: './y.js', line: 5 }]);
  });

  it('puts the neutral model in the model layer, the wires in providers', () => {
    expect(layerOf('src/model/messages.ts')?.name).toBe('model');
    expect(layerOf('src/model/errors/provider-error.ts')?.name).toBe('model');
    expect(layerOf('src/providers/errors/classify-sdk-error.ts')?.name).toBe('providers');
    expect(layerOf('src/providers/openai/openai-provider.ts')?.name).toBe('providers');
  });

  it('rejects an import against the direction, naming both files and what is allowed', () => {
    const problems = findLayerProblems(
      [
        { from: 'src/providers/openai/openai-provider.ts', to: 'src/machines/conversation.ts', line: 3 },
        { from: 'src/machines/conversation.ts', to: 'src/providers/openai/openai-provider.ts', line: 7 },
        { from: 'src/machines/conversation.ts', to: 'src/actors/provider-call.ts', line: 2 },
      ],
      ['src/providers/openai/openai-provider.ts', 'src/machines/conversation.ts', 'src/actors/provider-call.ts'],
    );
    expect(problems.map((problem) => problem.message)).toEqual([
      'src/providers/openai/openai-provider.ts:3 (providers) imports src/machines/conversation.ts (machines): providers may import only model, providers',
      'src/machines/conversation.ts:7 (machines) imports src/providers/openai/openai-provider.ts (providers): machines may import only model, tools, middleware, actors, machines',
    ]);
  });

  it('rejects a file in a folder no layer claims', () => {
    expect(findLayerProblems([], ['src/misc/thing.ts'])[0]?.message).toMatch(/belongs to no layer/);
  });

  it('finds import circles, type-only ones too, each once, naming the files around it', () => {
    const edge = (from: string, to: string) => ({ from: `src/machines/${from}.ts`, to: `src/machines/${to}.ts`, line: 1 });
    expect(findImportCircles([edge('a', 'b'), edge('b', 'c'), edge('c', 'a'), edge('c', 'd'), edge('d', 'e')])).toEqual([
      ['src/machines/a.ts', 'src/machines/b.ts', 'src/machines/c.ts', 'src/machines/a.ts'],
    ]);
    expect(findImportCircles([edge('a', 'b'), edge('b', 'c'), edge('a', 'c')])).toEqual([]);
  });

  it('passes on the source tree as it is', () => {
    const output = execFileSync(process.execPath, ['--import', 'tsx', 'scripts/check-layers.ts'], { encoding: 'utf8' });
    expect(output).toMatch(/all in direction, no circle/);
  });
});
