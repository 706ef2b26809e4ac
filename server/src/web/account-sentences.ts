/**
 * What an account page says after a revocation of every API credential (a reset, "sign out everywhere") or a claim
 * (an unproven account taken over by the proof of its address), in the visitor's language.
 */
import type { Claimed } from '../account/claim.js';
import type { Translator } from '../i18n/i18n.js';

/** What a revocation of every API credential did. */
export function revokedText({ t }: Translator, revoked: { apiToken: boolean; apiKeys: number }): string {
  return t('account.revoked', { token: revoked.apiToken ? 'yes' : 'no', keys: revoked.apiKeys });
}

/**
 * A list in the language (`Intl.ListFormat`); English without the serial comma ("a, b and c"), as the pages write
 * it elsewhere.
 */
function listOf(locale: string, items: string[]): string {
  return new Intl.ListFormat(locale === 'en' ? 'en-GB' : locale, { type: 'conjunction' }).format(items);
}

/** What the owner reads after a claim: each thing removed. */
export function claimText(i18n: Translator, claimed: Claimed): string {
  const { t } = i18n;
  const removed = [
    claimed.password ? t('account.claim.password') : null,
    claimed.secondFactor ? t('account.claim.secondFactor') : null,
    claimed.apiToken ? t('account.claim.apiToken') : null,
    claimed.apiKeys > 0 ? t('account.claim.apiKeys', { count: claimed.apiKeys }) : null,
    claimed.webhooks > 0 ? t('account.claim.webhooks', { count: claimed.webhooks }) : null,
  ].filter((part): part is string => part !== null);
  const list =
    removed.length === 0
      ? t('account.claim.nothing')
      : t('account.claim.removed', { list: listOf(i18n.locale, removed) });
  return t('account.claim.text', { list });
}
