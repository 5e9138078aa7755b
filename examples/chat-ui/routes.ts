/**
 * The chat's routes as one Fetch API handler: actorloop/http's handler under `/api`, which serves
 *
 *   POST /api/chat                 useChat's requests: a message, or answers to approvals → the UI message stream
 *   GET  /api/chat/:id/stream      the answer in progress, replayed then live (useChat's `resume: true`); 204 when none
 *   GET  /api/chat/:id/messages    the conversation as UI messages (the page's initial messages)
 *
 * (and the rest of its routes), and the page at `/` when a built page folder is given.
 */
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import type { ConversationHost } from 'actorloop';
import { type ConversationAuthorize, createConversationHandler } from 'actorloop/http';

export type ChatRoutesOptions = {
  authorize: ConversationAuthorize;
  /** The `sessionData` a chat turn's run gets, from the request. */
  sessionData?: (request: Request, conversationId: string) => unknown;
  /** The built page (vite's `outDir`): served at `/`. */
  pageDir?: string;
  /** Headers added to every response of the page (e.g. a session cookie), given the request. */
  pageHeaders?: (request: Request) => Record<string, string>;
  /** The largest request body the API reads (attachments come inline, as base64). Default the handler's, 1,000,000 bytes. */
  maxBodyBytes?: number;
};

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export function chatRoutes(host: ConversationHost, options: ChatRoutesOptions): (request: Request) => Promise<Response> {
  const api = createConversationHandler(host, {
    authorize: options.authorize,
    basePath: '/api',
    ...(options.maxBodyBytes === undefined ? {} : { maxBodyBytes: options.maxBodyBytes }),
    ...(options.sessionData ? { chatSessionData: options.sessionData } : {}),
  });
  const notFound = () => new Response('not found', { status: 404, headers: { 'content-type': 'text/plain; charset=utf-8' } });

  async function page(request: Request, path: string): Promise<Response> {
    if (!options.pageDir) return notFound();
    const file = normalize(path === '/' ? '/index.html' : path);
    if (!file.startsWith('/assets/') && file !== '/index.html') return notFound();
    try {
      const body = await readFile(join(options.pageDir, file));
      return new Response(body, {
        headers: { 'content-type': contentTypes[extname(file)] ?? 'application/octet-stream', ...options.pageHeaders?.(request) },
      });
    } catch {
      return notFound();
    }
  }

  return async (request) => {
    const { pathname } = new URL(request.url);
    if (pathname.startsWith('/api/')) return api(request);
    if (request.method === 'GET') return page(request, pathname);
    return notFound();
  };
}
