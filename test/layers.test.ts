import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findImportCircles, findLayerProblems, findRoomProblems, importsOf, type Layer, layerOf, roomOf } from '../scripts/layers.js';

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
        { from: 'src/providers/openai/openai-provider.ts', to: 'src/machines/chart/conversation.ts', line: 3 },
        { from: 'src/machines/chart/conversation.ts', to: 'src/providers/openai/openai-provider.ts', line: 7 },
        { from: 'src/machines/chart/conversation.ts', to: 'src/actors/provider-call.ts', line: 2 },
      ],
      ['src/providers/openai/openai-provider.ts', 'src/machines/chart/conversation.ts', 'src/actors/provider-call.ts'],
    );
    expect(problems.map((problem) => problem.message)).toEqual([
      'src/providers/openai/openai-provider.ts:3 (providers) imports src/machines/chart/conversation.ts (machines): providers may import only model, providers',
      'src/machines/chart/conversation.ts:7 (machines) imports src/providers/openai/openai-provider.ts (providers): machines may import only model, tools, middleware, actors, machines',
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

  it('lets the host import the machine only through src/machines/hostable.ts', () => {
    const problems = findLayerProblems(
      [
        { from: 'src/host/live-run.ts', to: 'src/machines/hostable.ts', line: 4 },
        { from: 'src/host/live-run.ts', to: 'src/machines/names/types.ts', line: 5 },
        { from: 'src/observe/observe-actor.ts', to: 'src/machines/names/types.ts', line: 1 },
      ],
      ['src/host/live-run.ts', 'src/machines/hostable.ts', 'src/machines/names/types.ts', 'src/observe/observe-actor.ts'],
    );
    expect(problems.map((problem) => problem.message)).toEqual([
      'src/host/live-run.ts:5 (host) imports src/machines/names/types.ts: host may import machines only through src/machines/hostable.ts',
    ]);
  });

  it('puts every file of src/machines in a room', () => {
    expect(roomOf('src/machines/chart/conversation.ts')?.name).toBe('chart');
    expect(roomOf('src/machines/snapshots/migrate-snapshot.ts')?.name).toBe('snapshots');
    expect(roomOf('src/machines/hostable.ts')?.name).toBe('hostable');
    expect(findRoomProblems([], ['src/machines/misc.ts', 'src/host/live-run.ts']).map((problem) => problem.message)).toEqual([
      'src/machines/misc.ts belongs to no room of src/machines: add it to machineRooms in scripts/layers.ts',
    ]);
  });

  it('rejects an import between rooms against their direction', () => {
    const problems = findRoomProblems(
      [
        { from: 'src/machines/chart/guards.ts', to: 'src/machines/rounds/round-results.ts', line: 7 },
        { from: 'src/machines/names/types.ts', to: 'src/machines/policies/pricing.ts', line: 9 },
        { from: 'src/machines/rounds/tool-round.ts', to: 'src/machines/rounds/run-outcome.ts', line: 2 },
      ],
      [
        'src/machines/chart/guards.ts',
        'src/machines/rounds/round-results.ts',
        'src/machines/names/types.ts',
        'src/machines/policies/pricing.ts',
      ],
    );
    expect(problems.map((problem) => problem.message)).toEqual([
      'src/machines/names/types.ts:9 (room names) imports src/machines/policies/pricing.ts (room policies): names may import only names',
    ]);
  });

  it('finds a circle of rooms, declared or imported', () => {
    const rooms: Layer[] = [
      { name: 'upper', paths: ['src/machines/upper/'], mayImport: ['upper', 'lower'] },
      { name: 'lower', paths: ['src/machines/lower/'], mayImport: ['lower', 'upper'] },
    ];
    const edges = [
      { from: 'src/machines/upper/a.ts', to: 'src/machines/lower/b.ts', line: 1 },
      { from: 'src/machines/lower/c.ts', to: 'src/machines/upper/d.ts', line: 3 },
    ];
    expect(findRoomProblems(edges, [], rooms).map((problem) => problem.message)).toEqual([
      'room circle in machineRooms: lower → upper → lower',
      'room circle in the imports of src/machines: lower → upper → lower',
    ]);
    // A one-way declaration leaves only the import against it to report.
    const oneWay: Layer[] = [rooms[0] as Layer, { ...(rooms[1] as Layer), mayImport: ['lower'] }];
    expect(findRoomProblems(edges, [], oneWay).map((problem) => problem.message)).toEqual([
      'src/machines/lower/c.ts:3 (room lower) imports src/machines/upper/d.ts (room upper): lower may import only lower',
      'room circle in the imports of src/machines: lower → upper → lower',
    ]);
  });

  it('passes on the source tree as it is', () => {
    const output = execFileSync(process.execPath, ['--import', 'tsx', 'scripts/check-layers.ts'], { encoding: 'utf8' });
    expect(output).toMatch(/all in direction, no circle/);
  });
});
