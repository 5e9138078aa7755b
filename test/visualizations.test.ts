import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readmeWithDiagram, renderVisualizations, visualizationsDir } from '../scripts/visualize-lib.js';

const dir = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), visualizationsDir);

function committed(name: string): string | undefined {
  try {
    return readFileSync(join(dir, name), 'utf8');
  } catch {
    return undefined;
  }
}

describe('visualizations/ is generated from src/machines', () => {
  const generated = renderVisualizations();

  it('generates the definition and diagram of the machine', () => {
    expect(Object.keys(generated).sort()).toEqual(['conversation.machine.json', 'conversation.mmd']);
  });

  it('README.md shows the generated conversation diagram', () => {
    const readme = readFileSync(join(dir, '..', 'README.md'), 'utf8');
    if (readmeWithDiagram(readme, generated['conversation.mmd'] ?? '') !== readme) {
      expect.fail('the diagram in README.md is stale: run `npm run visualize` and commit the result');
    }
  });

  it('is deterministic', () => {
    expect(renderVisualizations()).toEqual(generated);
  });

  for (const [name, content] of Object.entries(generated)) {
    it(`${visualizationsDir}/${name} is up to date`, () => {
      const current = committed(name);
      if (current !== content) {
        const problem = current === undefined ? 'is missing' : 'is stale (the machine changed)';
        expect.fail(`${visualizationsDir}/${name} ${problem}: run \`npm run visualize\` and commit the result`);
      }
    });
  }

  it('holds no stale generated file of a machine that no longer exists', () => {
    const generatedNames = new Set(Object.keys(generated));
    const orphans = readdirSync(dir).filter((name) => /\.(machine\.json|mmd)$/.test(name) && !generatedNames.has(name));
    expect(orphans, `remove ${orphans.join(', ')} from ${visualizationsDir}/ (run \`npm run visualize\`)`).toEqual([]);
  });

  it('JSON definitions hold no functions and parse back to the same value', () => {
    for (const [name, content] of Object.entries(generated)) {
      if (!name.endsWith('.json')) continue;
      expect(`${JSON.stringify(JSON.parse(content), null, 2)}\n`).toBe(content);
    }
  });

  it('diagrams show the conversation loop', () => {
    const mermaid = generated['conversation.mmd'] ?? '';
    expect(mermaid.startsWith('stateDiagram-v2\n')).toBe(true);
    for (const line of [
      '[*] --> idle',
      'state requesting {',
      '[*] --> requesting_waiting',
      'done --> [*]',
      'halted --> [*]',
      'error --> [*]',
      'idle --> requesting : user.message [isValidUserMessage]',
      'requesting --> done : done: providerCall [answerAccepted]',
      'requesting --> repairing : done: providerCall [answerRepairable]',
      'repairing --> requesting : always',
      'requesting --> halted : done: providerCall [iterationCapReached]',
      'requesting --> retrying : error: providerCall [canRetryFailure]',
      'requesting --> error : error: providerCall [else]',
      'requesting_waiting --> retrying : after requestTimeout [canRetryFailure]',
      'retrying --> requesting : after retryDelay',
      'executingTools --> requesting : always [roundSettled]',
      'executingTools --> halted : cancel',
      'executingTools_running --> executingTools_running : after toolDeadline',
      'executingTools_running --> halted : error: * [executionHalts]',
    ]) {
      expect(mermaid).toContain(line);
    }
  });
});
