import { createHash } from 'node:crypto';

const maxLength = 64;

/** A short, stable tag of a name, to keep shortened or clashing names apart. */
const tag = (name: string) => createHash('sha256').update(name).digest('hex').slice(0, 8);

/**
 * The names the model sees for a server's tools: `prefix` + the server's name, with characters
 * the providers refuse (anything but letters, digits, `_` and `-`; MCP also allows `.` and `/`)
 * turned into `_`, and cut to 64 characters. A name that is cut, or that would clash with an
 * earlier one, ends in a tag of the server's name, so each tool keeps one name across listings.
 *
 * @example
 * ```ts
 * modelToolNames(['read.file', 'read_file'], 'fs_'); // ['fs_read_file', 'fs_read_file_3d6f5c1a']
 * ```
 */
export function modelToolNames(serverNames: readonly string[], prefix: string): string[] {
  const taken = new Set<string>();
  return serverNames.map((serverName) => {
    let name = `${prefix}${serverName}`.replace(/[^a-zA-Z0-9_-]/g, '_');
    if (name === '' || name.length > maxLength || taken.has(name)) name = `${name.slice(0, maxLength - 9)}_${tag(serverName)}`;
    taken.add(name);
    return name;
  });
}
