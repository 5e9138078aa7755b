import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { actorloop, startView } from './support/cli-process.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-view-'));

describe('actorloop view', () => {
  it('serves the viewer over a stored conversation: its steps, a refused cancel, a fork; SIGTERM exits 0', async () => {
    const db = join(work, 'viewed.db');
    // A conversation another process stored (the offline model's run ends: done).
    const run = await actorloop(['run', '--db', db, '--id', 'c-1', 'what is 17*23?']);
    expect(run.code).toBe(0);
    const { url, child, done } = await startView(['--db', db]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(`actorloop · ${db}`);
    const list = (await (await fetch(`${url}api/conversations`)).json()) as Array<{ id: string; status: string }>;
    expect(list).toEqual([expect.objectContaining({ id: 'c-1', status: 'done' })]);
    const steps = (await (await fetch(`${url}api/conversations/c-1/history`)).json()) as Array<{ seq: number }>;
    expect(steps.length).toBeGreaterThan(1);
    const first = (await (await fetch(`${url}api/conversations/c-1/steps/${steps[0]?.seq}`)).json()) as { seq: number; status: string };
    expect(first.seq).toBe(steps[0]?.seq);
    const cancel = await fetch(`${url}api/conversations/c-1/cancel`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(cancel.status).toBe(409);
    const fork = await fetch(`${url}api/conversations/c-1/fork`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seq: steps.at(-1)?.seq, newId: 'c-2' }),
    });
    expect(fork.status).toBe(201);
    expect((await (await fetch(`${url}api/conversations/c-2`)).json()) as { id: string }).toMatchObject({ id: 'c-2' });
    expect((await fetch(`${url}api/conversations/nope`)).status).toBe(404);
    child.kill('SIGTERM');
    const result = await done;
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('stopping');
  }, 60_000);

  it('a port in use: exit 1 naming it, no stack, and the one already serving goes on', async () => {
    const { url, child, done } = await startView([]);
    const taken = await actorloop(['view', '--port', new URL(url).port]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/EADDRINUSE|address already in use/);
    expect(taken.stderr).not.toMatch(/\n\s+at /);
    expect(taken.stdout).toBe('');
    expect((await fetch(url)).status).toBe(200);
    child.kill('SIGTERM');
    expect((await done).code).toBe(0);
  }, 60_000);

  it('refuses a file that does not exist, creating nothing', async () => {
    const missing = join(work, 'missing.db');
    const result = await actorloop(['view', '--port', '0', '--db', missing]);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(existsSync(missing)).toBe(false);
  }, 30_000);
});
