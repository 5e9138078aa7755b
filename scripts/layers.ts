/**
 * The layer direction of the source tree (docs/architecture.md): each file belongs to one layer and
 * may import only from the layers listed for it. `cli`, `scale`, `observe` → `host` → `machines` →
 * `actors` → `providers` / `tools` → the neutral model. The public entry points (`src/index.ts` and
 * the subpath `index.ts` files named in `entryPoints`) may import anything below them. Inside
 * `machines`, `machineRooms` gives the rooms of the machine a direction of their own.
 */

/**
 * `entries`: of a layer it may import, the only files it may import — a narrow surface instead of
 * the whole room (the host sees the machine only through `src/machines/hostable.ts`).
 */
export type Layer = { name: string; paths: string[]; mayImport: string[]; entries?: Record<string, string[]> };

/** First match wins. */
export const layers: Layer[] = [
  // The neutral model: messages, usage, JSON, the `Provider` interface and provider-neutral errors,
  // over the error base and pure helpers; free of any wire, so every room may hold it.
  { name: 'model', paths: ['src/model/', 'src/errors/', 'src/util/'], mayImport: ['model'] },
  { name: 'providers', paths: ['src/providers/'], mayImport: ['model', 'providers'] },
  { name: 'tools', paths: ['src/tools/'], mayImport: ['model', 'tools'] },
  // Request middleware shapes a provider request through the Provider interface only.
  { name: 'middleware', paths: ['src/middleware/'], mayImport: ['model', 'middleware'] },
  // The machine knows providers only through the `Provider` interface (the model), never a wire.
  { name: 'actors', paths: ['src/actors/'], mayImport: ['model', 'tools', 'middleware', 'actors'] },
  { name: 'machines', paths: ['src/machines/'], mayImport: ['model', 'tools', 'middleware', 'actors', 'machines'] },
  // The host depends on a hostable machine, not on the conversation's internals.
  {
    name: 'host',
    paths: ['src/host/'],
    mayImport: ['model', 'tools', 'machines', 'host'],
    entries: { machines: ['src/machines/hostable.ts'] },
  },
  { name: 'stores', paths: ['src/stores/'], mayImport: ['model', 'host', 'stores'] },
  // The viewer is served on a port through http's Fetch-to-node:http listener (`serveViewer`).
  { name: 'observe', paths: ['src/observe/'], mayImport: ['model', 'tools', 'machines', 'host', 'http', 'observe'] },
  // HTTP over the host: the Fetch API and node:http only, no server library.
  { name: 'http', paths: ['src/http/'], mayImport: ['model', 'tools', 'machines', 'host', 'http'] },
  { name: 'scale', paths: ['src/scale/'], mayImport: ['model', 'tools', 'machines', 'host', 'stores', 'scale'] },
  // The agent served to other agents (DESIGN §20): an MCP server, an A2A server and remote A2A agents
  // as tools, over the host; HTTP through http's Fetch-to-node:http listener and its authorize.
  {
    name: 'protocols',
    paths: ['src/protocols/'],
    mayImport: ['model', 'tools', 'machines', 'host', 'http', 'protocols'],
  },
  // What users test their agents with (DESIGN §19): a scripted provider, cassettes, the fault soak, evals.
  // `actors` through its fault hook only: the soak injects faults where requests and tools run.
  {
    name: 'testing',
    paths: ['src/testing/'],
    mayImport: ['model', 'providers', 'tools', 'middleware', 'actors', 'machines', 'host', 'stores', 'testing'],
    entries: { actors: ['src/actors/fault-injector.ts'] },
  },
  {
    name: 'cli',
    paths: ['src/cli/'],
    mayImport: [
      'model',
      'providers',
      'tools',
      'middleware',
      'machines',
      'host',
      'stores',
      'observe',
      'scale',
      'http',
      'testing',
      'protocols',
      'cli',
    ],
  },
  // Not `scale`: its integrations need optional peers, and the root must load with none installed.
  {
    name: 'root',
    paths: ['src/index.ts'],
    mayImport: ['model', 'providers', 'tools', 'middleware', 'actors', 'machines', 'host', 'stores', 'observe', 'root'],
  },
];

export function layerOf(file: string): Layer | undefined {
  return claimOf(file, layers);
}

export type ImportEdge = { from: string; to: string; line: number };
export type LayerProblem = { file: string; line: number; message: string };

/** Relative imports of a TypeScript source (static, type-only, re-exports and dynamic imports). */
export function importsOf(source: string): Array<{ specifier: string; line: number }> {
  const found: Array<{ specifier: string; line: number }> = [];
  // Imports in comments (a TSDoc example) are not imports; blanked out, lines kept for the numbers.
  const code = source.replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' ')).replace(/^[ \t]*\/\/.*$/gm, '');
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;
  for (const match of code.matchAll(pattern)) {
    const specifier = match[1];
    if (specifier === undefined) continue;
    const line = code.slice(0, match.index + match[0].length).split('\n').length;
    found.push({ specifier, line });
  }
  return found;
}

/** Every import that goes against the direction, and every file no layer claims. */
export function findLayerProblems(edges: ImportEdge[], files: string[]): LayerProblem[] {
  const problems: LayerProblem[] = [];
  for (const file of files) {
    if (!layerOf(file)) problems.push({ file, line: 1, message: `${file} belongs to no layer: add its folder to scripts/layers.ts` });
  }
  for (const edge of edges) {
    const from = layerOf(edge.from);
    const to = layerOf(edge.to);
    if (!from || !to) continue;
    if (!from.mayImport.includes(to.name)) {
      problems.push({
        file: edge.from,
        line: edge.line,
        message: `${edge.from}:${edge.line} (${from.name}) imports ${edge.to} (${to.name}): ${from.name} may import only ${from.mayImport.join(', ')}`,
      });
      continue;
    }
    const entries = from.entries?.[to.name];
    if (entries && from !== to && !entries.includes(edge.to)) {
      problems.push({
        file: edge.from,
        line: edge.line,
        message: `${edge.from}:${edge.line} (${from.name}) imports ${edge.to}: ${from.name} may import ${to.name} only through ${entries.join(', ')}`,
      });
    }
  }
  return problems;
}

/**
 * The rooms of `src/machines` (docs/architecture.md), top of the direction first: each file of the
 * machine belongs to one room and may import only from the rooms listed for it. First match wins.
 */
export const machineRooms: Layer[] = [
  // What a host needs of the machine, and all it may import of it.
  { name: 'hostable', paths: ['src/machines/hostable.ts'], mayImport: ['workflow', 'snapshots', 'names'] },
  // The chart (conversation.ts) and its named guards, actions, delays, actors; the machine's options.
  {
    name: 'chart',
    paths: ['src/machines/chart/'],
    mayImport: ['chart', 'workflow', 'restore', 'controls', 'rounds', 'agents', 'policies', 'names'],
  },
  // Conversations inside the user's statecharts: verifyWorkflow, withBudget, conversationInput, the event relay.
  { name: 'workflow', paths: ['src/machines/workflow/'], mayImport: ['workflow', 'policies', 'names'] },
  // A stored run started again on XState: restoreOnXState, resume semantics, the journaled machine.
  {
    name: 'restore',
    paths: ['src/machines/restore/'],
    mayImport: ['restore', 'rounds', 'agents', 'policies', 'snapshots', 'names'],
  },
  // Run controls that change a run: guardrails, steering, compaction, fallback, failures, repair, budget halt.
  { name: 'controls', paths: ['src/machines/controls/'], mayImport: ['controls', 'rounds', 'agents', 'policies', 'names'] },
  // A request and its round: what a response means, the calls (agent calls too), their results, the run's context.
  { name: 'rounds', paths: ['src/machines/rounds/'], mayImport: ['rounds', 'agents', 'policies', 'snapshots', 'names'] },
  // What an agent is: defineAgent, agentTool, profiles, handoffs, the child machine.
  { name: 'agents', paths: ['src/machines/agents/'], mayImport: ['agents', 'names'] },
  // The rules a run is held to, as pure functions: prices and budget, retry, doom loop, output schema.
  { name: 'policies', paths: ['src/machines/policies/'], mayImport: ['policies', 'names'] },
  // The stored format: schema versions, migrations, what is wrong with a snapshot.
  { name: 'snapshots', paths: ['src/machines/snapshots/'], mayImport: ['snapshots'] },
  // The machine's shared names: its types, `Effects`, the conversation mark.
  { name: 'names', paths: ['src/machines/names/'], mayImport: ['names'] },
];

function claimOf(file: string, claims: Layer[]): Layer | undefined {
  return claims.find((claim) => claim.paths.some((path) => (path.endsWith('/') ? file.startsWith(path) : file === path)));
}

export function roomOf(file: string, rooms: Layer[] = machineRooms): Layer | undefined {
  return claimOf(file, rooms);
}

/**
 * Inside `src/machines`: every file in a room, every import between rooms in their direction, and
 * the rooms one way — neither the declared direction nor the imports between rooms go round in a
 * circle.
 */
export function findRoomProblems(edges: ImportEdge[], files: string[], rooms: Layer[] = machineRooms): LayerProblem[] {
  const inMachines = (file: string) => file.startsWith('src/machines/');
  const problems: LayerProblem[] = [];
  for (const file of files.filter(inMachines)) {
    if (!roomOf(file, rooms))
      problems.push({ file, line: 1, message: `${file} belongs to no room of src/machines: add it to machineRooms in scripts/layers.ts` });
  }
  const between: ImportEdge[] = [];
  for (const edge of edges) {
    if (!inMachines(edge.from) || !inMachines(edge.to)) continue;
    const from = roomOf(edge.from, rooms);
    const to = roomOf(edge.to, rooms);
    if (!from || !to || from === to) continue;
    between.push({ from: from.name, to: to.name, line: edge.line });
    if (!from.mayImport.includes(to.name)) {
      problems.push({
        file: edge.from,
        line: edge.line,
        message: `${edge.from}:${edge.line} (room ${from.name}) imports ${edge.to} (room ${to.name}): ${from.name} may import only ${from.mayImport.join(', ')}`,
      });
    }
  }
  const declared = rooms.flatMap((room) =>
    room.mayImport.filter((name) => name !== room.name).map((name) => ({ from: room.name, to: name, line: 1 })),
  );
  for (const circle of findImportCircles(declared)) {
    problems.push({ file: 'scripts/layers.ts', line: 1, message: `room circle in machineRooms: ${circle.join(' → ')}` });
  }
  for (const circle of findImportCircles(between)) {
    problems.push({ file: 'src/machines', line: 1, message: `room circle in the imports of src/machines: ${circle.join(' → ')}` });
  }
  return problems;
}

/**
 * Every import circle among the files (type-only imports too: a circle of types is still two files
 * that cannot be read one after the other), each once, as the files in import order back to the
 * first. DESIGN §15: no import circles inside a room.
 */
export function findImportCircles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  // Tarjan's strongly connected components: a component of two or more files holds a circle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file) as number);
    stack.push(file);
    onStack.add(file);
    for (const target of next.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file) as number, index.get(target) as number));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) circles.push(circleThrough(component.sort(), next));
  };
  for (const file of [...next.keys()].sort()) if (!index.has(file)) visit(file);
  return circles;
}

/** One circle through a component's first file, following imports inside the component. */
function circleThrough(component: string[], next: Map<string, string[]>): string[] {
  const members = new Set(component);
  const start = component[0] as string;
  const path = [start];
  const seen = new Set(path);
  for (;;) {
    const current = path.at(-1) as string;
    const targets = (next.get(current) ?? []).filter((target) => members.has(target));
    if (targets.includes(start) && path.length > 1) return [...path, start];
    const onward = targets.find((target) => !seen.has(target)) ?? targets[0];
    if (onward === undefined || seen.has(onward)) return [...path, onward ?? start];
    path.push(onward);
    seen.add(onward);
  }
}
