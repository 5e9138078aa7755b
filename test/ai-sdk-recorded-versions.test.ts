/**
 * Which AI SDK provider packages the recorded replays (test/ai-sdk-recorded*.test.ts) go through:
 * the dev dependencies — ai 6's, specification v3 — under `npm test`; the newest majors — ai 7's,
 * specification v4, Node 22+ only — when `.ci/run` installed them over those on its Node 24 line
 * (ACTORLOOP_AI_SDK=latest, versions pinned in test/support/latest-majors.json). The same recordings
 * then prove both specifications.
 */
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createMistral } from '@ai-sdk/mistral';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };
import { aiSdkProvider } from '../src/providers/ai-sdk/index.js';
import {
  installedVersion,
  intendedVersion,
  newestMajors,
  type ReplayedPackage,
  replayedPackages,
  replayedSpecification,
} from './support/ai-sdk-recorded.js';
import latest from './support/latest-majors.json' with { type: 'json' };

const models: Record<ReplayedPackage, () => { specificationVersion: string }> = {
  '@ai-sdk/google': () => createGoogleGenerativeAI({ apiKey: 'unused' })('gemini-2.5-flash'),
  '@ai-sdk/mistral': () => createMistral({ apiKey: 'unused' })('mistral-small-latest'),
  '@ai-sdk/amazon-bedrock': () =>
    createAmazonBedrock({ region: 'us-east-1', accessKeyId: 'unused', secretAccessKey: 'unused' })('us.amazon.nova-2-lite-v1:0'),
  '@ai-sdk/openai-compatible': () => createOpenAICompatible({ baseURL: 'http://127.0.0.1:9', name: 'deepseek' })('deepseek-chat'),
};

const major = (version: string) => Number(version.split('.')[0]);

describe(`the AI SDK provider packages under test (${newestMajors ? 'the newest majors' : 'the dev dependencies'})`, () => {
  it.each(replayedPackages)('%s is the version this run is meant to prove, and its models speak that specification', (name) => {
    expect(installedVersion(name)).toBe(intendedVersion(name));
    const model = models[name]();
    expect(model.specificationVersion).toBe(replayedSpecification);
    expect(aiSdkProvider(model as Parameters<typeof aiSdkProvider>[0]).name).not.toBe('');
  });

  it('pins a newer major of each than the dev dependencies hold, so the switch changes what is proven', () => {
    const pins = latest as Record<string, string>;
    for (const name of replayedPackages) expect(major(pins[name]!), name).toBeGreaterThan(major(pkg.devDependencies[name]));
  });
});
