/**
 * An MCP stdio server that never answers, not even `initialize`: it appends its start to
 * MCP_TEST_START_LOG as test/support/mcp-server.ts does, then waits to be killed. Plain JavaScript with
 * nothing to import, so it has logged its pid within milliseconds of starting, however loaded the
 * machine — the test of the connect timeout must find the server it asks to be stopped.
 */
import { appendFileSync } from 'node:fs';

if (process.env.MCP_TEST_START_LOG) appendFileSync(process.env.MCP_TEST_START_LOG, `${process.pid} stdio\n`);
setInterval(() => undefined, 60_000);
