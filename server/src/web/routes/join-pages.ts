/**
 * The join page of an invitation link, `/workspaces/join#<token>` (issue 41; docs/workspaces.md, "Pages"). The token
 * is in the fragment, which no request carries: the page's script (assets/join.js) posts it in a form's body, so it
 * reaches no address and no access log. Posted, the page shows what the invitation offers (the invitation service's
 * `preview`, refused as an acceptance would be); the button accepts it (`accept`, the API's own) and lands on the
 * workspace's page. The API's refusals (unknown, used, revoked or expired: one answer; another person's; a full
 * workspace) are pages of their own in the visitor's language.
 */
import type { Request, Router } from 'express';
import { ApiError } from '@secret-push/rules';
import type { MessageKey } from '../../i18n/i18n.js';
import { field } from '../forms.js';
import { PageError, type PageKit } from '../page-kit.js';
import { joinOfferPage, joinPage } from '../views/workspaces.js';
import { workspaceServices } from './workspace-pages.js';

/** An invitation's token: 43 characters of base64url (crypto/tokens.ts `newInvitationToken`). */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** Signed out, a post of the page goes to sign in and back to the page (join.js keeps the token meanwhile). */
const SIGN_IN = `/users/sign_in?next=${encodeURIComponent('/workspaces/join')}`;

/** The page of each refusal, by the API's error code. */
const REFUSALS: Partial<Record<ApiError['code'], { status: number; text: MessageKey }>> = {
  not_found: { status: 404, text: 'workspaces.join.invalid' },
  forbidden: { status: 403, text: 'workspaces.join.otherPerson' },
  validation_failed: { status: 422, text: 'workspaces.join.full' },
};

function tokenOf(form: FormData): string {
  const token = field(form, 'token').trim();
  // Whole links pasted into the field work too: the token is what follows `#`.
  const bare = token.includes('#') ? token.slice(token.lastIndexOf('#') + 1) : token;
  if (!TOKEN.test(bare))
    throw new PageError(422, { key: 'workspaces.join.title' }, { key: 'workspaces.join.malformed' });
  return bare;
}

/** Runs `call`; an API refusal becomes the page that says it. */
async function refusedAsPage<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const refusal = error instanceof ApiError ? REFUSALS[error.code] : undefined;
    if (!refusal) throw error;
    throw new PageError(refusal.status, { key: 'workspaces.join.title' }, { key: refusal.text });
  }
}

export function joinPages(router: Router, kit: PageKit): void {
  const ctxOf = (req: Request, userId: string) => kit.ctxOf(req, userId);

  router.get(
    '/workspaces/join',
    kit.pageRoute('/workspaces/join', async (_req, res, v) => {
      workspaceServices(kit);
      kit.send(res, 200, joinPage(v.viewer));
    }),
  );

  router.post(
    '/workspaces/join',
    kit.pageRoute('/workspaces/join', async (req, res, v) => {
      if (!v.user) return res.redirect(303, SIGN_IN);
      const form = await kit.postedForm(req, v);
      const token = tokenOf(form);
      const { invitations } = workspaceServices(kit);
      const offer = await refusedAsPage(() => invitations.preview(token, ctxOf(req, v.user!.userId)));
      kit.send(res, 200, joinOfferPage(v.viewer, offer, token));
    }),
  );

  router.post(
    '/workspaces/join/accept',
    kit.pageRoute('/workspaces/join/accept', async (req, res, v) => {
      if (!v.user) return res.redirect(303, SIGN_IN);
      const form = await kit.postedForm(req, v);
      const token = tokenOf(form);
      const { invitations } = workspaceServices(kit);
      const joined = await refusedAsPage(() => invitations.accept(token, ctxOf(req, v.user!.userId)));
      res.redirect(303, `/workspaces/${joined.id}`);
    }),
  );
}
