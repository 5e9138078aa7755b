/**
 * The command line of the examples that serve HTTP: `--port` (or PORT), `--host`, `--db` (or
 * DB_PATH), checked; a bad port ends the process with a line saying so.
 */
import { parseArgs } from 'node:util';

export function serviceArguments(defaults: { port: string; db: string }): { port: number; host: string; db: string } {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: process.env.PORT ?? defaults.port },
      host: { type: 'string', default: '127.0.0.1' },
      db: { type: 'string', default: process.env.DB_PATH ?? defaults.db },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    console.error(`--port: expected an integer from 0 to 65535, got ${JSON.stringify(values.port)}`);
    process.exit(2);
  }
  return { port, host: values.host, db: values.db };
}

/** What the examples print when no key or base URL makes them go live. */
export const scriptedModelMode = {
  live: false,
  label: 'a SCRIPTED model (handlerProvider, in this process; set OPENAI_API_KEY, ANTHROPIC_API_KEY or OPENAI_BASE_URL to go live)',
} as const;
