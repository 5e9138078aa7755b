import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { basename } from 'node:path';
import { InvalidOptionsError } from '../../errors/invalid-options-error.js';
import { isRecord } from '../../util/is-record.js';
import { requireNodeRuntime } from '../../util/runtime.js';
import { childPath, type OptionSchema, option } from '../../util/option-schema.js';

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

// Copied, so a change the caller makes later does not reach the connection.
const stringValues = option.transform(
  option.matching(
    'an object of string values',
    (value): value is Record<string, string> => isRecord(value) && Object.values(value).every((entry) => typeof entry === 'string'),
  ),
  (values) => ({ ...values }),
);

const sourceExpected =
  'a connected MCP SDK Client, { command, args?, env?, inheritNetworkEnv?, cwd?, stderr? } to start a stdio server, or { url, headers? } for streamable HTTP';

/**
 * `inner`, for a source whose keys are all `kind`'s. `option.object` refuses an unknown key as an
 * unknown option; this says which kind of source the other keys made it.
 */
function sourceKind<T>(kind: string, keys: readonly string[], inner: OptionSchema<T>): OptionSchema<T> {
  return {
    expected: inner.expected,
    resolve: (value, path) => {
      for (const key of isRecord(value) ? Object.keys(value) : []) {
        if (!keys.includes(key))
          throw new InvalidOptionsError(childPath(path, key), `one of ${keys.join(', ')} (a ${kind} source)`, 'an unknown key');
      }
      return inner.resolve(value, path);
    },
  };
}

const stdioSource = sourceKind(
  'stdio',
  ['command', 'args', 'env', 'inheritNetworkEnv', 'cwd', 'stderr'],
  option.transform(
    option.object(
      {
        command: option.string({ nonEmpty: true }),
        args: option.withDefault(
          option.matching(
            'an array of strings',
            (value): value is string[] => Array.isArray(value) && value.every((arg) => typeof arg === 'string'),
          ),
          [],
        ),
        cwd: option.optional(option.string({ expected: 'a directory path' })),
        stderr: option.optional(option.choice(['inherit', 'ignore'])),
        inheritNetworkEnv: option.optional(option.boolean()),
        env: option.optional(stringValues),
      },
      { unknownKeys: 'ignore' },
    ),
    ({ command, args, cwd, stderr, inheritNetworkEnv, env }): ResolvedSource => {
      requireNodeRuntime('An MCP server over stdio', 'connect to it over streamable HTTP ({ url }), or pass a connected MCP SDK Client');
      return {
        kind: 'stdio',
        stdio: {
          command,
          args: [...args],
          ...(env ? { env } : {}),
          ...(inheritNetworkEnv === undefined ? {} : { inheritNetworkEnv }),
          ...(cwd ? { cwd } : {}),
          ...(stderr ? { stderr } : {}),
        },
        // Labels go into error texts the model reads: the program's name, not where it lives.
        label: `stdio server "${basename(command)}"`,
      };
    },
  ),
);

function parseUrl(value: unknown): URL | undefined {
  try {
    return new URL(value instanceof URL ? value.href : String(value));
  } catch {
    return undefined;
  }
}

const httpUrl = option.transform(
  option.matching('an http(s) URL', (value): value is string | URL => {
    const protocol = parseUrl(value)?.protocol;
    return protocol === 'http:' || protocol === 'https:';
  }),
  (value) => parseUrl(value) as URL,
);

const httpSource = sourceKind(
  'streamable HTTP',
  ['url', 'headers'],
  option.transform(
    option.object(
      // A fresh object per source, as before, rather than one default object shared by every source.
      { url: httpUrl, headers: option.transform(option.optional(stringValues), (headers) => headers ?? {}) },
      { unknownKeys: 'ignore' },
    ),
    ({ url, headers }): ResolvedSource => ({
      kind: 'http',
      url,
      headers,
      // Only the origin: some services put a secret in the path.
      label: `HTTP server ${url.origin}`,
    }),
  ),
);

const sourceSchema = option.either<ResolvedSource>(sourceExpected, [
  [isClient, option.transform(option.unchecked<Client>(), (client) => ({ kind: 'client', client, label: 'server of the MCP client' }))],
  [(value) => isRecord(value) && 'command' in value, stdioSource],
  [(value) => isRecord(value) && 'url' in value, httpSource],
]);

/** Checks a source, naming what is wrong. */
export function resolveSource(source: unknown): ResolvedSource {
  return sourceSchema.resolve(source, 'source');
}
