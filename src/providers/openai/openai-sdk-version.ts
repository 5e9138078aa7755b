import { nodeBuiltin } from '../../util/runtime.js';

/** The oldest `openai` the providers work with: earlier 5.x drop the code of a Responses in-band error event. */
export const oldestOpenaiVersion = '5.11.0';

function parts(version: string): [number, number, number] {
  const [major = 0, minor = 0, patch = 0] = version.split(/[.+-]/).map((part) => Number.parseInt(part, 10) || 0);
  return [major, minor, patch];
}

/**
 * What is wrong with an installed `openai` version for actorloop, or `undefined` when it is
 * supported (5.11 and newer).
 *
 * @example
 * ```ts
 * unsupportedOpenaiProblem('4.104.0'); // 'openaiProvider needs openai 5.11.0 or newer …'
 * unsupportedOpenaiProblem('7.60.0'); // undefined
 * ```
 */
export function unsupportedOpenaiProblem(version: string): string | undefined {
  const [major, minor, patch] = parts(version);
  const [oldestMajor, oldestMinor, oldestPatch] = parts(oldestOpenaiVersion);
  const older = major - oldestMajor || minor - oldestMinor || patch - oldestPatch;
  if (older >= 0) return undefined;
  return `openaiProvider needs openai ${oldestOpenaiVersion} or newer (5.11+, 6 or 7), and the installed openai is ${version}: npm install openai@latest`;
}

/**
 * The version of the `openai` package this project would load, read without loading it, so an
 * old SDK is named when the provider is created rather than failing in a first request. Undefined
 * when it is not installed (the first request says what to install) or has no readable version,
 * and where there is no `require` to read it with (workerd): there the version goes unchecked.
 */
export function installedOpenaiVersion(): string | undefined {
  try {
    const createRequire = nodeBuiltin<typeof import('node:module')>('node:module')?.createRequire;
    if (!createRequire) return undefined;
    const { VERSION } = createRequire(import.meta.url)('openai/version') as { VERSION?: unknown };
    return typeof VERSION === 'string' ? VERSION : undefined;
  } catch {
    return undefined;
  }
}
