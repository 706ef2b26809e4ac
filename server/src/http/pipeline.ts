/**
 * The API's one pipeline. Every request to an API path (`isApiRequest`: v2 and the legacy v1, every operation) goes
 * through the same parts, in the order app.ts lists them once: the request's identity, the access log, one Host, the
 * process's runtime part (draining, request metrics), CORS, the per-client limit; then the edge of its document
 * (./api.ts `Edge.steps`: route, authenticate, read the body, authorize, validate, handle, serialize).
 *
 * Parts run on Node's own request and response: nothing of a framework is set on them. A part calls `next()` to go
 * on or `next(error)` (or throws, or rejects) to have the error answered; a part that answers (a CORS preflight, the
 * draining `/readyz`) simply does not call `next`. Errors before the edge are answered by the v2 error responder (the
 * limit's 429, a second Host header); the edge answers its own in its document's shape.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isV1Path } from '@secret-push/contract';
import { EVERY_ANSWER } from './answer.js';
import type { Edge } from './api.js';
import type { Next, Part } from './middleware.js';
import { targetPath, targetQuery } from './request-target.js';

/**
 * Paths the API answers: all of /api/ but the contract document the pages serve, and v1's `.json` paths under `/p/`,
 * `/f/` and `/r/` (never the recipient page's HTML: `/p/{url_token}.json` is v1's retrieval).
 */
function isApiRequest(path: string): boolean {
  return (path.startsWith('/api/') && path !== '/api/v2/openapi.json') || isV1Path(path);
}

/** Runs `parts`, then the edge of the request's document (v1 for isV1Path, else v2). */
export function apiPipeline(
  parts: readonly Part[],
  edges: { v2: Edge; v1: Edge },
): (req: IncomingMessage, res: ServerResponse, path: string) => void {
  return (req, res, path) => {
    // A preflight may be answered by CORS itself (the `cors` library ends the response): it carries every answer's
    // headers too, set here since that answer is not written by ./answer.ts.
    if (req.method === 'OPTIONS') for (const [name, value] of EVERY_ANSWER) res.setHeader(name, value);
    const edge = isV1Path(path) ? edges.v1 : edges.v2;
    let i = 0;
    const next: Next = (error?: unknown) => {
      if (error !== undefined && error !== null) return edges.v2.fail(res, error);
      const part = parts[i++];
      if (!part) {
        void edge.answer(req, res, path, targetQuery(req.url ?? ''));
        return;
      }
      try {
        const pending = part(req, res, next);
        if (pending) pending.then(undefined, (e: unknown) => next(e ?? new Error('Rejected promise')));
      } catch (e) {
        next(e ?? new Error('Thrown'));
      }
    };
    next();
  };
}

/** The path of a request for the API, or null when it is not one (the pages answer those). */
export function apiPathOf(req: IncomingMessage): string | null {
  const path = targetPath(req.url ?? '');
  return isApiRequest(path) ? path : null;
}
