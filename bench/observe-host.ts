/**
 * HOST_OBSERVE: what watching a durable host's conversations costs. The same 5-tool-round
 * conversation as OBSERVE (zero-latency scripted model, ten text deltas per answer), each run a new
 * conversation of a host on `memoryStore()`: unwatched, followed through `actorloop/rx`
 * (`conversation$` and `text$` of `hostFeed(host, id)`), shown by the live viewer's
 * `watchHost(host)` (no page open), and traced by `traceHost(host)` into an in-memory exporter. CPU
 * µs per run, sides interleaved after a warm-up; medians, and each side's ratio to the unwatched host.
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { lastValueFrom, takeWhile, toArray } from 'rxjs';
import { type ConversationHost, createConversationHost, memoryStore } from '../src/index.js';
import { startLiveViewer } from '../src/observe/inspect/index.js';
import { traceHost } from '../src/observe/otel/index.js';
import { conversation$, hostFeed, isRunEnd, text$ } from '../src/observe/rx/index.js';
import { cpuNowUs, median } from './stats.js';
import { toolRoundsMachine } from './tool-rounds-machine.js';

export type HostObserveResult = {
  rounds: number;
  reps: number;
  warmup: number;
  sides: Array<{ side: string; cpuUs: number; ratio: number }>;
};

const sides = ['host', 'host + rx', 'host + viewer', 'host + otel'] as const;
type Side = (typeof sides)[number];

export async function observeHost(options: { rounds: number; reps: number; warmup: number }): Promise<HostObserveResult> {
  const { rounds, reps, warmup } = options;
  const machine = toolRoundsMachine({ rounds, words: 10 });
  const exporter = new InMemorySpanExporter();
  const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }).getTracer('bench');
  const viewer = await startLiveViewer({ maxRuns: 50 });
  const hosts: Record<Side, ConversationHost> = {
    host: createConversationHost({ machine, store: memoryStore() }),
    'host + rx': createConversationHost({ machine, store: memoryStore() }),
    'host + viewer': createConversationHost({ machine, store: memoryStore() }),
    'host + otel': createConversationHost({ machine, store: memoryStore() }),
  };
  const stopViewer = await viewer.watchHost(hosts['host + viewer']);
  const stopTracing = traceHost(hosts['host + otel'], { tracer });
  let serial = 0;

  const once = async (side: Side) => {
    const host = hosts[side];
    const id = `c-${++serial}`;
    const started = cpuNowUs();
    let updates: Promise<unknown> = Promise.resolve();
    let texts: { unsubscribe(): void } = { unsubscribe: () => undefined };
    if (side === 'host + rx') {
      const feed = hostFeed(host, id);
      updates = lastValueFrom(
        conversation$(feed).pipe(
          takeWhile((update) => !isRunEnd(update), true),
          toArray(),
        ),
      );
      texts = text$(feed).subscribe();
    }
    await host.send(id, { type: 'user.message', content: 'go' });
    const output = await host.result(id);
    await updates;
    texts.unsubscribe();
    if (output.status !== 'done' || output.iterations !== rounds) {
      throw new Error(`HOST_OBSERVE ${side}: ${output.status} after ${output.iterations}`);
    }
    const spent = cpuNowUs() - started;
    exporter.reset();
    return spent;
  };

  const samples: Record<Side, number[]> = { host: [], 'host + rx': [], 'host + viewer': [], 'host + otel': [] };
  try {
    for (let index = 0; index < warmup; index++) for (const side of sides) await once(side);
    for (let index = 0; index < reps; index++) {
      for (let offset = 0; offset < sides.length; offset++) {
        const side = sides[(index + offset) % sides.length] as Side;
        samples[side].push(await once(side));
      }
    }
  } finally {
    stopViewer();
    stopTracing();
    await viewer.close();
    for (const host of Object.values(hosts)) await host.close();
  }
  const bare = median(samples.host);
  return {
    rounds,
    reps,
    warmup,
    sides: sides.map((side) => ({ side, cpuUs: median(samples[side]), ratio: median(samples[side]) / bare })),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await observeHost({ rounds: 5, reps: 60, warmup: 20 });
  console.log(JSON.stringify(result, null, 2));
}
