/**
 * The first proof of an account's email (issue 45). An account whose address nobody proved (`email_confirmed_at`
 * null: a sign-up on an instance without email, which makes the account at once) may have been made by anyone who
 * typed that address. When the address's owner proves it (their single sign-on provider's verified email, or a reset
 * link opened from their mailbox), the account becomes theirs, and nothing its maker set up survives: the password
 * (unless the proof sets a new one), the second factor and its recovery codes, the account token, every API key and
 * every webhook (which would keep sending the owner's events to its maker) are removed, and every session ends. What
 * the account made (its pushes and requests) stays: the owner sees it, and its maker can no longer reach it.
 *
 * One transaction, on the user's row locked: two proofs at once claim once.
 */
import { sql, type Db } from '../db/sql.js';
import { revokeEveryCredential } from '../user/api-keys.js';

/** What a claim removed (the page that follows says so), or null when the address was already proven. */
export interface Claimed {
  password: boolean;
  secondFactor: boolean;
  apiToken: boolean;
  apiKeys: number;
  webhooks: number;
}

const C = {
  claim: sql<{ userId: string; now: Date }, { had_password: boolean; had_factor: boolean }>(
    `update users u set password_hash = null, totp_secret = null, totp_enabled_at = null, totp_last_step = null,
       session_version = u.session_version + 1, email_confirmed_at = :now, updated_at = :now
     from (select id, password_hash is not null as had_password, totp_secret is not null as had_factor
           from users where id = :userId and email_confirmed_at is null for update) old
     where u.id = old.id
     returning old.had_password, old.had_factor`,
  ),
  recoveryCodes: sql<{ userId: string }>('delete from recovery_codes where user_id = :userId'),
  webhooks: sql<{ userId: string }, { id: string }>('delete from webhooks where user_id = :userId returning id'),
};

/**
 * Claims the user's account in `tx` if its email was never proven; null (and nothing changed) when it was. The
 * caller's transaction makes the proof and the claim one change.
 */
export async function claimUnproven(tx: Db, userId: string, now: Date): Promise<Claimed | null> {
  const [claimed] = await tx.query(C.claim, { userId, now });
  if (!claimed) return null;
  await tx.query(C.recoveryCodes, { userId });
  const revoked = await revokeEveryCredential(tx, userId);
  const webhooks = await tx.query(C.webhooks, { userId });
  return {
    password: claimed.had_password,
    secondFactor: claimed.had_factor,
    ...revoked,
    webhooks: webhooks.length,
  };
}

/** What a revocation of every API credential did, in words (a reset, "sign out everywhere"). */
export function revokedSentence(revoked: { apiToken: boolean; apiKeys: number }): string {
  const parts = [
    revoked.apiToken ? 'your API token' : null,
    revoked.apiKeys > 0 ? `${revoked.apiKeys} API key${revoked.apiKeys === 1 ? '' : 's'}` : null,
  ].filter((part): part is string => part !== null);
  return parts.length === 0
    ? 'You had no API token or key to revoke.'
    : `${parts.join(' and ')} ${parts.length > 1 || revoked.apiKeys > 1 ? 'were' : 'was'} revoked: make new ones on the API token page.`.replace(
        /^./,
        (c) => c.toUpperCase(),
      );
}

/** What the owner reads after a claim: each thing removed, in words. */
export function claimSentence(claimed: Claimed): string {
  const removed = [
    claimed.password ? 'its password' : null,
    claimed.secondFactor ? 'its two-factor sign-in' : null,
    claimed.apiToken ? 'its API token' : null,
    claimed.apiKeys > 0 ? `${claimed.apiKeys} API key${claimed.apiKeys === 1 ? '' : 's'}` : null,
    claimed.webhooks > 0 ? `${claimed.webhooks} webhook${claimed.webhooks === 1 ? '' : 's'}` : null,
  ].filter((part): part is string => part !== null);
  const list =
    removed.length === 0
      ? 'nothing needed removing'
      : `we removed ${removed.slice(0, -1).join(', ')}${removed.length > 1 ? ' and ' : ''}${removed.at(-1)}`;
  return `This address had an account on this instance whose email nobody had confirmed, so anyone could have made it. Now that you proved the address is yours, the account is yours: ${list}, and every other session was ended. Its pushes and requests are still here: check them.`;
}
