/**
 * The service's Hono app: `/health` for the load balancer, and actorloop/http's conversation
 * routes under `/api`, authorized by a bearer token. Everything else about the routes — bodies,
 * statuses, problems, the event stream — is actorloop/http's (docs/http.md).
 */
import { timingSafeEqual } from 'node:crypto';
import type { ConversationHost, ConversationStore } from 'actorloop';
import { createConversationHandler } from 'actorloop/http';
import { Hono } from 'hono';

export type AppOptions = { host: ConversationHost; store: ConversationStore; token: string };

/** Whether `request` carries `token` as its bearer token (compared in constant time). */
export function hasToken(request: Request, token: string): boolean {
  const given = /^Bearer (\S+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
  if (given === undefined) return false;
  const [a, b] = [Buffer.from(given), Buffer.from(token)];
  return a.length === b.length && timingSafeEqual(a, b);
}

export function createApp({ host, store, token }: AppOptions) {
  const handler = createConversationHandler(host, {
    // One token for the whole service: a request without it is not authenticated (401). A service
    // with users would look the user up here and return whether they own `conversationId` (403 if not).
    authorize: (request) => {
      if (!hasToken(request, token)) throw new Error('no valid bearer token');
      return true;
    },
    basePath: '/api',
    store,
  });
  const app = new Hono();
  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.all('/api/*', (c) => handler(c.req.raw));
  return app;
}
