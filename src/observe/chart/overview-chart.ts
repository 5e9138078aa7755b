import { partsOfGuard } from '../../machines/chart/combined-guards.js';
import type { Chart, ChartNote, ChartTransition } from './chart.js';
import { addArrow, chartStatesOf } from './full-chart.js';
import { asStateDefinition, type JsonObject, type StateDefinition } from './machine-definition.js';
import { camelCaseWords, childEvents, eventlessWords, eventWords, fallbackWords, type GuardWords, guardWords } from './overview-words.js';
import { invokeSourcesOf, type LabelledTransition, pathsOf, stateTransitions } from './transition-label.js';

/** A combined guard of the chart (`validMessageWithInputGuardrails`) or `and(a, b)` → its parts; any other guard is one part. */
function guardParts(guard: string | undefined): readonly string[] {
  if (guard === undefined) return [];
  const combined = partsOfGuard(guard);
  if (combined) return combined;
  const and = /^and\((.*)\)$/.exec(guard);
  return and?.[1] ? and[1].split(', ') : [guard];
}

/** The words a chart is told in: the conversation machine's own (its guards, events and states by name), or none. */
type Vocabulary = {
  /** Phrases that end alike are said once (`a or b (retries left)`): the conversation's words are made to. */
  grouped: boolean;
  guards: Record<string, GuardWords>;
  /** When a guard did not hold, in words (`undefined`: said no way). */
  negated: (guard: string) => string | undefined;
  events: Record<string, string>;
  eventless: Record<string, string>;
  fallbacks: Record<string, string>;
};

const conversationVocabulary: Vocabulary = {
  grouped: true,
  guards: guardWords,
  negated: (guard) => guardWords[guard]?.negated,
  events: eventWords,
  eventless: eventlessWords,
  fallbacks: fallbackWords,
};
// Another machine's `preparing` or `providerCall` is not the conversation's: its names are read as they are.
const plainVocabulary: Vocabulary = {
  grouped: false,
  guards: {},
  negated: (guard) => `not ${camelCaseWords(guard)}`,
  events: {},
  eventless: {},
  fallbacks: {},
};

function wordsOfGuard(guard: string, vocabulary: Vocabulary): string | null {
  const known = vocabulary.guards[guard];
  return known ? known.words : camelCaseWords(guard);
}

/**
 * A transition in words: what happened (the event), when it applies (its guard), and what earlier
 * transitions on the same event rule out (`request failed, no retry left` is the fallback after
 * `[canRetryFailure]`); a fallback nothing else names reads `otherwise`.
 */
function phrase(transition: LabelledTransition, earlier: LabelledTransition[], vocabulary: Vocabulary): string {
  const parts = guardParts(transition.guard);
  const event = vocabulary.events[transition.event] ?? transition.event;
  const words: string[] = [];
  const fallback = transition.isElse ? vocabulary.fallbacks[transition.event] : undefined;
  if (fallback) words.push(fallback);
  else if (event !== '') words.push(event);
  for (const part of parts) {
    const guard = wordsOfGuard(part, vocabulary);
    if (guard) words.push(guard);
  }
  let ruledOut = false;
  // Earlier guards on the same event that are this one's plus one more: that one more did not hold.
  for (const before of earlier) {
    if (before.eventType !== transition.eventType) continue;
    const beforeParts = guardParts(before.guard);
    const extra = beforeParts.filter((part) => !parts.includes(part));
    if (extra.length === 1 && beforeParts.length === parts.length + 1) {
      const negated = vocabulary.negated(extra[0] ?? '');
      if (negated && !words.includes(negated)) words.push(negated);
      if (negated) ruledOut = true;
    }
  }
  // Without it, the fallback's arrow would read as the guarded one's (`done: payer` beside `done: payer, finished`).
  if (transition.isElse && !fallback && !ruledOut && words.length > 0) words.push('otherwise');
  const eventless = transition.eventType === '' || transition.eventType === null;
  return words.join(', ') || (eventless ? vocabulary.eventless[transition.source.split('.').at(-1) ?? ''] : undefined) || transition.event;
}

/** Splits a phrase into lines of at most `width` characters, at spaces. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}

const maxLineLength = 24;
const plainLineLength = 32;

/**
 * Phrases that end alike are said once: `no response, retries left` and `timed out, retries left`
 * read `no response or timed out (retries left)`. Long phrases wrap.
 */
function compactLines(lines: string[], grouped: boolean): string[] {
  // A machine's own names run longer than the conversation's words, and split badly mid-phrase.
  if (!grouped) return lines.flatMap((line) => wrap(line, plainLineLength));
  const suffixOf = (line: string) => (line.includes(', ') ? line.slice(line.lastIndexOf(', ') + 2) : undefined);
  // Grouped by ending, in the order the endings first appear; a lone phrase is kept as it is.
  const groups = new Map<string, string[]>();
  for (const line of lines) {
    const key = suffixOf(line) ?? `\u0000${line}`;
    groups.set(key, [...(groups.get(key) ?? []), line]);
  }
  return [...groups.entries()].flatMap(([suffix, group]) => {
    if (group.length < 2) return group.flatMap((line) => wrap(line, maxLineLength));
    const heads = group.map((line) => line.slice(0, line.lastIndexOf(', ')));
    return [...wrap(`${heads.slice(0, -1).join(', ')} or ${heads.at(-1)}`, maxLineLength), `(${suffix})`];
  });
}

function isRejection(transition: LabelledTransition): boolean {
  const actions = transition.actions ?? [];
  return (
    (transition.target === undefined || transition.target.length === 0) &&
    actions.length > 0 &&
    actions.every((action) => typeof action === 'string' && action.startsWith('reject'))
  );
}

/**
 * The readable overview of a machine: its top-level states and only the transitions that move
 * between them, each arrow labelled in words (one line per transition, guards named in words).
 * What holds in every state — an event that leads every state to the same place (`cancel`), events
 * a state rejects without moving — is said once in a note instead of drawn from every state.
 * `leaveOut` draws a smaller picture: those top-level states and the arrows to them are left out,
 * named in a note with when a run goes there. `words: 'plain'` (for a machine other than a
 * conversation) reads guards and events by their own names, not the conversation's words for them.
 *
 * @example
 * ```ts
 * const chart = overviewChart(machineDefinitionJson(machine));
 * chart.transitions; // [{ source: 'idle', target: 'requesting', lines: ['user.message'] }, ...]
 * ```
 */
export function overviewChart(
  definition: JsonObject,
  options: { leaveOut?: ReadonlyArray<{ state: string; when: string }>; words?: 'conversation' | 'plain' } = {},
): Chart {
  const root = asStateDefinition(definition);
  const invokeSources = invokeSourcesOf(root);
  const pathOf = pathsOf(root);
  const vocabulary = options.words === 'plain' ? plainVocabulary : conversationVocabulary;
  const leftOut = new Set((options.leaveOut ?? []).map((entry) => entry.state));
  const topLevel = Object.values(root.states).filter((state) => !leftOut.has(state.key));
  // A state with an unguarded eventless transition is left at once and never takes an event.
  const transient = (state: StateDefinition) => (state.always ?? []).some((transition) => transition.guard === undefined);
  const running = topLevel.filter((state) => state.type !== 'final' && !transient(state));
  const topOf = (stateId: string) => pathOf(stateId).split('.')[0] ?? '';

  const perState = new Map<StateDefinition, LabelledTransition[][]>();
  for (const state of topLevel) {
    const groups: LabelledTransition[][] = [];
    const visit = (node: StateDefinition) => {
      groups.push(stateTransitions(node, invokeSources, pathOf));
      for (const child of Object.values(node.states)) visit(child);
    };
    visit(state);
    perState.set(state, groups);
  }

  // An event that takes every running state to the same state, unguarded, is said once — when
  // there are enough of them that arrows from each would crowd the picture.
  const everywhere = new Map<string, string>();
  const candidates = new Set(
    (running.length >= 3 ? (perState.get(running[0] ?? root) ?? []) : [])
      .flat()
      .flatMap((transition) => (transition.eventType ? [transition.eventType] : [])),
  );
  for (const eventType of candidates) {
    const targets = running.map((state) => {
      const own = perState.get(state)?.[0]?.find((transition) => transition.eventType === eventType && transition.guard === undefined);
      return own?.target?.length === 1 ? topOf(own.target[0] ?? '') : undefined;
    });
    const first = targets[0];
    if (first !== undefined && targets.every((target) => target === first)) everywhere.set(eventType, first);
  }

  // An event that takes several busy states to one same state (the time budget, an interrupt) is
  // said once too, naming the states; where it leads elsewhere it keeps its arrows.
  const fromMany = new Map<string, { target: string; sources: string[] }>();
  const eventTypes = new Set(
    running.flatMap((state) =>
      (perState.get(state) ?? []).flat().flatMap((transition) => (transition.eventType ? [transition.eventType] : [])),
    ),
  );
  for (const eventType of eventTypes) {
    if (everywhere.has(eventType) || eventType.startsWith('xstate.') || eventType === 'tool.approve' || eventType === 'tool.deny') continue;
    const byTarget = new Map<string, string[]>();
    for (const state of running) {
      const own = (perState.get(state)?.[0] ?? []).filter(
        (transition) => transition.eventType === eventType && (transition.target?.length ?? 0) > 0,
      );
      const targets = new Set(own.flatMap((transition) => (transition.target ?? []).map(topOf)));
      const only = targets.size === 1 ? [...targets][0] : undefined;
      if (only !== undefined && only !== topOf(state.id)) byTarget.set(only, [...(byTarget.get(only) ?? []), topOf(state.id)]);
    }
    for (const [target, sources] of byTarget) if (sources.length >= 3) fromMany.set(eventType, { target, sources });
  }
  const saidOnce = (transition: LabelledTransition, source: string) => {
    const many = transition.eventType ? fromMany.get(transition.eventType) : undefined;
    return many?.sources.includes(source) === true;
  };

  const transitions: ChartTransition[] = [];
  const rejected = new Set<string>();
  for (const state of topLevel) {
    const source = topOf(state.id);
    for (const group of perState.get(state) ?? []) {
      group.forEach((transition, index) => {
        if (transition.eventType && everywhere.has(transition.eventType)) return;
        if (saidOnce(transition, source)) return;
        if (isRejection(transition)) {
          if (!transition.event.includes(':') && !childEvents.has(transition.event)) rejected.add(transition.event);
          return;
        }
        for (const targetId of transition.target ?? []) {
          const target = topOf(targetId);
          if (target !== source && !leftOut.has(target))
            addArrow(transitions, source, target, phrase(transition, group.slice(0, index), vocabulary));
        }
      });
    }
  }

  for (const transition of transitions) transition.lines = compactLines(transition.lines, vocabulary.grouped);
  const notes: ChartNote[] = [];
  for (const [eventType, target] of everywhere)
    notes.push({ text: `${eventType} → ${target}, from any state but a final one`, state: target, events: [eventType] });
  for (const [eventType, { target, sources }] of fromMany) {
    const others = running.map((state) => topOf(state.id)).filter((state) => !sources.includes(state));
    const from = others.length < sources.length ? `any state but ${others.join(', ')} and the final ones` : sources.join(', ');
    notes.push({ text: `${eventType} → ${target}, from ${from}`, state: target, events: [eventType] });
  }
  if (rejected.size > 0) notes.push({ text: `${[...rejected].join(', ')} out of turn → event.rejected, state unchanged` });
  if (leftOut.size > 0) {
    const states = (options.leaveOut ?? []).map(({ state, when }) => `${state} (${when})`).join(', ');
    notes.push({ text: `opt-in states not drawn here — ${states}`, state: topOf(running[0]?.id ?? root.id) });
  }
  const states = chartStatesOf(root, 1).filter((state) => !leftOut.has(state.path));
  return { id: root.id, states, transitions, notes };
}
