/**
 * Who may open it (issue 42), the recipient page's forms, which work without JavaScript:
 *
 * - `POST /p/{token}/access_code` (the visitor's address): `requestAccessCode`, then a redirect back to the page
 *   (`?code_sent=1`, Post/Redirect/Get); the same answer whether or not the address is listed. A bad address (422) or
 *   the limit (429, Retry-After) shows the page again with the reason.
 * - `POST /p/{token}/open` (the code, and the passphrase when there is one): the retrieval with that code, answered
 *   with the secret itself (`openedPage`), since a spent view cannot be fetched again by a GET. A wrong code or
 *   passphrase shows the page again with the reason (401, as the API's; the code's failures are the passphrase's
 *   attempts, audited `failed_passphrase`; after a wrong passphrase the right code stays, not used up); a network the push leaves out gets its own page (403). Nothing is spent
 *   before every gate has passed. An end-to-end encrypted push is refused before anything is fetched: only the
 *   page's script can decrypt it.
 *
 * Both check the CSRF token and the origin of the form (`kit.postedForm`) before anything else happens.
 */
import type { Request, Response, Router } from 'express';
import { ApiError } from '@secret-push/rules';
import type { Push } from '@secret-push/sdk/generated';
import { field } from '../forms.js';
import { PageError, type PageKit } from '../page-kit.js';
import { viaProvider } from '../session.js';
import { recipientPage, signInRequiredPage } from '../views/recipient.js';
import { networkRefusedPage, openedPage, type AccessFormState } from '../views/recipient-access.js';
import type { Viewer } from '../views/layout.js';

type Visit = Parameters<Parameters<PageKit['pageRoute']>[1]>[2];

const CODE_ERRORS: ReadonlySet<string> = new Set(['access_code_required', 'access_code_incorrect']);
const PASSPHRASE_ERRORS: ReadonlySet<string> = new Set(['passphrase_required', 'passphrase_incorrect']);

function tokenOf(req: Request): string {
  return String(req.params.url_token ?? '');
}

/**
 * Which ways of proof the page offers this visitor: codes (an SMTP relay), the provider (when one is set, the visitor
 * is not signed in there, and the instance signs people in: a retrieve-only gateway has no sign-in pages).
 */
export function accessOffer(
  kit: PageKit,
  req: Request,
  v: Visit,
): Pick<AccessFormState, 'codes' | 'provider' | 'signedInAs'> {
  const { settings } = kit;
  const signedInAs = signedInEmailOf(kit, req, v);
  const oidc = settings.mode === 'retrieve-only' || signedInAs !== null ? null : settings.oidc;
  return { codes: settings.mail.smtpUrl !== null, provider: oidc ? oidc.providerName : null, signedInAs };
}

/** The address of a session begun at the single sign-on provider, which the provider verified; else null. */
export function signedInEmailOf(kit: PageKit, req: Request, v: Visit): string | null {
  return v.user && viaProvider(kit.sessions.read(req)?.factors) ? v.user.email : null;
}

export function recipientAccessPages(router: Router, kit: PageKit): void {
  const { core, settings } = kit;

  /** The recipient's page again, as its GET shows it, with the answer to a form (status: the refusal's). */
  async function again(req: Request, res: Response, v: Visit, status: number, state: Partial<AccessFormState>) {
    const ctx = kit.ctxOf(req, v.user?.userId ?? null);
    const found = await kit.web().pushPage(tokenOf(req), ctx, signedInEmailOf(kit, req, v));
    if (!found) throw new PageError(404, { key: 'error.notFound.title' }, { key: 'recipient.notFound' });
    const { push, access } = found;
    if (access.networkRefused && !push.expired) return kit.send(res, 403, networkRefusedPage(v.viewer));
    const reveal = v.user ? 'web' : 'api';
    const form = access.needsProof ? { access: { ...accessOffer(kit, req, v), ...state } } : {};
    kit.send(
      res,
      push.expired ? 200 : status,
      recipientPage(v.viewer, push, { retrievalPage: false, reveal, ...form }),
    );
  }

  /** A closed instance answers its signed-out visitors as the page's GET does: sign in first, nothing looked up. */
  function closedTo(res: Response, v: Visit, req: Request): boolean {
    if (v.user || settings.allowAnonymous) return false;
    kit.send(res, 401, signInRequiredPage(v.viewer, `/p/${encodeURIComponent(tokenOf(req))}`));
    return true;
  }

  router.post(
    '/p/:url_token/access_code',
    kit.pageRoute('/p/:url_token/access_code', async (req, res, v) => {
      if (closedTo(res, v, req)) return;
      const form = await kit.postedForm(req, v);
      const email = field(form, 'email').trim();
      const { t } = v.viewer.i18n;
      try {
        // The code's mail is written in this page's language.
        const ctx = kit.ctxOf(req, v.user?.userId ?? null);
        await core.pushes.requestAccessCode(tokenOf(req), email, ctx, v.viewer.i18n.locale);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        if (error.code === 'validation_failed')
          return again(req, res, v, 422, { email, fields: { email: [t('recipient.access.emailInvalid')] } });
        if (error.code !== 'rate_limited') throw error;
        const seconds = error.details.retryAfterSeconds ?? 60;
        res.setHeader('Retry-After', String(seconds));
        return again(req, res, v, 429, { email, error: t('js.recipient.tooManyWait', { seconds }) });
      }
      res.redirect(303, `/p/${encodeURIComponent(tokenOf(req))}?code_sent=1`);
    }),
  );

  router.post(
    '/p/:url_token/open',
    kit.pageRoute('/p/:url_token/open', async (req, res, v) => {
      if (closedTo(res, v, req)) return;
      const form = await kit.postedForm(req, v);
      const { t } = v.viewer.i18n;
      const ctx = kit.ctxOf(req, v.user?.userId ?? null);
      const signedInEmail = signedInEmailOf(kit, req, v);
      const found = await kit.web().pushPage(tokenOf(req), ctx, signedInEmail);
      if (!found) throw new PageError(404, { key: 'error.notFound.title' }, { key: 'recipient.notFound' });
      // Only the page's script holds the key: refused before a view or a code is spent.
      if (found.push.client_encryption && !found.push.expired)
        return again(req, res, v, 400, { error: t('recipient.noscript') });
      const code = field(form, 'access_code');
      if (found.access.needsProof && code.trim() === '')
        return again(req, res, v, 422, { fields: { access_code: [t('js.recipient.codeMissing')] } });
      const passphrase = field(form, 'passphrase');
      try {
        const opened = await core.pushes.retrieve(tokenOf(req), passphrase === '' ? undefined : passphrase, ctx, {
          proof: { accessCode: code === '' ? undefined : code, signedInEmail },
        });
        sendOpened(res, v.viewer, opened);
      } catch (error) {
        if (!(error instanceof ApiError)) throw error;
        if (error.code === 'network_not_allowed') return kit.send(res, 403, networkRefusedPage(v.viewer));
        if (CODE_ERRORS.has(error.code))
          return again(req, res, v, 401, { fields: { access_code: [t('js.recipient.codeWrong')] } });
        // The code was right, and is not used up by a wrong passphrase: it stays in its field for the next try.
        if (PASSPHRASE_ERRORS.has(error.code))
          return again(req, res, v, 401, {
            code: code.trim(),
            fields: { passphrase: [t('js.recipient.passphraseWrong')] },
          });
        if (error.code !== 'too_many_attempts') throw error;
        const seconds = error.details.retryAfterSeconds ?? 60;
        res.setHeader('Retry-After', String(seconds));
        return again(req, res, v, 429, { error: t('js.recipient.tooManyWait', { seconds }) });
      }
    }),
  );

  function sendOpened(res: Response, viewer: Viewer, opened: Push & Parameters<typeof openedPage>[1]) {
    if (opened.expired) kit.send(res, 200, recipientPage(viewer, opened, { retrievalPage: false, reveal: 'api' }));
    else kit.send(res, 200, openedPage(viewer, opened));
  }
}
