import { Session } from 'node:inspector/promises';

/**
 * V8's sampling heap profile of `times` calls of `work`, one after another, counting the objects
 * the GC has already collected too: what a side allocates, not what it keeps.
 *
 * @example
 * const profile = await allocationProfile(() => run('Add the numbers.'), 30, 512);
 */
export async function allocationProfile(work: () => Promise<unknown>, times: number, samplingInterval: number) {
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  // Not in Node 20's protocol types: the flags make the profile count objects the GC already collected.
  const samplingParams = { samplingInterval, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
  await session.post('HeapProfiler.startSampling', samplingParams as { samplingInterval: number });
  for (let index = 0; index < times; index++) await work();
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  return profile;
}
