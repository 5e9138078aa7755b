/**
 * A `--name value` option of a bench script run alone (`npx tsx bench/<script>.ts --reps 200`):
 * the word after `name` on the command line, or `fallback` when it is not given.
 */
export function flag(name: string): string | undefined;
export function flag(name: string, fallback: string): string;
export function flag(name: string, fallback?: string): string | undefined {
  const index = process.argv.indexOf(name);
  return index === -1 ? fallback : process.argv[index + 1];
}
