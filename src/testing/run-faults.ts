import type { FaultInjector, FaultedCall } from '../actors/fault-injector.js';
import type { Provider, ProviderEvent, ProviderRequest } from '../model/provider.js';
import type { FaultMoment, FaultPlan, ProviderFault } from './fault-plan.js';
import type { Problem } from './soak-checks.js';

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

const untilAborted = (signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });

const injectedError = (message: string, fields: Record<string, unknown>) =>
  Object.assign(new Error(`${message} (injected by faultSoak)`), fields);

/**
 * The faults of one soak run, counted over the whole actor tree and across restores and kills: it
 * is the fault injector of every actor system the run makes (one per restore, one per host life).
 */
export class RunFaults implements FaultInjector {
  requests = 0;
  executions = 0;
  /** Stalled requests and hung tools still waiting for their signal. */
  waiting = 0;
  generation = 0;
  readonly injected = new Map<string, number>();
  /** Executions by call: the generations (actor incarnations) each ran in. */
  readonly ran = new Map<string, { generations: number[]; idempotent: boolean; toolName: string }>();
  /** The tools' own `execute`s not settled yet: one that outlives its run ignores its signal. */
  readonly running = new Set<FaultedCall>();
  /** Calls answered in the snapshot of the last restore (the last stored step, for a kill). */
  answeredAtRestore = new Set<string>();
  /** How violations name a restore: a hosted run is killed and recovered from its last stored step. */
  restoreWords = { restore: 'a restore', snapshot: 'the restored snapshot' };
  readonly problems: Problem[] = [];

  constructor(
    private readonly plan: FaultPlan,
    private readonly onStep: (on: FaultMoment['on'], index: number) => void,
    private readonly touch: () => void,
  ) {}

  /** Counts one fault of `kind` in the report (the run-level ones — cancel, restore, kill — included). */
  count(kind: string): void {
    this.injected.set(kind, (this.injected.get(kind) ?? 0) + 1);
    this.touch();
  }

  provider(provider: Provider, _request: { caller?: string }): Provider {
    // Not a copy: the prototype keeps the provider's other members (name, model, getters) as they are.
    const wrapped = Object.create(provider) as Provider & { stream: Provider['stream'] };
    wrapped.stream = (request: ProviderRequest) => {
      const index = this.requests++;
      this.onStep('request', index);
      const fault = this.plan.requests.find((entry) => entry.at === index)?.fault;
      if (!fault) return provider.stream(request);
      this.count(fault.kind === 'status' ? `status ${fault.status}` : fault.kind);
      return this.faulted(provider, request, fault);
    };
    return wrapped;
  }

  private async *faulted(provider: Provider, request: ProviderRequest, fault: ProviderFault): AsyncGenerator<ProviderEvent> {
    switch (fault.kind) {
      case 'status':
        throw injectedError(`HTTP ${fault.status}`, { status: fault.status });
      case 'reset':
        throw injectedError('socket hang up', { code: 'ECONNRESET' });
      case 'stall':
        await this.untilSignal(request.signal);
        return;
      case 'malformed':
        // An event the machine must refuse: a text delta without a string delta.
        yield { type: 'text.delta', delta: 42 } as unknown as ProviderEvent;
        return;
      case 'partial': {
        let sent = 0;
        for await (const event of provider.stream(request)) {
          if (event.type === 'finish' || sent >= fault.deltas) break;
          yield event;
          sent++;
        }
        throw injectedError('socket hang up mid-stream', { code: 'ECONNRESET' });
      }
    }
  }

  /** Waits, counted in `waiting`, until `signal` aborts; then fails with its reason, as an aborted request or tool does. */
  private async untilSignal(signal: AbortSignal): Promise<never> {
    this.waiting++;
    await untilAborted(signal);
    this.waiting--;
    this.touch();
    throw signal.reason;
  }

  tool(call: FaultedCall, execute: () => Promise<unknown>, signal: () => AbortSignal): Promise<unknown> {
    const index = this.executions++;
    this.onStep('tool', index);
    const fault = this.plan.tools.find((entry) => entry.at === index)?.fault;
    if (fault) this.count(`tool ${fault.kind}`);
    const run = () => {
      this.executed(call);
      return this.tracked(call, execute);
    };
    if (!fault) return run();
    switch (fault.kind) {
      case 'throw':
        return Promise.reject(injectedError(`${call.toolName} failed`, {}));
      case 'hang':
        return this.untilSignal(signal());
      case 'delay': {
        const aborted = signal();
        return sleep(fault.ms, aborted).then(() => {
          if (aborted.aborted) throw aborted.reason;
          return run();
        });
      }
    }
  }

  /** Runs the tool's `execute`, held in `running` until it settles. */
  private tracked(call: FaultedCall, execute: () => Promise<unknown>): Promise<unknown> {
    this.running.add(call);
    const settled = () => {
      this.running.delete(call);
    };
    let promise: Promise<unknown>;
    try {
      promise = execute();
    } catch (error) {
      settled();
      throw error;
    }
    promise.then(settled, settled);
    return promise;
  }

  /**
   * The injector of a killed host's actor systems. A killed process makes no request and runs no
   * tool: what its actors still start waits for its signal (counted in `waiting`), which fires when
   * the soak stops them, and is neither a step of the run nor an execution.
   */
  frozen(): FaultInjector {
    return {
      provider: (provider) => {
        const wrapped = Object.create(provider) as Provider & { stream: Provider['stream'] };
        wrapped.stream = (request: ProviderRequest) => this.frozenStream(request.signal);
        return wrapped;
      },
      tool: (_call, _execute, signal) => this.untilSignal(signal()),
    };
  }

  // biome-ignore lint/correctness/useYield: a request of a killed process never answers; it ends when its signal aborts.
  private async *frozenStream(signal: AbortSignal): AsyncGenerator<ProviderEvent> {
    await this.untilSignal(signal);
  }

  private executed(call: FaultedCall) {
    const key = `${call.caller ?? ''}/${call.toolCallId}`;
    const entry = this.ran.get(key) ?? { generations: [], idempotent: call.idempotent, toolName: call.toolName };
    if (this.generation > 0 && this.answeredAtRestore.has(call.toolCallId))
      this.problems.push({
        check: 'execution',
        message: `${call.toolName} call ${call.toolCallId} ran again after ${this.restoreWords.restore}, though ${this.restoreWords.snapshot} already held its result`,
      });
    if (!call.idempotent && entry.generations.length > 0)
      this.problems.push({
        check: 'execution',
        message: `${call.toolName} call ${call.toolCallId} (not idempotent) ran twice${entry.generations.includes(this.generation) ? ' in one actor' : `, before and after ${this.restoreWords.restore}`}`,
      });
    entry.generations.push(this.generation);
    this.ran.set(key, entry);
  }
}
