/**
 * Account emails, once an SMTP relay is configured (`PWPUSH_SMTP_URL`): sign-up confirms the address by a link (the
 * account exists only once the link is opened), "forgot password" sends a single-use link that lapses after an hour,
 * and a new API token or password sends a notice. Each request answers the same whether or not the address has an
 * account: what differs is only what the address's owner receives (a link, or "you already have an account").
 *
 * Links are made by the job that sends them (the durable queue, server/src/jobs): a request stores what it asked
 * for (a sign-up keeps its password's hash), never a link; the job makes a random token, keeps its SHA-256 only, and
 * mails the link. Nothing at rest can open an account. Links are built from PWPUSH_PUBLIC_BASE_URL only.
 *
 * Anyone can ask for these mails, so they are limited (issue 45): at most MAILS_PER_RECIPIENT sign-up and reset mails
 * to one address, and MAILS_PER_CLIENT asked for from one client address (an IPv6 /64), per hour, counted in
 * PostgreSQL on every instance under advisory locks (two asks at once cannot both pass). Past either, the page answers
 * 429 with Retry-After and the RateLimit fields, the same whether or not the address has an account.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { ApiError, DAY_MS } from '@secret-push/rules';
import { mailLinkBase, type Settings } from '../config/settings.js';
import { hashPassphrase } from '../crypto/passphrase.js';
import { sql, type Db } from '../db/sql.js';
import type { JobQueue, QueuedJob } from '../jobs/queue.js';
import type { Mailer } from '../mail/mailer.js';
import { mailFooter } from '../mail/messages.js';
import { translator, type Translator } from '../i18n/i18n.js';
import { clientAddressKey } from '../client-address.js';
import { EMAIL, normalizeEmail } from '../user/user-service.js';
import { passwordProblem, passwordRefused } from './password-strength.js';
import type { AccountService, AccountUser } from './account-service.js';
import { claimUnproven, type Claimed } from './claim.js';
import { revokeEveryCredential } from '../user/api-keys.js';

export const ACCOUNT_QUEUE = 'email.account';
/** A sign-up link lasts a day; a reset link an hour. */
const SIGNUP_LIFETIME_MS = 24 * 3600_000;
const RESET_LIFETIME_MS = 3600_000;
/** Sign-up and reset mails an hour: to one address, and asked for from one client address. */
const MAIL_WINDOW_MS = 3600_000;
const MAILS_PER_RECIPIENT = 5;
const MAILS_PER_CLIENT = 20;

type Purpose = 'signup' | 'reset';
/** `locale`: the language of the page that asked (its mail is written in it; none: English). */
type Job =
  | { kind: 'signup' | 'reset'; request: string; locale?: string }
  | { kind: 'password_changed' | 'token_changed'; userId: string; baseUrl: string; locale?: string };

const digestOf = (token: string) => createHash('sha256').update(token).digest('hex');

const S = {
  insert: sql<{
    id: string;
    purpose: Purpose;
    email: string;
    passwordHash: string | null;
    baseUrl: string;
    ip: string;
    now: Date;
  }>(
    `insert into account_mail_requests (id, purpose, email, password_hash, base_url, ip, created_at)
     values (:id, :purpose, :email, :passwordHash, :baseUrl, :ip, :now)`,
  ),
  /** Serializes the asks of one key (the client's address, then the recipient's) until the transaction ends. */
  lock: sql<{ key: string }>(`select pg_advisory_xact_lock(hashtextextended('account mail ' || :key, 0))`),
  /** The asks of the window, oldest first, for the recipient and for the client address. */
  recent: sql<{ email: string; ip: string; since: Date }, { by_email: boolean; created_at: Date }>(
    `select email = :email as by_email, created_at from account_mail_requests
     where created_at > :since and (email = :email or ip = :ip) order by created_at`,
  ),
  request: sql<{ id: string }>(
    'select id, purpose, email, password_hash, base_url from account_mail_requests where id = :id',
  ),
  setToken: sql<{ id: string; digest: string; expiresAt: Date }>(
    'update account_mail_requests set token_digest = :digest, expires_at = :expiresAt where id = :id',
  ),
  /**
   * Forgets requests nobody can use any more: a day after their link lapsed (used or not), or a week after they were
   * made when no link was ever sent (the mail job gave up). An unused sign-up's password hash goes with them.
   */
  forget: sql<{ dayAgo: Date; weekAgo: Date }>(
    `delete from account_mail_requests
     where (expires_at is not null and expires_at < :dayAgo) or (expires_at is null and created_at < :weekAgo)`,
  ),
  /** A link's request, while it is unused and in time (a GET only looks). */
  valid: sql<{ digest: string; purpose: Purpose; now: Date }>(
    `select id, email, password_hash from account_mail_requests
     where token_digest = :digest and purpose = :purpose and used_at is null and expires_at > :now`,
  ),
  /** Uses a link: one caller wins, even when two submit at once. */
  claim: sql<{ digest: string; purpose: Purpose; now: Date }>(
    `update account_mail_requests r set used_at = :now, password_hash = null
     from (select id, password_hash as old_hash from account_mail_requests
           where token_digest = :digest and purpose = :purpose and used_at is null and expires_at > :now
           for update) o
     where r.id = o.id
     returning r.id, r.email, o.old_hash as password_hash`,
  ),
  /** The other links of the same address and purpose stop working once one is used. */
  retireOthers: sql<{ email: string; purpose: Purpose; now: Date }>(
    `update account_mail_requests set used_at = :now, password_hash = null
     where email = :email and purpose = :purpose and used_at is null`,
  ),
  userByEmail: sql<{ email: string }, { id: string; email: string }>(
    'select id, email from users where email = :email',
  ),
  userById: sql<{ id: string }, { id: string; email: string }>('select id, email from users where id = :id'),
  insertUser: sql<{ id: string; email: string; hash: string; now: Date }, { id: string }>(
    `insert into users (id, email, password_hash, created_at, updated_at, session_version, email_confirmed_at)
     values (:id, :email, :hash, :now, :now, 1, :now) on conflict (email) do nothing returning id`,
  ),
};

export interface AccountMail {
  /**
   * Sign-up by email: checks the form (422), then always answers the same; the link or a notice goes out. `ip`: the
   * client's address; rate_limited (429) past the per-recipient or per-address limit.
   */
  signUp(email: string, password: string, baseUrl: string, ip: string, now?: Date, locale?: string): Promise<void>;
  /** Opens a sign-up link: the account is made (and signed in); 404 when the link is unknown, used or lapsed. */
  confirm(token: string, now?: Date): Promise<AccountUser>;
  /** "Forgot password": always answers the same; a link goes out only when the address has an account. Limited as signUp. */
  requestReset(email: string, baseUrl: string, ip: string, now?: Date, locale?: string): Promise<void>;
  /** Whether a reset link is still good (the form is shown only then). */
  resetValid(token: string, now?: Date): Promise<boolean>;
  /**
   * Sets the password through a reset link (once); every session ends and a notice goes out; with
   * `revokeCredentials` the account token and every API key are revoked too (what the reset form asks, on by default).
   * An account whose email nobody had proven is claimed first (./claim.ts: every credential goes, asked or not).
   */
  reset(
    token: string,
    password: string,
    baseUrl: string,
    options: { revokeCredentials: boolean; locale?: string },
    now?: Date,
  ): Promise<{ claimed: Claimed | null; revoked: { apiToken: boolean; apiKeys: number } | null }>;
  /** Sends the notice of a new API token (in `locale`, the page's language). */
  tokenChanged(userId: string, baseUrl: string, locale?: string): Promise<void>;
  /** Forgets requests whose links can no longer be used (the sweeper). */
  forget(now: Date): Promise<void>;
}

export function createAccountMail(db: Db, queue: JobQueue, accounts: AccountService): AccountMail {
  const enqueue = (job: Job) => db.transaction((tx) => queue.enqueue(tx, ACCOUNT_QUEUE, job));
  const store = async (
    purpose: Purpose,
    email: string,
    passwordHash: string | null,
    baseUrl: string,
    ip: string,
    now: Date,
    locale: string | undefined,
  ) => {
    const id = randomUUID();
    const client = clientAddressKey(ip);
    await db.transaction(async (tx) => {
      await tx.query(S.lock, { key: `client ${client}` });
      await tx.query(S.lock, { key: `to ${email}` });
      const since = new Date(now.getTime() - MAIL_WINDOW_MS);
      const recent = await tx.query(S.recent, { email, ip: client, since });
      refuseOverLimit(recent, now);
      await tx.query(S.insert, { id, purpose, email, passwordHash, baseUrl, ip: client, now });
      await queue.enqueue(tx, ACCOUNT_QUEUE, {
        kind: purpose,
        request: id,
        ...(locale ? { locale } : {}),
      } satisfies Job);
    });
  };
  return {
    async signUp(email, password, baseUrl, ip, now = new Date(), locale) {
      const normalized = normalizeEmail(email ?? '');
      const fields: Record<string, string[]> = {};
      if (normalized.length > 320 || !EMAIL.test(normalized)) fields.email = ['must be an email address'];
      const problem = await passwordProblem(password, normalized);
      if (problem) fields.password = [problem.message];
      if (Object.keys(fields).length > 0) {
        throw new ApiError('validation_failed', 'Check the highlighted fields.', { fields, advice: problem?.advice });
      }
      // Hashed whether or not the address is taken: the answer takes the same time either way.
      await store('signup', normalized, await hashPassphrase(password), baseUrl, ip, now, locale);
    },

    async confirm(token, now = new Date()) {
      const [claimed] =
        typeof token === 'string' ? await db.query(S.claim, { digest: digestOf(token), purpose: 'signup', now }) : [];
      if (!claimed?.password_hash) throw new ApiError('not_found', 'This link is not valid any more.');
      const email = String(claimed.email);
      const [made] = await db.query(S.insertUser, {
        id: randomUUID(),
        email,
        hash: String(claimed.password_hash),
        now,
      });
      if (!made) throw new ApiError('not_found', 'This address already has an account: sign in.');
      await db.query(S.retireOthers, { email, purpose: 'signup', now });
      return { userId: String(made.id), email, sessionVersion: 1 };
    },

    async requestReset(email, baseUrl, ip, now = new Date(), locale) {
      const normalized = normalizeEmail(email ?? '');
      if (normalized.length > 320 || !EMAIL.test(normalized)) {
        throw new ApiError('validation_failed', 'Check the highlighted fields.', {
          fields: { email: ['must be an email address'] },
        });
      }
      await store('reset', normalized, null, baseUrl, ip, now, locale);
    },

    async resetValid(token, now = new Date()) {
      if (typeof token !== 'string' || token.length > 128) return false;
      return (await db.query(S.valid, { digest: digestOf(token), purpose: 'reset', now })).length > 0;
    },

    async reset(token, password, baseUrl, options, now = new Date()) {
      if (typeof token !== 'string' || token.length > 128)
        throw new ApiError('not_found', 'This link is not valid any more.');
      const [found] = await db.query(S.valid, { digest: digestOf(token), purpose: 'reset', now });
      if (!found) throw new ApiError('not_found', 'This link is not valid any more.');
      const email = String(found.email);
      const problem = await passwordProblem(password, email);
      if (problem) throw passwordRefused(problem);
      const [used] = await db.query(S.claim, { digest: digestOf(token), purpose: 'reset', now });
      if (!used) throw new ApiError('not_found', 'This link is not valid any more.');
      await db.query(S.retireOthers, { email, purpose: 'reset', now });
      // The link came from the address's mailbox: the first proof of an address nobody had proven claims the account
      // (its maker's second factor, token, keys and webhooks go) before the new password is set.
      // One transaction: the claim, the revocation and the new password (every session ends) land together or not.
      const hash = await hashPassphrase(password);
      const done = await db.transaction(async (tx) => {
        const [user] = await tx.query(S.userByEmail, { email });
        if (!user) return null;
        const userId = String(user.id);
        const claimed = await claimUnproven(tx, userId, now);
        // Asked on the form (on by default): whoever had the password may have made a token or keys with it.
        const revoked = !claimed && options.revokeCredentials ? await revokeEveryCredential(tx, userId) : null;
        await accounts.storePasswordHash(tx, email, hash, now);
        const locale = options.locale ? { locale: options.locale } : {};
        await queue.enqueue(tx, ACCOUNT_QUEUE, { kind: 'password_changed', userId, baseUrl, ...locale } satisfies Job);
        return { claimed, revoked };
      });
      if (!done) throw new ApiError('not_found', 'This link is not valid any more.');
      return done;
    },

    async forget(now) {
      await db.query(S.forget, {
        dayAgo: new Date(now.getTime() - DAY_MS),
        weekAgo: new Date(now.getTime() - 7 * DAY_MS),
      });
    },
    async tokenChanged(userId, baseUrl, locale) {
      await enqueue({ kind: 'token_changed', userId, baseUrl, ...(locale ? { locale } : {}) });
    },
  };
}

/**
 * rate_limited when the window already holds the most mails to this recipient, or asked for from this client address:
 * Retry-After is when the oldest that counts leaves the window; the RateLimit fields are the limit that refused.
 */
function refuseOverLimit(recent: { by_email: boolean; created_at: Date }[], now: Date): void {
  const byEmail = recent.filter((r) => r.by_email);
  const limits = [
    { rows: byEmail, quota: MAILS_PER_RECIPIENT, policy: 'account-mail-recipient' },
    { rows: recent, quota: MAILS_PER_CLIENT, policy: 'account-mail-client' },
  ].filter((l) => l.rows.length >= l.quota);
  if (limits.length === 0) return;
  const freeAt = (l: (typeof limits)[number]) =>
    new Date(l.rows[l.rows.length - l.quota]!.created_at).getTime() + MAIL_WINDOW_MS;
  const worst = limits.reduce((a, b) => (freeAt(b) > freeAt(a) ? b : a));
  const retryAfterSeconds = Math.max(1, Math.ceil((freeAt(worst) - now.getTime()) / 1000));
  throw new ApiError(
    'rate_limited',
    `Too many emails were asked for this address or from your network. Try again in ${Math.ceil(retryAfterSeconds / 60)} minute(s).`,
    {
      retryAfterSeconds,
      limit: {
        policy: worst.policy,
        quota: worst.quota,
        windowSeconds: MAIL_WINDOW_MS / 1000,
        remaining: 0,
        resetSeconds: retryAfterSeconds,
      },
    },
  );
}

/** The paragraphs of each message, by their catalogue keys (`mail.account.<kind>.*`); `{link}` where the link goes. */
function accountMessage(
  kind: Job['kind'] | 'taken',
  link: string,
  instance: string,
  { t }: Translator,
): { subject: string; text: string } {
  const values = { instance, link };
  const paragraphs = (() => {
    switch (kind) {
      case 'signup':
        return [
          t('mail.account.signup.intro', values),
          t('mail.account.signup.action'),
          link,
          t('mail.account.signup.ignore'),
        ];
      case 'taken':
        return [
          t('mail.account.taken.intro', values),
          `${t('mail.account.taken.signIn', values)}\n${t('mail.account.taken.forgot')}`,
          t('mail.account.taken.ignore'),
        ];
      case 'reset':
        return [
          t('mail.account.reset.intro', values),
          t('mail.account.reset.action'),
          link,
          t('mail.account.reset.ignore'),
        ];
      case 'password_changed':
        return [t('mail.account.passwordChanged.intro', values), t('mail.account.passwordChanged.action', values)];
      case 'token_changed':
        return [t('mail.account.tokenChanged.intro', values), t('mail.account.tokenChanged.action', values)];
    }
  })();
  return { subject: t('mail.account.subject', { kind, instance }), text: `${paragraphs.join('\n\n')}\n` };
}

const esc = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The job handler of ACCOUNT_QUEUE: makes the link (if any) and sends the message. */
export function accountMailDelivery(db: Db, settings: Settings, mailer: Mailer) {
  const instance = settings.mail.instanceName;
  const send = async (
    to: string,
    kind: Parameters<typeof accountMessage>[0],
    link: string,
    id: string,
    locale: string | undefined,
  ) => {
    const tr = translator(locale);
    const message = accountMessage(kind, link, instance, tr);
    const { subject } = message;
    const footer = mailFooter(settings.brand, tr);
    const text = footer.text.length ? `${message.text}\n--\n${footer.text.join('\n')}\n` : message.text;
    const html = `<!doctype html><html lang="${tr.locale}" dir="${tr.dir}"><body style="font-family:sans-serif;line-height:1.5">${message.text
      .trim()
      .split('\n\n')
      .map((p) => `<p>${esc(p).replace(esc(link), `<a href="${esc(link)}">${esc(link)}</a>`)}</p>`)
      .join('')}${footer.html}</body></html>`;
    const outcome = await mailer.send({
      to,
      subject,
      text,
      html,
      messageId: `<${id}@account.${instance.replace(/[^A-Za-z0-9]/g, '') || 'secretpush'}>`,
    });
    if (!outcome.ok && outcome.temporary) throw new Error(`temporary mail failure: ${outcome.reason}`);
  };
  return async (job: QueuedJob<Job>): Promise<void> => {
    const data = job.data;
    if (data.kind === 'password_changed' || data.kind === 'token_changed') {
      const [user] = await db.query(S.userById, { id: data.userId });
      const where = data.kind === 'password_changed' ? '/users/password/new' : '/users/sign_in';
      if (user) await send(user.email, data.kind, `${mailLinkBase(settings)}${where}`, `${job.id}`, data.locale);
      return;
    }
    const requestId = (data as { request: string }).request;
    const [request] = await db.query(S.request, { id: requestId });
    if (!request) return;
    const base = mailLinkBase(settings);
    const email = String(request.email);
    const [user] = await db.query(S.userByEmail, { email });
    if (data.kind === 'signup' && user) {
      await send(email, 'taken', `${base}/users/sign_in`, job.id, data.locale);
      return;
    }
    if (data.kind === 'reset' && !user) return; // nobody to tell; the requester got the same answer
    const token = randomBytes(32).toString('base64url');
    const lifetime = data.kind === 'signup' ? SIGNUP_LIFETIME_MS : RESET_LIFETIME_MS;
    await db.query(S.setToken, { id: requestId, digest: digestOf(token), expiresAt: new Date(Date.now() + lifetime) });
    const path = data.kind === 'signup' ? '/users/confirm' : '/users/password/edit';
    await send(email, data.kind, `${base}${path}?token=${token}`, job.id, data.locale);
  };
}
