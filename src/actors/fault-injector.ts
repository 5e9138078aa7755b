import type { Provider } from '../model/provider.js';

/** A tool execution as a fault injector sees it. */
export type FaultedCall = {
  toolCallId: string;
  toolName: string;
  /** The tool is `idempotent`: running it twice does no harm. */
  idempotent: boolean;
  /** The id of the actor that runs the call (the conversation), to tell calls of different conversations apart. */
  caller?: string;
};

/**
 * Wraps what an actor system's provider requests and tool executions do, to inject faults (the
 * fault soak of `actorloop/testing`). `provider` is asked once per request for the provider to make
 * it with; `tool` runs one execution: it calls `execute` (or not) and settles as it chooses.
 */
export type FaultInjector = {
  provider(provider: Provider, request: { caller?: string }): Provider;
  tool(call: FaultedCall, execute: () => Promise<unknown>, signal: () => AbortSignal): Promise<unknown>;
};

const injectors = new WeakMap<object, FaultInjector>();

/**
 * Sets the fault injector of an actor system. Keyed by the system, as the execution gate is,
 * because the system is shared by a whole tree: a workflow's nested conversations and agent calls
 * get the faults too. Set it before the root actor starts.
 */
export function setFaultInjector(system: object, injector: FaultInjector): void {
  injectors.set(system, injector);
}

/** The fault injector of an actor system, if a soak set one (one WeakMap lookup per request or execution). */
export function faultInjectorOf(system: object): FaultInjector | undefined {
  return injectors.get(system);
}
