/**
 * The chat's routes as one Fetch API handler:
 *
 *   POST /api/chat                 useChat's requests: a message, or answers to approvals → the UI message stream
 *   GET  /api/chat/:id/stream      the answer in progress, replayed then live (useChat's `resume: true`); 204 when none
 *   GET  /api/chat/:id/messages    the conversation as UI messages (the page's initial messages)
 *   GET  /, /assets/*              the page, when a built page folder is given
 */
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import type { ConversationHost } from 'actorloop';
import {
  type ChatAuthorize,
  type ChatRequestOptions,
  chatIdProblem,
  chatMessages,
  handleChatRequest,
  problemResponse,
  resumeChatStream,
} from '../../src/http/ui-message/index.js';

export type ChatRoutesOptions = {
  authorize: ChatAuthorize;
  /** More of `handleChatRequest`'s options (`sessionData`, `maxBodyBytes`, …). */
  chat?: Omit<ChatRequestOptions, 'authorize'>;
  /** The built page (vite's `outDir`): served at `/`. */
  pageDir?: string;
  /** Headers added to every response of the page (e.g. a session cookie), given the request. */
  pageHeaders?: (request: Request) => Record<string, string>;
};

const contentTypes: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

const chatPath = /^\/api\/chat\/([^/]+)\/(stream|messages)$/;

export function chatRoutes(host: ConversationHost, options: ChatRoutesOptions): (request: Request) => Promise<Response> {
  const notFound = () => problemResponse({ status: 404, detail: 'no such route' });

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
    if (pathname === '/api/chat') return handleChatRequest(host, request, { ...options.chat, authorize: options.authorize });
    const match = chatPath.exec(pathname);
    if (match) {
      if (request.method !== 'GET')
        return problemResponse({ status: 405, detail: `expected GET, got ${request.method}` }, { allow: 'GET' });
      let id: string;
      try {
        id = decodeURIComponent(match[1] as string);
      } catch {
        return problemResponse({ status: 400, detail: 'id: not a valid percent-encoded path segment', field: 'id' });
      }
      const bad = chatIdProblem(id);
      if (bad) return problemResponse(bad);
      let allowed: boolean;
      try {
        allowed = await options.authorize(request, id);
      } catch {
        return problemResponse({ status: 401, detail: 'not authenticated' });
      }
      if (!allowed) return problemResponse({ status: 403, detail: 'not allowed' });
      if (match[2] === 'stream') return resumeChatStream(host, id);
      try {
        return Response.json(await chatMessages(host, id), { headers: { 'cache-control': 'no-store' } });
      } catch {
        return problemResponse({ status: 500, detail: 'the conversation could not be read' });
      }
    }
    if (request.method === 'GET') return page(request, pathname);
    return notFound();
  };
}
