import { statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Where npm leaves each runtime's binary (the dev dependencies `bun`, `deno`, `workerd`), under
 * node_modules. Bun's postinstall, which `npm ci` runs, moves its binary out of the platform package
 * into `bun/bin/bun.exe` (a placeholder script until then); installed without scripts, it stays in
 * the platform package. The first that is a binary is the one; the last is named when none is.
 */
const candidates = {
  bun: ['bun/bin/bun.exe', '@oven/bun-linux-x64/bin/bun'],
  deno: ['@deno/linux-x64-glibc/deno'],
  workerd: ['@cloudflare/workerd-linux-64/bin/workerd'],
} as const;

export type RuntimeBinary = keyof typeof candidates;

/** The path of a runtime's binary relative to node_modules (the last candidate when none is there). */
export function runtimeBinaryPath(runtime: RuntimeBinary): string {
  const paths: readonly string[] = candidates[runtime];
  return paths.find((path) => isBinary(join(root, 'node_modules', path))) ?? (paths.at(-1) as string);
}

/** The absolute path of a runtime's binary. */
export function runtimeBinary(runtime: RuntimeBinary): string {
  return join(root, 'node_modules', runtimeBinaryPath(runtime));
}

/** Real binaries are megabytes; the placeholder a few hundred bytes. */
function isBinary(path: string): boolean {
  try {
    return statSync(path).size > 1_000_000;
  } catch {
    return false;
  }
}
