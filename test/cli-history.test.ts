/**
 * `actorloop history` and `actorloop fork` as processes (DESIGN §14, issue 28 item 4): the stored
 * steps of a conversation; a new conversation from any of them — a step mid-run goes on to its end,
 * a step at rest is stored as it was — with the original untouched and refusals that write nothing.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stepTurns } from '../src/cli/step-turns.js';
import { actorloop } from './support/cli-process.js';

const work = mkdtempSync(join(tmpdir(), 'actorloop-cli-history-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

type Step = { seq: number; turn: number | null; at: number; status: string; state: unknown };

/**
 * Each test runs the CLI as a process nine or ten times in a row (about 0.35 s each alone): beside
 * the packaging and Restate files on two cores, a CI run had one of them past the default 20 s.
 */
const cliProcessesTimeoutMs = 90_000;

describe('the turn of a step', () => {
  it('counts user messages: the first step its own, each later one those it gained; a compaction starts no turn', () => {
    expect(stepTurns([1, 1, 1, 2, 2, 3])).toEqual([1, 1, 1, 2, 2, 3]);
    // Steps the store no longer keeps: the first kept step counts its history.
    expect(stepTurns([4, 4, 5])).toEqual([4, 4, 5]);
    // A summary replaced two old user messages (3 → 1); the next message is still the fourth turn.
    expect(stepTurns([3, 3, 1, 1, 2])).toEqual([3, 3, 3, 3, 4]);
    // A step that cannot be read has no turn; the next is counted from the last one read.
    expect(stepTurns([1, undefined, 2])).toEqual([1, null, 2]);
    expect(stepTurns([undefined, 1])).toEqual([null, 1]);
    expect(stepTurns([])).toEqual([]);
  });
});

describe('actorloop history and fork', () => {
  it(
    'lists the steps of a stored conversation with their turns, and forks from a step mid-run and from the last step',
    async () => {
      const db = join(work, 'history.db');
      const run = await actorloop(['run', '--db', db, '--id', 'c-1', 'what is 17*23?']);
      expect(run.code, run.stderr).toBe(0);
      const again = await actorloop(['run', '--db', db, '--id', 'c-1', 'convert 100 °F to celsius']);
      expect(again.code, again.stderr).toBe(0);

      const listed = await actorloop(['history', '--db', db, 'c-1']);
      expect(listed.code, listed.stderr).toBe(0);
      const [header, ...lines] = listed.stdout.trim().split('\n');
      expect(header).toBe('seq\tturn\ttime\tstatus\tstate');
      // Changes that land while a write is in flight share the next one, so how many steps a run has
      // depends on timing: at least the first request, the request after the tool's result, the end.
      expect(lines.length).toBeGreaterThanOrEqual(6);
      expect(lines[0]).toMatch(/^1\t1\t\d{4}-\d\d-\d\dT[\d:.]+Z\trunning\trequesting\.\w+$/);
      expect(lines.at(-1)).toMatch(/^\d+\t2\t.+\tdone\tdone$/);
      expect(lines.slice(1).some((line) => /\trunning\trequesting\./.test(line))).toBe(true);
      // Turn n: the steps after the n-th user message — the first run's steps, then the second's.
      const turns = lines.map((line) => Number(line.split('\t')[1]));
      expect(turns).toEqual([...turns].sort((a, b) => a - b));
      expect(new Set(turns)).toEqual(new Set([1, 2]));
      expect(lines[turns.lastIndexOf(1)]).toMatch(/\tdone\tdone$/);

      const json = await actorloop(['history', '--db', db, '--json', 'c-1']);
      const steps = JSON.parse(json.stdout) as Step[];
      expect(steps.map((step) => step.seq)).toEqual(lines.map((_, index) => index + 1));
      expect(steps.map((step) => step.turn)).toEqual(turns);
      const shownBefore = (await actorloop(['show', '--db', db, '--json', 'c-1'])).stdout;

      // The step of the first turn after the calculator's result: the fork makes the last request again and ends.
      const afterTool = steps.findLast(
        (step) => step.turn === 1 && typeof step.state === 'object' && step.state !== null && 'requesting' in step.state,
      )!;
      const midRun = await actorloop(['fork', '--db', db, 'c-1', '--seq', String(afterTool.seq), '--new-id', 'c-1-again']);
      expect(midRun.code, midRun.stderr).toBe(0);
      expect(midRun.stderr).toContain(`forking c-1 at step ${afterTool.seq} (running, requesting.`);
      expect(midRun.stdout).toContain('391');
      const forked = JSON.parse((await actorloop(['show', '--db', db, '--json', 'c-1-again'])).stdout) as {
        status: string;
        messages: unknown[];
      };
      expect(forked.status).toBe('done');

      // The last step: stored as it was, the new id printed.
      const last = steps.at(-1)!;
      const atRest = await actorloop(['fork', '--db', db, 'c-1', '--seq', String(last.seq)]);
      expect(atRest.code, atRest.stderr).toBe(0);
      const newId = atRest.stdout.trim();
      expect(newId).toMatch(new RegExp(`^c-1-${last.seq}-[0-9a-f]{6}$`));
      const copy = JSON.parse((await actorloop(['show', '--db', db, '--json', newId])).stdout) as { status: string; messages: unknown[] };
      expect(forked.messages).toHaveLength(4);
      expect(copy).toMatchObject({ status: 'done', messages: (JSON.parse(shownBefore) as { messages: unknown[] }).messages });
      expect(copy.messages).toHaveLength(8);

      // The original is as it was.
      expect((await actorloop(['show', '--db', db, '--json', 'c-1'])).stdout).toBe(shownBefore);
      expect(JSON.parse((await actorloop(['history', '--db', db, '--json', 'c-1'])).stdout)).toEqual(steps);
    },
    cliProcessesTimeoutMs,
  );

  it(
    'refuses a new id in use (exit 3), names an unknown step or conversation (exit 1), creates no file',
    async () => {
      const db = join(work, 'refusals.db');
      expect((await actorloop(['run', '--db', db, '--id', 'c-1', 'what is 2 plus 3?'])).code).toBe(0);
      expect((await actorloop(['run', '--db', db, '--id', 'c-2', 'hello'])).code).toBe(0);
      const listed = (await actorloop(['list', '--db', db, '--json'])).stdout;

      const taken = await actorloop(['fork', '--db', db, 'c-1', '--seq', '1', '--new-id', 'c-2']);
      expect(taken.code).toBe(3);
      expect(taken.stderr).toContain('conversation "c-2" already exists');
      const unknownStep = await actorloop(['fork', '--db', db, 'c-1', '--seq', '999', '--new-id', 'c-3']);
      expect(unknownStep.code).toBe(1);
      expect(unknownStep.stderr).toContain('has no stored step 999');
      const unknownId = await actorloop(['history', '--db', db, 'nobody']);
      expect(unknownId.code).toBe(1);
      expect(unknownId.stderr).toContain('no conversation "nobody"');
      const noSeq = await actorloop(['fork', '--db', db, 'c-1']);
      expect(noSeq.code).toBe(1);
      expect(noSeq.stderr).toContain('fork needs --seq');
      const badSeq = await actorloop(['fork', '--db', db, 'c-1', '--seq', 'two']);
      expect(badSeq.code).toBe(1);
      expect(badSeq.stderr).toContain('--seq needs a step number');
      expect((await actorloop(['list', '--db', db, '--json'])).stdout).toBe(listed);

      const missing = join(work, 'missing.db');
      for (const args of [
        ['history', '--db', missing, 'c-1'],
        ['fork', '--db', missing, 'c-1', '--seq', '1'],
      ]) {
        const result = await actorloop(args);
        expect(result.code).toBe(1);
        expect(result.stderr).toContain(`no database at ${missing}`);
      }
      expect(existsSync(missing)).toBe(false);
    },
    cliProcessesTimeoutMs,
  );
});
