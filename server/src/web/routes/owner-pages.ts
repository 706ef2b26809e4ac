/** The owner's pages: active and expired lists, a push's audit log, and the Expire button. */
import type { Request, Router } from 'express';
import { PageError, type PageKit } from '../page-kit.js';
import { auditPage, listPage } from '../views/pushes.js';

export function ownerPages(router: Router, kit: PageKit): void {
  const { core } = kit;
  const pageNumber = (req: Request): number => {
    const raw = req.query.page;
    if (raw === undefined) return 1;
    if (typeof raw !== 'string' || !/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > 200) {
      throw new PageError(400, { key: 'error.noSuchPage.title' }, { key: 'error.noSuchPage.message' });
    }
    return Number(raw);
  };

  /** `?workspace_id=`: the workspace's list (a positive integer; anything else is the 404 page). */
  const workspaceOf = (req: Request): number | null => {
    const raw = req.query.workspace_id;
    if (raw === undefined) return null;
    if (typeof raw !== 'string' || !/^[1-9][0-9]{0,14}$/.test(raw))
      throw new PageError(404, { key: 'error.notFound.title' }, { key: 'workspaces.notFound' });
    return Number(raw);
  };

  for (const which of ['active', 'expired'] as const) {
    router.get(
      `/pushes/${which}`,
      kit.pageRoute(`/pushes/${which}`, async (req, res, v) => {
        if (!v.user) return kit.redirectToSignIn(req, res);
        const ctx = kit.ctxOf(req, v.user.userId);
        const workspaceId = workspaceOf(req);
        // The service judges the membership (403, as the API's list answers it) before anything is read.
        const result = await core.pushes.list(which, pageNumber(req), ctx, workspaceId);
        const workspace =
          workspaceId === null ? undefined : (await core.workspaces?.list(ctx))?.find((w) => w.id === workspaceId);
        kit.send(res, 200, listPage(v.viewer, which, result, workspace));
      }),
    );
  }

  router.get(
    '/pushes/:url_token/audit',
    kit.pageRoute('/pushes/:url_token/audit', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const urlToken = String(req.params.url_token ?? '');
      const result = await core.pushes.audit(urlToken, pageNumber(req), kit.ctxOf(req, v.user.userId));
      kit.send(res, 200, auditPage(v.viewer, urlToken, result));
    }),
  );

  router.post(
    '/pushes/:url_token/expire',
    kit.pageRoute('/pushes/:url_token/expire', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      await kit.postedForm(req, v);
      const urlToken = String(req.params.url_token ?? '');
      const push = await core.pushes.expire(urlToken, kit.ctxOf(req, v.user.userId));
      res.redirect(303, push.expired ? '/pushes/expired' : '/pushes/active');
    }),
  );
}
