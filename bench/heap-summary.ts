/**
 * Reads V8 heap snapshots (`v8.writeHeapSnapshot`) and compares two of them by constructor:
 * count and self size of the objects of each kind, loaded minus baseline. Self size, not retained
 * size: the top rows name what the extra memory is made of.
 */
import { readFileSync } from 'node:fs';

type Snapshot = {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
};

export type HeapClass = { name: string; count: number; selfBytes: number };
export type HeapDiffRow = { name: string; countDelta: number; bytesDelta: number };

function kindOf(type: string, name: string): string {
  switch (type) {
    case 'object':
      return name;
    case 'closure':
      return `(closure) ${name || 'anonymous'}`;
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return '(string)';
    case 'number':
      return '(heap number)';
    case 'code':
      return '(compiled code)';
    case 'array':
      return `(array) ${name}`;
    case 'hidden':
    case 'object shape':
      return `(system) ${name.replace(/^system \/ /, '').slice(0, 40)}`;
    case 'native':
      return `(native) ${name.slice(0, 40)}`;
    default:
      return `(${type}) ${name.slice(0, 40)}`;
  }
}

export function summarizeHeapSnapshot(file: string): Map<string, HeapClass> {
  const data = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = data.snapshot.meta.node_fields;
  const types = data.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const out = new Map<string, HeapClass>();
  const { nodes, strings } = data;
  for (let i = 0; i < nodes.length; i += width) {
    const type = types[nodes[i + typeAt] as number] ?? '?';
    const name = strings[nodes[i + nameAt] as number] ?? '';
    const kind = kindOf(type, name);
    const entry = out.get(kind) ?? { name: kind, count: 0, selfBytes: 0 };
    entry.count++;
    entry.selfBytes += nodes[i + sizeAt] as number;
    out.set(kind, entry);
  }
  return out;
}

export function diffHeapSummaries(baseline: Map<string, HeapClass>, loaded: Map<string, HeapClass>, top = 15): HeapDiffRow[] {
  const rows: HeapDiffRow[] = [];
  for (const [name, entry] of loaded) {
    const before = baseline.get(name);
    rows.push({ name, countDelta: entry.count - (before?.count ?? 0), bytesDelta: entry.selfBytes - (before?.selfBytes ?? 0) });
  }
  return rows.sort((a, b) => b.bytesDelta - a.bytesDelta).slice(0, top);
}
