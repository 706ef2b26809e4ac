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
