/**
 * The chat service: a durable host on SQLite with three tools (one needs approval, one answers with
 * an image), the chat routes, and the built page, on node:http. Who may use a conversation: the
 * browser that started it (a session cookie set with the page; conversations are claimed by the
 * first session that uses them, kept in memory, as an example's authorization does).
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type ConversationHost,
  createConversationHost,
  createConversationMachine,
  defineTool,
  type Provider,
  toolContent,
} from 'actorloop';
import { sqliteStore } from 'actorloop/sqlite';
import { z } from 'zod';
import { barChartPng } from './chart-png.js';
import { toNodeListener } from './node-listener.js';
import { maxAttachmentBytes } from './page/attachments.js';
import { chatRoutes } from './routes.js';

export type ChatServerOptions = {
  provider: Provider;
  /** The SQLite file the conversations live in. */
  db: string;
  /** The built page (see build-page.ts). */
  pageDir: string;
  port?: number;
  hostname?: string;
};

export type ChatServer = { url: string; host: ConversationHost; close: () => Promise<void> };

const sessionCookie = 'chat_session';

function sessionOf(request: Request): string | undefined {
  for (const pair of (request.headers.get('cookie') ?? '').split(';')) {
    const [name, value] = pair.trim().split('=');
    if (name === sessionCookie && value) return value;
  }
  return undefined;
}

/** The chat's tools: `add`, and `pay`, which waits for the user's approval (`paid` hears each payment). */
export function chatTools(options: { paid?: (amount: number) => void } = {}) {
  return [
    defineTool({
      name: 'add',
      description: 'Add two numbers',
      parameters: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => ({ sum: a + b }),
    }),
    defineTool({
      name: 'pay',
      description: 'Pay an amount in euros',
      parameters: z.object({ amount: z.number() }),
      needsApproval: true,
      execute: async ({ amount }) => {
        options.paid?.(amount);
        return `paid €${amount}`;
      },
    }),
  ];
}

/**
 * The `chart` tool: a bar chart of numbers, answered as text and a PNG image (`toolContent`), so the
 * model sees the picture and the page shows it. Apart from {@link chatTools}, whose `add` and `pay`
 * other services reuse beside a chart tool of their own.
 */
export function chartTool() {
  return defineTool({
    name: 'chart',
    description: 'Draw a bar chart of numbers; answers with the chart as an image',
    parameters: z.object({ values: z.array(z.number().min(0)).min(1).max(24) }),
    execute: async ({ values }) =>
      toolContent([
        { type: 'text', text: `A bar chart of ${values.join(', ')}:` },
        { type: 'image', data: barChartPng(values), mediaType: 'image/png' },
      ]),
  });
}

export async function startChatServer(options: ChatServerOptions): Promise<ChatServer> {
  const machine = createConversationMachine({
    provider: options.provider,
    system: 'You are a terse assistant. Use add for sums and chart to draw numbers; pay needs the user to approve it.',
    tools: [...chatTools(), chartTool()],
  });
  const host = createConversationHost({ machine, store: sqliteStore({ path: options.db }) });
  await host.recover();
  const owners = new Map<string, string>();
  const routes = chatRoutes(host, {
    pageDir: options.pageDir,
    // Attachments come inline as base64 (4/3 of their bytes), with room for the rest of the body.
    maxBodyBytes: Math.ceil((maxAttachmentBytes * 4) / 3) + 1_000_000,
    authorize: (request, id) => {
      const session = sessionOf(request);
      if (session === undefined) return false;
      const owner = owners.get(id);
      if (owner === undefined) owners.set(id, session);
      return (owner ?? session) === session;
    },
    pageHeaders: (request): Record<string, string> =>
      sessionOf(request) ? {} : { 'set-cookie': `${sessionCookie}=${randomBytes(16).toString('hex')}; Path=/; HttpOnly; SameSite=Strict` },
  });
  const server = createServer(toNodeListener(routes));
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.hostname ?? '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.hostname ?? '127.0.0.1'}:${port}`,
    host,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await host.close();
    },
  };
}
