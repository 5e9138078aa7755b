/** Entry of a worker process: runs the job in argv[2] and sends `{ ok, value | error }` to the parent. */
import type { Job } from './worker-process.js';

async function run(job: Job): Promise<unknown> {
  switch (job.kind) {
    case 's1':
      return (await import('./s1-overhead.js')).runS1Job(job);
    case 's1-ai-sdk':
      return (await import('./s1-ai-sdk.js')).runS1AiSdkJob(job);
    case 's2':
      return (await import('./s2-concurrency.js')).runS2Job(job);
    case 's3':
      return (await import('./s3-memory.js')).runS3Job(job);
    case 's4':
      return (await import('./s4-persistence.js')).runS4Job(job);
    case 's4-throughput':
      return (await import('./s4-persistence.js')).runS4ThroughputJob(job);
    case 'engine':
      return (await import('./engine.js')).runEngineJob(job);
    case 'profile':
      return (await import('./profile.js')).runProfileJob(job);
    case 'agents':
      return (await import('./agents.js')).agents(job);
    case 'controls':
      return (await import('./controls.js')).controls(job);
    case 'workflow':
      return (await import('./workflow.js')).workflow(job);
  }
}

const job = JSON.parse(process.argv[2] ?? '{}') as Job;
try {
  const value = await run(job);
  process.send?.({ ok: true, value }, () => process.exit(0));
} catch (error) {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  process.send?.({ ok: false, error: message }, () => process.exit(1));
}
