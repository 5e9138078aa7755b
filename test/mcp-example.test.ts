import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('examples/mcp.ts', () => {
  it('runs offline as a process: an MCP server over stdio, an approval, an image placeholder, a list change, close', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/mcp.ts'], { cwd: root, timeout: 60_000 });
    expect(stdout).toContain('[mcp] tools: notes_add_note, notes_delete_note, notes_chart_notes, notes_enable_export\n');
    expect(stdout).toContain('[tool.result] notes_chart_notes → Chart of 1 note:\n[image: image/png, 68 bytes; not shown to the model]');
    expect(stdout).toContain(
      '[approval] notes_delete_note({"title":"shopping"}) — approved\n[tool.result] notes_delete_note → Deleted "shopping".',
    );
    expect(stdout).toContain(
      "[mcp] the server's tool list changed: notes_add_note, notes_delete_note, notes_chart_notes, notes_enable_export, notes_export_notes",
    );
    expect(stdout).toContain('[tool.result] notes_export_notes → # meeting\nTuesday 10:00');
    expect(stdout.match(/\[answer\] \(done\)/g)).toHaveLength(4);
    expect(stdout).toContain('[mcp] closed: the server process has ended.');
  });
});
