/** The token page's API keys: make one (name, scopes, expiry; its token shown once) and revoke one. */
import type { Router } from 'express';
import { API_KEY_SCOPES, ApiError, isApiKeyScope } from '@secret-push/rules';
import { apiKeyRecord } from '../../http/handlers/api-key-handlers.js';
import type { Translator } from '../../i18n/i18n.js';
import type { NewApiKey } from '../../user/api-keys.js';
import { field } from '../forms.js';
import type { PageKit } from '../page-kit.js';
import { KEY_LIFETIMES_DAYS, tokenPage } from '../views/accounts.js';
import { fieldsLine } from '../field-text.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The key form → a new key, or what is wrong with it (said for people, never echoing what was sent). */
export function keyFromForm(form: FormData, now: Date, t: Translator['t']): NewApiKey | string {
  const name = field(form, 'name').trim();
  if (name.length < 1 || name.length > 100 || /[\u0000-\u001f\u007f]/.test(name)) return t('apiKeys.error.name');
  const sent = form.getAll('scopes');
  if (sent.length > API_KEY_SCOPES.length) return t('apiKeys.error.scopeTwice');
  const scopes = [...new Set(sent)].filter(isApiKeyScope);
  if (scopes.length !== sent.length) return t('apiKeys.error.scopeUnknown');
  if (scopes.length === 0) return t('apiKeys.error.noScope');
  const days = field(form, 'expires_in_days');
  if (days === 'never') return { name, scopes, expiresAt: null };
  const n = Number(days);
  if (!(KEY_LIFETIMES_DAYS as readonly number[]).includes(n)) return t('apiKeys.error.expiry');
  return { name, scopes, expiresAt: new Date(now.getTime() + n * 86_400_000).toISOString() };
}

/** The token page's state: the token's, and the account's keys. */
export async function tokenPageState(kit: PageKit, userId: string) {
  return {
    ...(await kit.web().accounts.tokenStatus(userId)),
    keys: (await kit.core.users.keys.list(userId)).map(apiKeyRecord),
  };
}

export function apiKeyPages(router: Router, kit: PageKit): void {
  const { core } = kit;
  const opts = { clock: kit.clock };
  const tokenState = (userId: string) => tokenPageState(kit, userId);
  router.post(
    '/users/token/keys',
    kit.pageRoute('/users/token/keys', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      const form = await kit.postedForm(req, v);
      const now = opts.clock?.() ?? new Date();
      const input = keyFromForm(form, now, v.viewer.i18n.t);
      if (typeof input === 'string') {
        return kit.send(res, 422, tokenPage(v.viewer, { ...(await tokenState(v.user.userId)), keyError: input }));
      }
      try {
        // The session holds every scope (it is the account's own).
        const { key, token } = await core.users.keys.create(v.user.userId, input, null, now);
        const freshKey = { ...apiKeyRecord(key), token };
        kit.send(res, 200, tokenPage(v.viewer, { ...(await tokenState(v.user.userId)), freshKey }));
      } catch (error) {
        if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw error;
        kit.send(
          res,
          422,
          tokenPage(v.viewer, { ...(await tokenState(v.user.userId)), keyError: fieldsLine(v.viewer.i18n, error) }),
        );
      }
    }),
  );

  router.post(
    '/users/token/keys/:id/revoke',
    kit.pageRoute('/users/token/keys/:id/revoke', async (req, res, v) => {
      if (!v.user) return kit.redirectToSignIn(req, res);
      await kit.postedForm(req, v);
      const id = String(req.params.id);
      if (!UUID.test(id)) throw new ApiError('not_found', 'No API key of yours has this id.');
      await core.users.keys.revoke(v.user.userId, id);
      res.redirect(303, '/users/token');
    }),
  );
}
