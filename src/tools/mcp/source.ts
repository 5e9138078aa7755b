import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { basename } from 'node:path';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { isRecord } from '../../util/is-record.js';

/**
 * A local MCP server to start as a child process and talk to over its stdin and stdout.
 *
 * @example
 * ```ts
 * const source: McpStdioSource = { command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/srv/docs'] };
 * ```
 */
export type McpStdioSource = {
  command: string;
  args?: readonly string[];
  /**
   * Variables for the server process, added to what it gets anyway — they never replace it, and win
   * over it where a name is in both. The server does not see the rest of this process's
   * environment (API keys and other secrets) unless you pass it here. What it gets anyway:
   * - the SDK's small safe default, from this process: `HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`,
   *   `USER` (on Windows `APPDATA`, `PATH`, `SYSTEMROOT`, `TEMP`, `USERPROFILE` and a few more);
   * - unless `inheritNetworkEnv: false`, this process's proxy and certificate-authority variables:
   *   `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`, `ALL_PROXY` (and their lowercase forms),
   *   `NODE_USE_ENV_PROXY`, `NODE_EXTRA_CA_CERTS`, `NODE_USE_SYSTEM_CA`, `SSL_CERT_FILE`,
   *   `SSL_CERT_DIR`, `REQUESTS_CA_BUNDLE`, `CURL_CA_BUNDLE`. A proxy URL with a password in it
   *   goes along: the server needs it to reach the network as this process does.
   *
   * `NODE_OPTIONS` is not passed (it carries hooks and debugger flags meant for this process): pass
   * it here if the server needs it.
   */
  env?: Readonly<Record<string, string>>;
  /**
   * Whether the server gets this process's proxy and certificate-authority variables (listed under
   * `env`). Default `true`; `false` leaves it the SDK's default and `env`, to set those variables
   * yourself or keep the server off the proxy.
   */
  inheritNetworkEnv?: boolean;
  cwd?: string;
  /** Where the server's stderr goes. Default `'inherit'` (this process's stderr). */
  stderr?: 'inherit' | 'ignore';
};

/**
 * A remote MCP server over streamable HTTP.
 *
 * @example
 * ```ts
 * const source: McpHttpSource = { url: 'https://mcp.example.com/mcp', headers: { authorization: `Bearer ${token}` } };
 * ```
 */
export type McpHttpSource = {
  url: string | URL;
  /** Sent with every request (authorization, tenant, …). */
  headers?: Readonly<Record<string, string>>;
};

/**
 * Where the tools come from: an SDK `Client` you connected yourself (you own its connection), or a
 * description actorloop connects with — and reconnects with after a crash or a lost session.
 *
 * @example
 * ```ts
 * const fromClient: McpSource = client; // new Client(...) after `await client.connect(transport)`
 * const fromProcess: McpSource = { command: 'node', args: ['server.js'] };
 * const fromUrl: McpSource = { url: 'http://127.0.0.1:3001/mcp' };
 * ```
 */
export type McpSource = Client | McpStdioSource | McpHttpSource;

/** A source sorted by kind, checked. */
export type ResolvedSource =
  | { kind: 'client'; client: Client; label: string }
  | { kind: 'stdio'; stdio: McpStdioSource; label: string }
  | { kind: 'http'; url: URL; headers: Record<string, string>; label: string };

const isClient = (value: unknown): value is Client =>
  isRecord(value) &&
  typeof value.callTool === 'function' &&
  typeof value.listTools === 'function' &&
  typeof value.setNotificationHandler === 'function';

function stringRecord(value: unknown, option: string): Record<string, string> {
  if (value === undefined) return {};
  if (!isRecord(value) || !Object.values(value).every((entry) => typeof entry === 'string')) {
    throw new InvalidOptionsError(option, 'an object of string values', value);
  }
  return { ...(value as Record<string, string>) };
}

const sourceExpected =
  'a connected MCP SDK Client, { command, args?, env?, inheritNetworkEnv?, cwd?, stderr? } to start a stdio server, or { url, headers? } for streamable HTTP';

const stdioKeys = ['command', 'args', 'env', 'inheritNetworkEnv', 'cwd', 'stderr'];
const httpKeys = ['url', 'headers'];

/** Checks a source, naming what is wrong. */
export function resolveSource(source: unknown): ResolvedSource {
  if (isClient(source)) return { kind: 'client', client: source, label: 'server of the MCP client' };
  if (!isRecord(source)) throw new InvalidOptionsError('source', sourceExpected, source);
  const known = 'command' in source ? stdioKeys : 'url' in source ? httpKeys : [];
  for (const key of Object.keys(source)) {
    if (known.length > 0 && !known.includes(key)) {
      throw new InvalidOptionsError(
        `source.${key}`,
        `one of ${known.join(', ')} (a ${known === stdioKeys ? 'stdio' : 'streamable HTTP'} source)`,
        'an unknown key',
      );
    }
  }
  if ('command' in source) {
    const { command, args = [], cwd, stderr, inheritNetworkEnv } = source;
    if (typeof command !== 'string' || command === '') throw new InvalidOptionsError('source.command', 'a non-empty string', command);
    if (!Array.isArray(args) || !args.every((arg) => typeof arg === 'string')) {
      throw new InvalidOptionsError('source.args', 'an array of strings', args);
    }
    if (cwd !== undefined && typeof cwd !== 'string') throw new InvalidOptionsError('source.cwd', 'a directory path', cwd);
    if (stderr !== undefined && stderr !== 'inherit' && stderr !== 'ignore') {
      throw new InvalidOptionsError('source.stderr', '"inherit" or "ignore"', stderr);
    }
    if (inheritNetworkEnv !== undefined && typeof inheritNetworkEnv !== 'boolean') {
      throw new InvalidOptionsError('source.inheritNetworkEnv', 'a boolean', inheritNetworkEnv);
    }
    const env = source.env === undefined ? undefined : stringRecord(source.env, 'source.env');
    const stdio: McpStdioSource = {
      command,
      args: [...(args as string[])],
      ...(env ? { env } : {}),
      ...(inheritNetworkEnv === undefined ? {} : { inheritNetworkEnv }),
      ...(cwd ? { cwd } : {}),
      ...(stderr ? { stderr } : {}),
    };
    // Labels go into error texts the model reads: the program's name, not where it lives.
    return { kind: 'stdio', stdio, label: `stdio server "${basename(command)}"` };
  }
  if ('url' in source) {
    let url: URL;
    try {
      url = new URL(source.url instanceof URL ? source.url.href : String(source.url));
    } catch {
      throw new InvalidOptionsError('source.url', 'an http(s) URL', source.url);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new InvalidOptionsError('source.url', 'an http(s) URL', source.url);
    return {
      kind: 'http',
      url,
      headers: stringRecord(source.headers, 'source.headers'),
      // Only the origin: some services put a secret in the path.
      label: `HTTP server ${url.origin}`,
    };
  }
  throw new InvalidOptionsError('source', sourceExpected, source);
}
