import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cacheFolder } from './cache-folder.js';

/**
 * The pinned Mermaid release whose browser bundle draws the README overview in the render test
 * (GitHub renders Mermaid in the browser too). Mermaid 12 declares Node ≥ 22.12 for its Node
 * dependencies, which a dev dependency would make `npm ci` warn about on Node 20 (EBADENGINE),
 * and Mermaid 11 draws the overview with labels on each other. The test needs only the
 * self-contained `dist/mermaid.min.js`, so it takes that one file from the registry's tarball —
 * checked against the integrity pinned here — and no dependency of it is installed.
 */
const version = '12.3.0';
const integrity = 'sha512-4113TdXeLAsMruJ79OpFL5O8+LTFXhQqZ260rF3tgUmiNAtRm4Uume04I+65PRN6yZ69J4f8rVYWW8zRk65UYw==';

/** The path of Mermaid's browser bundle, fetched once into `node_modules/.cache/actorloop-mermaid/<version>/`. */
export function mermaidBundle(): string {
  return cacheFolder('actorloop-mermaid', version, 'mermaid.min.js', (folder) => {
    try {
      // `npm pack` reads the registry (or npm's cache) and checks no engines.
      const [packed] = JSON.parse(
        execFileSync('npm', ['pack', `mermaid@${version}`, '--json', '--pack-destination', folder], { encoding: 'utf8' }),
      ) as Array<{ filename: string }>;
      const tarball = join(folder, packed?.filename ?? `mermaid-${version}.tgz`);
      const actual = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
      if (actual !== integrity) throw new Error(`mermaid@${version} from the registry has integrity ${actual}, expected ${integrity}`);
      execFileSync('tar', ['-xzf', tarball, '-C', folder, '--strip-components=2', 'package/dist/mermaid.min.js']);
      rmSync(tarball);
    } catch (error) {
      throw new Error(
        `the render test needs Mermaid ${version}'s browser bundle: \`npm pack mermaid@${version}\` failed (${String(error)})`,
      );
    }
  });
}
