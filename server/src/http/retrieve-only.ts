/**
 * The public gateway (`PWPUSH_MODE=retrieve-only`, docs/deploy.md): an instance on the same database as the internal
 * one, reachable from the internet, that serves what a link's recipient opens and answers 404 to everything else, as
 * Password Pusher's public gateway does. Both lists below are allow-lists: an operation added to a contract, or a page
 * added to the web router, is refused here until it is named (server/test/api/retrieve-only.test.ts probes every
 * operation of both contracts and every route of the web router).
 *
 * The retrieval side:
 * - a push's recipient: its pages (`/p/{token}`, `/p/{token}/r`) and their steps (reveal, delete, and issue 42's
 *   `access_code` and `open` forms of a push for specific people), the API's
 *   retrieval (`getPush`), preview, file downloads and the expiry a viewer may do (`expirePush`: the recipient page
 *   offers "Delete now" when the push is deletable by viewers; it only removes a secret);
 * - a request's responder (issue 24): the responder's page (`/r/{token}`) and `getRequest` / `respondToRequest`. An
 *   answer writes a push, but only with a request link made on the internal instance, once, owned by and counted
 *   against the requester: it is how a stranger hands a secret in, the other half of a retrieval. An instance that
 *   wants none of it sets `PWPUSH_ENABLE_REQUESTS=false` on the gateway;
 * - the version report (clients read it to pick their dialect), the probes, `/metrics` and the pages' assets.
 *
 * Everything else (creating pushes and requests, accounts and sign-in, API keys, webhooks, the owner's lists and audit
 * logs, emailing a link, the API documentation) is an unknown path there: 404 `no_route`.
 */
import type { NextFunction, Request, Response } from 'express';
import type { Settings } from '../config/settings.js';

/** The operations of both contracts (v2 and v1) a retrieve-only instance serves, by operationId. */
export const RETRIEVAL_OPERATIONS: ReadonlySet<string> = new Set([
  'getVersion',
  'getPush',
  'requestAccessCode',
  'previewPush',
  'downloadPushFile',
  'expirePush',
  'getRequest',
  'respondToRequest',
  'getVersionV1',
  'getPushV1',
  'previewPushV1',
  'expirePushV1',
]);

/** The web pages a retrieve-only instance serves: a method (HEAD goes with GET) and the whole path. */
const RETRIEVAL_PAGES: readonly { method: 'GET' | 'POST'; path: RegExp }[] = [
  { method: 'GET', path: /^\/p\/[^/]+(?:\/r)?\/?$/ },
  { method: 'POST', path: /^\/p\/[^/]+\/(?:reveal|delete|access_code|open)\/?$/ },
  { method: 'GET', path: /^\/r\/[^/]+\/?$/ },
  { method: 'POST', path: /^\/r\/[^/]+\/?$/ },
  { method: 'GET', path: /^\/assets\/.+$/ },
  { method: 'GET', path: /^\/brand\/[^/]+\/[^/]+$/ },
];

/** Which operations an instance serves: every one (null) in full mode, else the retrieval side's. */
export function servedOperations(settings: Pick<Settings, 'mode'>): ReadonlySet<string> | null {
  return settings.mode === 'retrieve-only' ? RETRIEVAL_OPERATIONS : null;
}

/** Whether a retrieve-only instance serves this page request. */
export function isRetrievalPage(method: string, path: string): boolean {
  const m = method === 'HEAD' ? 'GET' : method;
  return RETRIEVAL_PAGES.some((page) => page.method === m && page.path.test(path));
}

/**
 * The web router's first step on a retrieve-only instance: a page outside the retrieval side leaves the router
 * (`next('router')`), so the app's fallback answers it as an unknown path (404 `no_route`).
 */
export function retrievalPagesOnly(req: Request, _res: Response, next: NextFunction): void {
  next(isRetrievalPage(req.method, req.path) ? undefined : 'router');
}
