/**
 * A process that asks for one cache folder (test/cache-folder.test.ts): its fill appends this pid to
 * `log` and takes `fillMs`, so parallel askers show how many of them filled it.
 *
 *   node cache-filler.js <name> <version> <log> <fillMs>
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheFolder } from './cache-folder.js';

const [name, version, log, fillMs] = process.argv.slice(2);
if (!name || !version || !log || !fillMs) throw new Error('usage: cache-filler.js <name> <version> <log> <fillMs>');
const file = cacheFolder(name, version, 'filled', (folder) => {
  appendFileSync(log, `${process.pid}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Number(fillMs));
  writeFileSync(join(folder, 'filled'), String(process.pid));
});
process.stdout.write(file);
