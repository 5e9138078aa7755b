import type { AnyStateMachine } from 'xstate';
import { layoutChart } from '../chart/layout-chart.js';
import { type ChartKind, machineChart } from '../chart/machine-chart.js';
import { renderChartSvg } from '../chart/render-svg.js';

export type { ChartKind };

/** Charts by machine (a conversation's, or a workflow's with its conversations inside): an id per machine, each picture drawn once, on first request. */
export class ChartStore {
  private readonly ids = new WeakMap<AnyStateMachine, string>();
  private readonly machines = new Map<string, AnyStateMachine>();
  private readonly drawn = new Map<string, Promise<string>>();

  /** The chart id of a machine (the same for every run of it). */
  idOf(machine: AnyStateMachine): string {
    let id = this.ids.get(machine);
    if (!id) {
      id = `chart${this.machines.size + 1}`;
      this.ids.set(machine, id);
      this.machines.set(id, machine);
    }
    return id;
  }

  /** The SVG of a chart, or `undefined` for an unknown id. */
  svg(id: string, kind: ChartKind): Promise<string> | undefined {
    const machine = this.machines.get(id);
    if (!machine) return undefined;
    const key = `${id}/${kind}`;
    let svg = this.drawn.get(key);
    if (!svg) {
      svg = layoutChart(machineChart(machine, kind)).then((placed) =>
        renderChartSvg(placed, {
          idPrefix: `${id}-${kind}`,
          title: `${machine.id}: ${kind === 'overview' ? 'overview' : 'every state and transition'}`,
        }),
      );
      this.drawn.set(key, svg);
      svg.catch(() => this.drawn.delete(key));
    }
    return svg;
  }
}
