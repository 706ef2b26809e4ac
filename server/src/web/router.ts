/**
 * The pages people open: server-rendered HTML, one stylesheet, a little script, no framework. `createWebRouter` is
 * mounted by the app in front of the API's fallback; each area's routes live in ./routes. Every page sends the
 * headers of security.ts (strict CSP, no-store, no-referrer, noindex); every form post is checked for its CSRF token
 * and its origin. Each route names its template for the access log (`state(res).route`), so a push's token never
 * reaches a log line.
 */
import express, { type Request, type Response, type Router } from 'express';
import { BUNDLED_SPEC_PATH } from '@secret-push/contract';
import type { Core } from '../core.js';
import { state } from '../http/middleware.js';
import { retrievalPagesOnly } from '../http/retrieve-only.js';
import { createPageKit, visitorLocale } from './page-kit.js';
import { accountMailPages } from './routes/account-mail-pages.js';
import { accountPages } from './routes/account-pages.js';
import { adminPages } from './routes/admin-pages.js';
import { adminWorkspacePages } from './routes/admin-workspace-pages.js';
import { brandFiles } from './routes/brand-files.js';
import { apiKeyPages } from './routes/api-key-pages.js';
import { createPages } from './routes/create-pages.js';
import { docsPages } from './routes/docs-pages.js';
import { oidcPages } from './routes/oidc-pages.js';
import { joinPages } from './routes/join-pages.js';
import { ownerPages } from './routes/owner-pages.js';
import { recipientPages } from './routes/recipient-pages.js';
import { requestPages } from './routes/request-pages.js';
import { twoFactorPages } from './routes/two-factor-pages.js';
import { webhookPages } from './routes/webhook-pages.js';
import { workspaceKeyPages } from './routes/workspace-key-pages.js';
import { workspaceWebhookPages } from './routes/workspace-webhook-pages.js';
import { workspaceBrandPages } from './routes/workspace-brand-pages.js';
import { workspaceManagePages } from './routes/workspace-manage-pages.js';
import { workspacePages } from './routes/workspace-pages.js';
import { pageHeaders } from './security.js';
import { messagePage } from './views/layout.js';

export interface WebRouterOptions {
  /** The instant services decide expiry with (tests move it); default: the system clock. */
  clock?: () => Date;
  /** The bundled contract served at /api/v2/openapi.json and rendered at /help/api. */
  specPath?: string;
}

export function createWebRouter(core: Core, opts: WebRouterOptions = {}): Router {
  const router = express.Router();
  const kit = createPageKit(core, opts.clock);
  // The public gateway serves the recipients' pages only; every other page is an unknown path (../http/retrieve-only.ts).
  if (core.settings.mode === 'retrieve-only') router.use(retrievalPagesOnly);
  brandFiles(router, kit);
  docsPages(router, kit, opts.specPath ?? BUNDLED_SPEC_PATH, core.settings.publicBaseUrl);
  accountPages(router, kit);
  apiKeyPages(router, kit);
  webhookPages(router, kit);
  accountMailPages(router, kit);
  twoFactorPages(router, kit);
  oidcPages(router, kit);
  createPages(router, kit);
  recipientPages(router, kit);
  ownerPages(router, kit);
  requestPages(router, kit);
  adminPages(router, kit);
  adminWorkspacePages(router, kit);
  // The join page before the workspace's page: `/workspaces/join` is no workspace id.
  joinPages(router, kit);
  workspacePages(router, kit);
  workspaceManagePages(router, kit);
  workspaceKeyPages(router, kit);
  workspaceWebhookPages(router, kit);
  workspaceBrandPages(router, kit);

  // A path whose percent-escapes do not decode (`/p/%ZZ`) fails while the router matches a route with a parameter:
  // a client error, not a server failure. API paths go on to the API unchanged (it answers from the raw path); page
  // paths get a 400 page.
  router.use((error: unknown, req: Request, res: Response, next: (err?: unknown) => void) => {
    if (!(error instanceof URIError)) return next(error);
    if (req.path.startsWith('/api/')) return next();
    state(res).route = 'malformed_path';
    if (req.path.startsWith('/assets/')) {
      res.status(400).type('text/plain').send('Bad request');
      return;
    }
    pageHeaders(res);
    const viewer = {
      user: null,
      csrf: '',
      signupsEnabled: core.settings.enableSignups,
      retrieveOnly: core.settings.mode === 'retrieve-only',
      brand: kit.brands.forRequest(req),
      i18n: visitorLocale(req),
    };
    kit.send(
      res,
      400,
      messagePage(viewer, viewer.i18n.t('error.badLink.title'), viewer.i18n.t('error.badLink.message')),
    );
  });
  return router;
}
