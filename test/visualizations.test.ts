import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  machineDefinitionJson,
  readmeWithDiagram,
  renderVisualizations,
  visualizationsDir,
  visualizedMachines,
} from '../scripts/visualize-lib.js';
import { partsOfGuard } from '../src/machines/chart/combined-guards.js';
import { guardWords } from '../src/observe/chart/overview-words.js';

const dir = join(resolve(dirname(fileURLToPath(import.meta.url)), '..'), visualizationsDir);

function committed(name: string): string | undefined {
  try {
    return readFileSync(join(dir, name), 'utf8');
  } catch {
    return undefined;
  }
}

const names = [
  'conversation.core.mmd',
  'conversation.full.mmd',
  'conversation.full.svg',
  'conversation.machine.json',
  'conversation.mmd',
  'conversation.svg',
];

describe('visualizations/ is generated from src/machines', async () => {
  const generated = await renderVisualizations();
  let again: Record<string, string> = {};
  beforeAll(async () => {
    again = await renderVisualizations();
  });

  it('generates the definition, the overview and the full chart of the machine, as Mermaid and SVG', () => {
    expect(Object.keys(generated).sort()).toEqual(names);
  });

  it('README.md shows the generated conversation diagram', () => {
    const readme = readFileSync(join(dir, '..', 'README.md'), 'utf8');
    if (readmeWithDiagram(readme, generated['conversation.core.mmd'] ?? '') !== readme) {
      expect.fail('the diagram in README.md is stale: run `npm run visualize` and commit the result');
    }
  });

  it('is deterministic', () => {
    expect(again).toEqual(generated);
  });

  for (const [name, content] of Object.entries(generated)) {
    it(`${visualizationsDir}/${name} is up to date`, () => {
      const current = committed(name);
      if (current !== content) {
        const problem = current === undefined ? 'is missing' : 'is stale (the machine changed)';
        expect.fail(`${visualizationsDir}/${name} ${problem}: run \`npm run visualize\` and commit the result`);
      }
    });
  }

  it('holds no stale generated file of a machine that no longer exists', () => {
    const generatedNames = new Set(Object.keys(generated));
    const orphans = readdirSync(dir).filter((name) => /\.(machine\.json|mmd|svg)$/.test(name) && !generatedNames.has(name));
    expect(orphans, `remove ${orphans.join(', ')} from ${visualizationsDir}/ (run \`npm run visualize\`)`).toEqual([]);
  });

  it('JSON definitions hold no functions and parse back to the same value', () => {
    for (const [name, content] of Object.entries(generated)) {
      if (!name.endsWith('.json')) continue;
      expect(`${JSON.stringify(JSON.parse(content), null, 2)}\n`).toBe(content);
    }
  });

  it('the overview shows the main states and the transitions between them in words, cancel and rejections as one note', () => {
    expect(generated['conversation.mmd']).toBe(
      [
        'stateDiagram-v2',
        '  [*] --> idle',
        '  idle --> checkingInput : user.message or<br/>interrupt<br/>(input guardrails)',
        '  idle --> preparing : user.message<br/>interrupt<br/>a prompt in the input',
        '  idle --> error : invalid input',
        '  checkingInput --> halted : tripped',
        '  checkingInput --> preparing : passed',
        '  checkingInput --> error : check threw<br/>check timed out',
        '  preparing --> checkingInput : messages queued, input<br/>guardrails',
        '  preparing --> halted : budget reached',
        '  preparing --> compacting : over the context window',
        '  preparing --> requesting : request',
        '  compacting --> preparing : compacted',
        '  compacting --> error : unusable summary<br/>summary failed or timed<br/>out<br/>(no retry left)',
        '  requesting --> retrying : no response, request<br/>failed or timed out<br/>(retries left)',
        '  requesting --> preparing : no response, request<br/>failed or timed out<br/>(next provider)<br/>messages queued,<br/>answered',
        '  requesting --> error : no response, request<br/>failed or timed out<br/>(no retry left)<br/>answer invalid, no<br/>repair left',
        '  requesting --> checkingOutput : output guardrails,<br/>answered',
        '  requesting --> done : answered',
        '  requesting --> repairing : answer invalid (repairs<br/>left)',
        '  requesting --> halted : budget spent<br/>tool-round cap reached<br/>doom loop persists',
        '  requesting --> awaitingApproval : a call needs approval',
        '  requesting --> executingTools : tool calls to run',
        '  requesting --> compacting : request failed, context<br/>too long',
        '  repairing --> preparing : problem sent back',
        '  retrying --> preparing : after the backoff',
        '  awaitingApproval --> executingTools : all approved or denied',
        '  executingTools --> halted : agent tree over budget<br/>a tool finished, an<br/>agent call failed (halt)<br/>a tool threw HaltError',
        '  executingTools --> handingOff : all results in, a<br/>handoff call in it',
        '  executingTools --> preparing : all results in<br/>a tool finished, the<br/>last result of the round',
        '  handingOff --> preparing : the new agent asks',
        '  checkingOutput --> halted : tripped',
        '  checkingOutput --> preparing : messages queued',
        '  checkingOutput --> done : passed',
        '  checkingOutput --> error : check threw<br/>check timed out',
        '  classDef final stroke-width:4px,font-weight:bold',
        '  class done, halted, error final',
        '  note left of idle : cancel → halted, from any state but<br/>a final one<br/><br/>user.interrupt → preparing, from<br/>requesting, retrying,<br/>awaitingApproval, executingTools<br/><br/>budget.deadline → halted, from any<br/>state but idle and the final ones<br/><br/>user.message, user.interrupt,<br/>tool.approve, tool.deny out of turn<br/>→ event.rejected, state unchanged<br/><br/>done, halted and error are final<br/>(thick border)',
        '',
      ].join('\n'),
    );
  });

  it('names every guard of the machine in words for the overview', () => {
    const guards = new Set<string>();
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) for (const item of value) collect(item);
      else if (value && typeof value === 'object') {
        for (const [key, inner] of Object.entries(value)) {
          // A combined guard reads as the guards it lists.
          if (key === 'guard' && typeof inner === 'string') for (const name of partsOfGuard(inner) ?? [inner]) guards.add(name);
          else collect(inner);
        }
      }
    };
    collect(machineDefinitionJson(visualizedMachines().conversation!));
    expect(
      [...guards].filter((guard) => !(guard in guardWords)),
      'add words for these guards to src/observe/chart/overview-words.ts',
    ).toEqual([]);
  });

  it('the SVGs mark every state and arrow for the viewer to light up', () => {
    const overview = generated['conversation.svg'] ?? '';
    for (const state of [
      'idle',
      'checkingInput',
      'preparing',
      'compacting',
      'requesting',
      'retrying',
      'awaitingApproval',
      'executingTools',
      'checkingOutput',
      'done',
      'halted',
      'error',
    ]) {
      expect(overview).toContain(`data-state="${state}"`);
    }
    expect(overview).toContain('data-source="executingTools" data-target="preparing"');
    expect(overview).toContain('data-source="preparing" data-target="requesting"');
    expect(overview).not.toContain('data-state="requesting.waiting"');
    const full = generated['conversation.full.svg'] ?? '';
    expect(full).toContain('data-state="requesting.waiting"');
    expect(full).toContain('data-state="executingTools.running"');
    expect(full).toContain('data-source="executingTools.running" data-target="halted"');
  });

  it('the full diagram shows the conversation loop', () => {
    const mermaid = generated['conversation.full.mmd'] ?? '';
    expect(mermaid.startsWith('stateDiagram-v2\n')).toBe(true);
    for (const line of [
      '[*] --> idle',
      'state requesting {',
      '[*] --> requesting_waiting',
      'done --> [*]',
      'halted --> [*]',
      'error --> [*]',
      'idle --> preparing : user.message [isValidUserMessage]',
      'idle --> checkingInput : user.message [validMessageWithInputGuardrails]',
      'preparing --> halted : always [budgetReached]',
      'preparing --> compacting : always [contextOverWindow]',
      'preparing --> requesting : always [else]',
      'checkingInput --> halted : done: guardrailCheck [guardrailTripped]',
      'checkingOutput --> error : after outputGuardrailTimeout',
      'requesting --> done : done: providerCall [answerAccepted]',
      'requesting --> repairing : done: providerCall [answerRepairable]',
      'repairing --> preparing : always',
      'requesting --> halted : done: providerCall [iterationCapReached]',
      'requesting --> retrying : error: providerCall [canRetryFailure]',
      'requesting --> error : error: providerCall [else]',
      'requesting_waiting --> retrying : after requestTimeout [canRetryFailure]',
      'retrying --> preparing : after retryDelay',
      'executingTools --> preparing : always [roundSettled]',
      'executingTools --> halted : cancel',
      'executingTools_running --> executingTools_running : after toolDeadline',
      'executingTools_running --> halted : error: * [executionHalts]',
    ]) {
      expect(mermaid).toContain(line);
    }
  });
});
