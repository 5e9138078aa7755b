import type { AnyActorRef, AnyStateMachine } from 'xstate';

/** A machine's own names: the implementations XState looks up on a snapshot's machine. */
type Implementations = { actors: object; delays: object; guards: object; actions: object };

/**
 * The methods of XState's `StateMachine` that make snapshots, run a chart's mappers or evaluate its
 * guards (`getTransitionData`: a snapshot's `can` calls it alone): its constructor binds some to
 * the instance.
 */
const scopedMethods = [
  'transition',
  'microstep',
  'getInitialSnapshot',
  'getPersistedSnapshot',
  'restoreSnapshot',
  'start',
  'getTransitionData',
] as const;

/**
 * What {@link sharedChart} gives: machines over the one chart, and their settings for its mappers.
 *
 * @example
 * ```ts
 * const chart: SharedChart<Settings, Implementations> = sharedChart(() => buildChart());
 * ```
 */
export type SharedChart<TSettings, TImplementations> = {
  machineWith(settings: TSettings, implementations: TImplementations): AnyStateMachine;
  settingsOf(self: AnyActorRef): TSettings;
  currentSettings(): TSettings;
};

/**
 * One chart for many machines: its state nodes are built once per process (on first use), not once
 * per machine — a machine per tenant or per request would otherwise pay the whole chart each time.
 * XState looks a named guard, action, delay or actor up on the snapshot's machine, and a snapshot's
 * machine is the one its actor was made of: so `machineWith` makes an object over the shared chart
 * with implementations and settings of its own, and `provide` keeps that shape. The chart's own
 * mappers (context, invoke inputs, output) are handed `self`, never the machine: `settingsOf(self)`
 * gives them the settings of the machine `self` runs — or, in a pure traversal (xstate/graph,
 * `getNextSnapshot`) whose `self` is a stand-in, of the machine whose method is running. Guards are
 * handed neither: `currentSettings()` gives them the settings of the machine whose method is
 * running, which is where XState evaluates every guard.
 *
 * @example
 * ```ts
 * const chart = sharedChart<Settings, Implementations>(() => setup({ ... }).createMachine({ ... }));
 * const machine = chart.machineWith(settings, { actors, delays, guards, actions });
 * ```
 */
export function sharedChart<TSettings, TImplementations extends Implementations>(
  build: () => AnyStateMachine,
): SharedChart<TSettings, TImplementations> {
  const settingsKey = Symbol('actorloop.chartSettings');
  let chart: AnyStateMachine | undefined;
  /** The settings of the machine whose method is running. */
  let current: TSettings | undefined;

  function machineWith(settings: TSettings, implementations: TImplementations): AnyStateMachine {
    chart ??= build();
    const machine = Object.create(chart) as AnyStateMachine;
    const methods = Object.getPrototypeOf(chart) as Record<(typeof scopedMethods)[number], (...args: unknown[]) => unknown>;
    for (const name of scopedMethods) {
      const method = methods[name];
      // XState binds these to the machine it constructs: bound again, to this one, they make its
      // snapshots, and while they run its settings are the mappers'.
      const value = (...args: unknown[]) => {
        const outer = current;
        current = settings;
        try {
          return method.apply(machine, args);
        } finally {
          current = outer;
        }
      };
      Object.defineProperty(machine, name, { value, writable: true, configurable: true });
    }
    Object.defineProperties(machine, {
      implementations: { value: implementations, writable: true, configurable: true, enumerable: true },
      [settingsKey]: { value: settings },
      provide: {
        value: (more: Partial<TImplementations>) =>
          machineWith(settings, {
            actors: { ...implementations.actors, ...more.actors },
            delays: { ...implementations.delays, ...more.delays },
            guards: { ...implementations.guards, ...more.guards },
            actions: { ...implementations.actions, ...more.actions },
          } as TImplementations),
        writable: true,
        configurable: true,
      },
    });
    return machine;
  }

  /** `self` is an XState `Actor`, whose public `logic` is what it was made of. */
  function settingsOf(self: AnyActorRef): TSettings {
    const logic = (self as unknown as { logic?: Record<symbol, TSettings | undefined> }).logic;
    const settings = logic?.[settingsKey] ?? current;
    if (settings === undefined) throw new Error('a shared chart mapper ran outside its machine');
    return settings;
  }

  /** Guards run only inside the methods above (a transition, a step, a snapshot's `can`). */
  function currentSettings(): TSettings {
    if (current === undefined) throw new Error('a shared chart guard ran outside its machine');
    return current;
  }

  return { machineWith, settingsOf, currentSettings };
}
