import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import pkg from '../package.json' with { type: 'json' };

/**
 * Which MCP SDK the MCP suites run against: the pinned dev copy under `npm test`, the floor of the
 * peer range under `npm run test:floor` (the `floor` project of vitest.config.ts aliases the SDK to `mcp-sdk-floor`).
 */
const versionOf = (directory: string) =>
  (JSON.parse(readFileSync(new URL(`../node_modules/${directory}/package.json`, import.meta.url), 'utf8')) as { version: string }).version;

describe('the MCP SDK under test', () => {
  it('is the version this run is meant to prove', async () => {
    const floorRun = process.env.XSTATE_FLOOR === '1';
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { Client: floorClient } = await import('mcp-sdk-floor/client/index.js');
    expect((Client as unknown) === floorClient).toBe(floorRun);
    expect(versionOf('@modelcontextprotocol/sdk')).toBe(pkg.devDependencies['@modelcontextprotocol/sdk']);
    expect(pkg.peerDependencies['@modelcontextprotocol/sdk']).toBe(`^${versionOf('mcp-sdk-floor')}`);
  });
});
