/**
 * Generates the files of `visualizations/` from the machine definitions in `src/machines`: each
 * machine's config as deterministic JSON (what `createMachine()` and the Stately editor take); its readable overview (top-level states, the
 * transitions between them in words) as Mermaid and SVG; its full chart (every state and
 * transition) as Mermaid and SVG. The SVGs are drawn by the live viewer's renderer (ELK layout,
 * `src/observe/chart`). `scripts/visualize.ts` writes them and puts the overview into README.md;
 * `test/visualizations.test.ts` regenerates them in memory and fails when a committed file is stale.
 */
import { type AnyStateMachine, createMachine } from 'xstate';
import { createConversationMachine } from '../src/machines/chart/conversation.js';
import type { Chart } from '../src/observe/chart/chart.js';
import { fullChart } from '../src/observe/chart/full-chart.js';
import { layoutChart } from '../src/observe/chart/layout-chart.js';
import {
  asStateDefinition,
  type JsonObject,
  machineDefinitionJson,
  type StateDefinition,
} from '../src/observe/chart/machine-definition.js';
import { machineConfigOf } from '../src/observe/chart/machine-config.js';
import { overviewChart } from '../src/observe/chart/overview-chart.js';
import { renderChartSvg } from '../src/observe/chart/render-svg.js';
import { invokeSourcesOf, stateTransitions, statePath } from '../src/observe/chart/transition-label.js';
import type { Provider } from '../src/model/provider.js';
import { defineTool } from '../src/tools/define-tool.js';

export { machineDefinitionJson };

/** The directory (relative to the repository root) the files belong in. */
export const visualizationsDir = 'visualizations';

/** A provider that is never called: the machines are only built, never run. */
const stubProvider: Provider = {
  name: 'stub',
  // biome-ignore lint/correctness/useYield: a provider that must never be called
  async *stream() {
    throw new Error('the visualization stub provider is never called');
  },
};

const stubTool = defineTool({
  name: 'stub',
  description: 'A stub tool; the visualization only needs the machine shape.',
  parameters: { type: 'object', properties: {} },
  execute: () => 'ok',
});

/** The machines to draw, built as a user would build them (one stub tool, a stub provider). */
export function visualizedMachines(): Record<string, AnyStateMachine> {
  return {
    conversation: createConversationMachine({ provider: stubProvider, tools: [stubTool] }),
  };
}

// ---------------------------------------------------------------------------------------------
// Definition JSON → Mermaid stateDiagram-v2

/** Mermaid ids: a state's path joined with `_` (ids are unique, names can repeat in nesting). */
function mermaidId(path: string): string {
  return path === '' ? '[*]' : path.replace(/[^A-Za-z0-9]+/g, '_');
}

/**
 * Renders a machine definition (as produced by {@link machineDefinitionJson}) as a Mermaid
 * `stateDiagram-v2`: compound states nest, `[*]` marks initial and final states, every transition
 * is labelled with its event and guard. Transitions declared on the machine root apply in every
 * state; they are drawn from each top-level state that is not final. Root transitions without a
 * target (events only answered, e.g. rejected) are listed in a note.
 */
export function renderMermaid(definition: JsonObject): string {
  const root = asStateDefinition(definition);
  const invokeSources = invokeSourcesOf(root);
  const lines: string[] = ['stateDiagram-v2'];
  const edges: string[] = [];
  const id = (stateId: string) => mermaidId(statePath(stateId, root.id));

  const renderState = (state: StateDefinition, indent: string): void => {
    const children = Object.values(state.states);
    const initial = state.initial?.target[0];
    for (const child of children) {
      const childId = id(child.id);
      if (Object.keys(child.states).length > 0) {
        // Composite states open by id; a label, when the id differs from the name, is declared first.
        if (childId !== child.key) lines.push(`${indent}state "${child.key}" as ${childId}`);
        lines.push(`${indent}state ${childId} {`);
        renderState(child, `${indent}  `);
        lines.push(`${indent}}`);
      } else if (childId !== child.key) {
        lines.push(`${indent}state "${child.key}" as ${childId}`);
      }
    }
    if (initial !== undefined) lines.push(`${indent}[*] --> ${id(initial)}`);
    for (const child of children) {
      if (child.type === 'final') lines.push(`${indent}${id(child.id)} --> [*]`);
    }
    for (const child of children) {
      for (const transition of stateTransitions(child, invokeSources)) {
        const targets = transition.target && transition.target.length > 0 ? transition.target : [child.id];
        for (const target of targets) edges.push(`${id(child.id)} --> ${id(target)} : ${transition.label}`);
      }
    }
  };

  renderState(root, '  ');

  const topLevel = Object.values(root.states).filter((state) => state.type !== 'final');
  const answeredOnly: string[] = [];
  for (const transition of stateTransitions(root, invokeSources)) {
    if (!transition.target || transition.target.length === 0) {
      answeredOnly.push(transition.label);
      continue;
    }
    for (const state of topLevel) {
      for (const target of transition.target) edges.push(`${id(state.id)} --> ${id(target)} : ${transition.label}`);
    }
  }
  lines.push(...edges.map((edge) => `  ${edge}`));
  const first = root.initial?.target[0];
  if (answeredOnly.length > 0 && first !== undefined) {
    lines.push(`  note right of ${id(first)}`);
    lines.push(`    In every state (no state change):`);
    for (const label of answeredOnly) lines.push(`    ${label}`);
    lines.push('  end note');
  }
  return `${lines.join('\n')}\n`;
}

/** A note in lines of about 36 characters: Mermaid does not wrap notes, and a long one widens the whole picture. */
function wrapNote(text: string): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > 36) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines.join('<br/>');
}

/**
 * Renders an overview chart (top-level states, arrows in words, notes) as a Mermaid
 * `stateDiagram-v2`: what the README shows. Label lines break with `<br/>`; the notes are one
 * note beside the initial state.
 */
export function renderOverviewMermaid(chart: Chart): string {
  const lines: string[] = ['stateDiagram-v2'];
  const initial = chart.states.find((state) => state.initial);
  if (initial) lines.push(`  [*] --> ${mermaidId(initial.path)}`);
  for (const transition of chart.transitions) {
    const label = transition.lines.map((line) => line.replaceAll(':', '#58;')).join('<br/>');
    lines.push(`  ${mermaidId(transition.source)} --> ${mermaidId(transition.target)}${label ? ` : ${label}` : ''}`);
  }
  // Final states get a thick border rather than arrows into one shared end dot, which would cross the chart.
  const finals = chart.states.filter((state) => state.final).map((state) => mermaidId(state.path));
  if (finals.length > 0) {
    lines.push('  classDef final stroke-width:4px,font-weight:bold');
    lines.push(`  class ${finals.join(', ')} final`);
  }
  const finalsInWords = finals.length > 1 ? `${finals.slice(0, -1).join(', ')} and ${finals.at(-1)} are` : `${finals[0]} is`;
  const notes = [...chart.notes, ...(finals.length > 0 ? [{ text: `${finalsInWords} final (thick border)` }] : [])];
  // One note beside the initial state: each note beside a state of its own widens the picture.
  if (initial && notes.length > 0)
    lines.push(
      `  note left of ${mermaidId(initial.path)} : ${notes.map((note) => wrapNote(note.text).replaceAll(':', '#58;')).join('<br/><br/>')}`,
    );
  return `${lines.join('\n')}\n`;
}

/**
 * Every file of `visualizations/` that is generated, by file name, with its content:
 * `<name>.machine.json` (the machine config), `<name>.mmd` and `<name>.svg` (the overview),
 * `<name>.full.mmd` and `<name>.full.svg` (every state and transition). The charts are drawn from
 * the resolved definition (`machineDefinitionJson`), which is not written out.
 */
export async function renderVisualizations(): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const [name, machine] of Object.entries(visualizedMachines())) {
    const definition = machineDefinitionJson(machine);
    const overview = overviewChart(definition);
    files[`${name}.machine.json`] = `${JSON.stringify(machineConfigOf(machine), null, 2)}\n`;
    files[`${name}.mmd`] = renderOverviewMermaid(overview);
    // The README's picture: the loop every run goes through, without the states opt-in options add.
    if (name === 'conversation') files[`${name}.core.mmd`] = renderOverviewMermaid(overviewChart(definition, { leaveOut: optInStates }));
    files[`${name}.svg`] = renderChartSvg(await layoutChart(overview), { title: `${name} machine: overview` });
    files[`${name}.full.mmd`] = renderMermaid(definition);
    files[`${name}.full.svg`] = renderChartSvg(await layoutChart(fullChart(definition)), {
      title: `${name} machine: every state and transition`,
    });
  }
  return files;
}

/**
 * A chart of a machine config as JSON text (`conversation.machine.json`), imported the way a user
 * would — plain `createMachine(JSON.parse(text))`, no implementations — and drawn by the viewer's
 * renderer: the `overview` (top-level states, transitions in words) or the `full` chart. The
 * picture `scripts/screenshot-config.ts` takes for the docs.
 */
export async function importedConfigSvg(configJson: string, kind: 'overview' | 'full', title: string): Promise<string> {
  const imported = createMachine(JSON.parse(configJson) as never) as unknown as AnyStateMachine;
  const definition = machineDefinitionJson(imported);
  return renderChartSvg(await layoutChart(kind === 'overview' ? overviewChart(definition) : fullChart(definition)), { title });
}

/** States a run only enters with an option set: the README's picture leaves them out, naming them. */
const optInStates = [
  { state: 'checkingInput', when: 'guardrails.input' },
  { state: 'compacting', when: 'context' },
  { state: 'checkingOutput', when: 'guardrails.output' },
];

const readmeStart = '<!-- generated by npm run visualize: conversation.core.mmd -->';
const readmeEnd = '<!-- end of generated diagram -->';

/**
 * The README with its machine diagram replaced by the generated overview `conversation.core.mmd`, so
 * the diagram a newcomer reads is the machine, not a drawing of it. Throws when the markers are gone.
 */
export function readmeWithDiagram(readme: string, diagram: string): string {
  const start = readme.indexOf(readmeStart);
  const end = readme.indexOf(readmeEnd);
  if (start < 0 || end < start) throw new Error(`README.md lacks the diagram markers ${readmeStart} … ${readmeEnd}`);
  return `${readme.slice(0, start + readmeStart.length)}\n\`\`\`mermaid\n${diagram.trimEnd()}\n\`\`\`\n${readme.slice(end)}`;
}
