import { readFile, stat } from 'node:fs/promises';
import { basename, extname } from 'node:path';
import { defaultMaxMediaBytes, sniffImageMediaType } from '../model/media.js';
import type { UserContentPart } from '../model/messages.js';
import { type UserContent, userContentProblem } from '../model/user-content.js';
import { CliUsageError } from './cli-usage-error.js';
import type { Attachment } from './parse-arguments.js';

/** The media types `--file` reads from a name's extension (docs/rich-content.md says which wire takes which). */
const fileTypes: Readonly<Record<string, string>> = {
  '.pdf': 'application/pdf',
  '.txt': 'text/plain',
  '.md': 'text/plain',
  '.wav': 'audio/wav',
  '.mp3': 'audio/mpeg',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
};

/** One `--image` or `--file` as a part: its bytes, and its media type from its first bytes or its extension. */
async function partOf(attachment: Attachment): Promise<UserContentPart> {
  const flag = `--${attachment.kind} ${attachment.path}`;
  const found = await stat(attachment.path).catch(() => undefined);
  if (!found?.isFile()) throw new CliUsageError(`${flag}: no such file`);
  // Checked before reading: a 2 GB file named by mistake is refused, not loaded.
  if (found.size > defaultMaxMediaBytes)
    throw new CliUsageError(`${flag}: ${found.size} bytes, over the ${defaultMaxMediaBytes} bytes a part may hold`);
  const bytes = new Uint8Array(await readFile(attachment.path));
  const byName = fileTypes[extname(attachment.path).toLowerCase()];
  if (attachment.kind === 'image') {
    const mediaType = sniffImageMediaType(bytes);
    if (!mediaType) throw new CliUsageError(`${flag}: not a PNG, JPEG, GIF or WebP image (send other files with --file)`);
    return { type: 'image', data: bytes, mediaType };
  }
  if (!byName) {
    throw new CliUsageError(`${flag}: cannot tell its media type from its name (expected ${Object.keys(fileTypes).join(', ')})`);
  }
  return byName.startsWith('image/')
    ? { type: 'image', data: bytes, mediaType: byName }
    : { type: 'file', data: bytes, mediaType: byName, filename: basename(attachment.path) };
}

/**
 * The content `actorloop run` sends: the prompt alone, or the prompt then each `--image` and
 * `--file` in the order given, checked as a run checks a message — so a file the run would refuse
 * is a usage error (exit 1) before anything is stored or sent.
 *
 * @example
 * ```ts
 * await promptContent('What is on this chart?', [{ kind: 'image', path: 'chart.png' }]);
 * // [{ type: 'text', text: 'What is on this chart?' }, { type: 'image', data: Uint8Array […], mediaType: 'image/png' }]
 * ```
 */
export async function promptContent(prompt: string, attachments: readonly Attachment[]): Promise<UserContent> {
  if (attachments.length === 0) return prompt;
  const content: UserContentPart[] = [{ type: 'text', text: prompt }];
  for (const attachment of attachments) content.push(await partOf(attachment));
  const problem = userContentProblem(content);
  if (problem) throw new CliUsageError(`the prompt's attachments: ${problem}`);
  return content;
}
