import { builtTree } from './built-tree.js';

/**
 * Builds `src/` and `test/support/` (`built-tree.ts`) before the first file of the `full` project
 * starts: the build then costs no test its timeout, however busy the machine, and the files that run
 * the CLI or a helper as a process find it made. Skipped when the tree is current (a hash check).
 */
export default function setup(): void {
  builtTree();
}
