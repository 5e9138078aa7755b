/**
 * What the recorded AI SDK replays share (test/ai-sdk-recorded*.test.ts): which provider packages
 * this run proves — the dev dependencies (specification v3), or the newest majors (v4) that
 * `.ci/run` installs over them on its Node 24 line with `ACTORLOOP_AI_SDK=latest` — and a way to
 * replay a recorded non-streamed answer through the adapter, which only streams.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { simulateStreamingMiddleware, wrapLanguageModel } from 'ai';
import pkg from '../../package.json' with { type: 'json' };
import type { AiSdkLanguageModel } from '../../src/providers/ai-sdk/index.js';
import latest from './latest-majors.json' with { type: 'json' };

/** The provider packages the recorded replays go through. */
export const replayedPackages = ['@ai-sdk/google', '@ai-sdk/mistral', '@ai-sdk/amazon-bedrock', '@ai-sdk/openai-compatible'] as const;
export type ReplayedPackage = (typeof replayedPackages)[number];

/** True on the run that replays through the newest majors (ai 7's packages, Node 22+). */
export const newestMajors = process.env.ACTORLOOP_AI_SDK === 'latest';

/** The specification version the replayed packages speak on this run. */
export const replayedSpecification = newestMajors ? 'v4' : 'v3';

/** The version of `name` this run is meant to replay through: pinned in latest-majors.json, or the dev dependency. */
export function intendedVersion(name: ReplayedPackage): string {
  return newestMajors ? (latest as Record<string, string>)[name]! : pkg.devDependencies[name];
}

/** The version of `name` installed in node_modules (its package.json, which the packages do not export). */
export function installedVersion(name: ReplayedPackage): string {
  const file = join(import.meta.dirname, '..', '..', 'node_modules', name, 'package.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}

/**
 * The model with its `doStream` answered by its own `doGenerate` — the AI SDK's
 * `simulateStreamingMiddleware` — so a recorded non-streamed request (`/converse`, `stream: false`)
 * goes over the wire as it was recorded. The wrapper says specification v3 whatever it wraps: the
 * model's own version is kept, so the adapter builds the prompt the model's package reads.
 */
export function generatedAsStream(model: AiSdkLanguageModel): AiSdkLanguageModel {
  const wrapped = wrapLanguageModel({
    // ai 6 types the v3 model only; a v4 model's doGenerate answers in the same shape for what is replayed here.
    model: model as unknown as Parameters<typeof wrapLanguageModel>[0]['model'],
    middleware: simulateStreamingMiddleware(),
  });
  return {
    specificationVersion: model.specificationVersion,
    provider: model.provider,
    modelId: model.modelId,
    doStream: (options) => wrapped.doStream(options),
  };
}

/**
 * The cassettes of one folder under test/fixtures/recorded/ (`google`, `bedrock`, …), in name order,
 * each named by its file (without `.json`), prefixed with the folder when `prefixed`.
 */
export function recordedCassettes<T extends { name: string }>(wire: string, options: { prefixed?: boolean } = {}): T[] {
  const folder = join(import.meta.dirname, '..', 'fixtures/recorded', wire);
  return readdirSync(folder)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => {
      const name = file.replace(/\.json$/, '');
      return {
        ...(JSON.parse(readFileSync(join(folder, file), 'utf8')) as Omit<T, 'name'>),
        name: options.prefixed ? `${wire}/${name}` : name,
      } as T;
    });
}
