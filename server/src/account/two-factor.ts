/**
 * The second factor of password accounts (issue 25): TOTP (RFC 6238, otplib: SHA-1, 6 digits, 30 s, the default of
 * every authenticator app) and ten single-use recovery codes.
 *
 * - The secret is stored as an envelope under the master key (crypto/envelope.ts), bound to its user by the
 *   envelope's additional data; it is shown once, while enrolling, and never again.
 * - A code is accepted within one time step either side, and only once: the step of the last code accepted is kept,
 *   and a code of that step or an earlier one is refused (`totp_last_step`, advanced by one conditional UPDATE).
 * - Recovery codes are 16 characters of a 31-letter alphabet (79 bits), stored only as SHA-256 digests; one is spent
 *   by one conditional UPDATE, so two requests cannot both use it. A new set (after a code, like turning the factor
 *   off) replaces every earlier code in one transaction.
 * - Attempts are limited like passwords (account-service.ts): a row is reserved in `totp_attempts` before the code
 *   is checked, and `PWPUSH_LOGIN_ATTEMPTS` failures per user, or per client address, within 15 minutes answer
 *   too_many_attempts with the seconds until the oldest counted failure leaves the window.
 */
import { createHash, randomInt } from 'node:crypto';

/** otplib, loaded with the first enrolment or code (about 7 MB): a process that never sees one never holds it. */
const otp = () => import('otplib');
import { ApiError } from '@secret-push/rules';

import type { Settings } from '../config/settings.js';
import type { Keyring } from '../crypto/envelope.js';
import { clientAddressKey } from '../client-address.js';
import { securityEvents } from './security-events.js';
import { sql, type Db } from '../db/sql.js';
import { column, defineTable } from '../db/table.js';

const RECOVERY_CODE_COUNT = 10;
const WINDOW_MS = 15 * 60_000;
const PERIOD_SECONDS = 30;
/** 31 letters and digits, without the look-alikes i, l, o, 0 and 1. */
const CODE_LETTERS = 'abcdefghjkmnpqrstuvwxyz23456789';

interface TwoFactorStatus {
  /** A confirmed second factor. */
  enabled: boolean;
  /** Recovery codes not yet used. */
  recoveryCodesLeft: number;
}

interface Enrolment {
  /** Base32, for typing into an app. */
  secret: string;
  /** `otpauth://totp/…`, for the QR code. */
  uri: string;
}

export interface TwoFactorService {
  status(userId: string): Promise<TwoFactorStatus>;
  /** A new secret, pending until confirmed (replaces a pending one); conflict when a factor is already on. */
  begin(userId: string, email: string): Promise<Enrolment>;
  /** The pending secret (to show it again after a wrong code), or null. */
  pending(userId: string, email: string): Promise<Enrolment | null>;
  /**
   * Confirms the pending secret with a code from it: the factor is on, and the ten recovery codes are returned (shown
   * once). authentication_required for a wrong code; too_many_attempts past the limit.
   */
  confirm(userId: string, code: string, ip: string, now?: Date): Promise<string[]>;
  /** Checks a TOTP code or an unused recovery code (spending it). Same errors as confirm. */
  verify(userId: string, code: string, ip: string, now?: Date): Promise<{ usedRecoveryCode: boolean }>;
  /** Turns the factor off after checking a code (the same rules as verify): the secret and the codes are erased. */
  disable(userId: string, code: string, ip: string, now?: Date): Promise<void>;
  /**
   * Ten new recovery codes after checking a code (the same rules as verify): every earlier code, used or not, stops
   * working in the same transaction. The codes are returned to be shown once; forbidden when the factor is off.
   */
  renewRecoveryCodes(userId: string, code: string, ip: string, now?: Date): Promise<string[]>;
  /**
   * Turns the factor off without a code, for an operator (`npm run users -- reset-2fa`: the person lost both the
   * app and the recovery codes): the secret, the codes and the attempts are erased.
   */
  reset(userId: string, now?: Date): Promise<void>;
  /** Forgets attempts that no longer count (the sweeper calls it). */
  forgetAttempts(now: Date): Promise<void>;
}

interface AttemptRow {
  id: string;
  userId: string;
  ip: string;
  attemptedAt: Date;
}

/** One row per failed (or in-flight) second-factor attempt. */
export const TOTP_ATTEMPTS = defineTable<AttemptRow>('totp_attempts', {
  id: column.bigint('id'),
  userId: column.text('user_id'),
  ip: column.text('ip'),
  attemptedAt: column.date('attempted_at'),
});

export const RECOVERY_CODES = defineTable<{ id: string; userId: string; digest: string; usedAt: Date | null }>(
  'recovery_codes',
  {
    id: column.bigint('id'),
    userId: column.text('user_id'),
    digest: column.text('digest'),
    usedAt: column.dateOrNull('used_at'),
  },
);

interface FactorRow {
  totp_secret: string | null;
  totp_enabled_at: Date | null;
  totp_last_step: string | null;
}

const S = {
  factor: sql<{ userId: string }, FactorRow>(
    'select totp_secret, totp_enabled_at, totp_last_step from users where id = :userId',
  ),
  codesLeft: sql<{ userId: string }, { n: string }>(
    'select count(*) as n from recovery_codes where user_id = :userId and used_at is null',
  ),
  setPending: sql<{ userId: string; secret: string; now: Date }, { id: string }>(
    `update users set totp_secret = :secret, totp_enabled_at = null, totp_last_step = null, updated_at = :now
     where id = :userId and totp_enabled_at is null returning id`,
  ),
  enable: sql<{ userId: string; step: number; now: Date }, { id: string }>(
    `update users set totp_enabled_at = :now, totp_last_step = :step, updated_at = :now
     where id = :userId and totp_secret is not null and totp_enabled_at is null returning id`,
  ),
  advance: sql<{ userId: string; step: number }, { id: string }>(
    `update users set totp_last_step = :step
     where id = :userId and totp_enabled_at is not null and (totp_last_step is null or totp_last_step < :step)
     returning id`,
  ),
  disable: sql<{ userId: string; now: Date }>(
    `update users set totp_secret = null, totp_enabled_at = null, totp_last_step = null, updated_at = :now
     where id = :userId`,
  ),
  deleteCodes: sql<{ userId: string }>('delete from recovery_codes where user_id = :userId'),
  lockEnabled: sql<{ userId: string }, { id: string }>(
    'select id from users where id = :userId and totp_enabled_at is not null for update',
  ),
  /** A user's new recovery codes, all in one statement. */
  insertCodes: sql<{ userId: string; digests: string[] }>(
    'insert into recovery_codes (user_id, digest) select :userId::uuid, d from unnest(:digests::text[]) as d',
  ),
  spendCode: sql<{ userId: string; digest: string; now: Date }, { id: string }>(
    `update recovery_codes set used_at = :now
     where user_id = :userId and digest = :digest and used_at is null returning id`,
  ),
  reserve: sql<{ userId: string; ip: string; now: Date }, { id: string }>(
    'insert into totp_attempts (user_id, ip, attempted_at) values (:userId, :ip, :now) returning id',
  ),
  release: sql<{ id: string }>('delete from totp_attempts where id = :id'),
  recent: sql<{ since: Date; userId: string; ip: string; id: string }>(
    `select ${TOTP_ATTEMPTS.list} from totp_attempts
     where attempted_at > :since and (user_id = :userId or ip = :ip) and id <> :id order by attempted_at, id`,
  ),
  clearUser: sql<{ userId: string }>('delete from totp_attempts where user_id = :userId'),
  forget: sql<{ before: Date }>('delete from totp_attempts where attempted_at < :before'),
};

/** The digest a recovery code is stored as: SHA-256 of its letters, without dashes, spaces or case. */
function codeDigest(code: string): string {
  return createHash('sha256').update(normalizeRecoveryCode(code)).digest('hex');
}

function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '');
}

/** Ten new codes: `xxxx-xxxx-xxxx-xxxx`, 16 letters of 31 (79 bits each). */
function newRecoveryCodes(): string[] {
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const letters = Array.from({ length: 16 }, () => CODE_LETTERS[randomInt(CODE_LETTERS.length)]).join('');
    return letters.match(/.{4}/g)!.join('-');
  });
}

const aadOf = (userId: string) => `users.totp_secret:${userId}`;
const wrongCode = () =>
  new ApiError('authentication_required', 'That code is not right. Check the time on your device and try again.');

/** The step of a TOTP code valid now (one step either side, later than `after`), or null. */
async function totpStep(secret: string, code: string, now: Date, after: number | null): Promise<number | null> {
  if (!/^\d{6}$/.test(code)) return null;
  const result = await (
    await otp()
  ).verify({
    secret,
    token: code,
    epoch: Math.floor(now.getTime() / 1000),
    period: PERIOD_SECONDS,
    epochTolerance: PERIOD_SECONDS,
    ...(after !== null ? { afterTimeStep: after } : {}),
  });
  return result.valid && 'timeStep' in result ? result.timeStep : null;
}

export function createTwoFactorService(
  db: Db,
  keyring: Keyring,
  settings: Pick<Settings, 'loginAttemptsPer15Minutes'>,
): TwoFactorService {
  const factor = async (userId: string) => (await db.query(S.factor, { userId }))[0];
  const secretOf = (userId: string, row: FactorRow | undefined) =>
    row?.totp_secret ? keyring.decryptText(row.totp_secret, aadOf(userId)) : null;
  const enrolmentOf = async (secret: string, email: string): Promise<Enrolment> => ({
    secret,
    uri: (await otp()).generateURI({ issuer: 'Secret Push', label: email, secret }),
  });

  /** Runs `check` as one counted attempt: refused past the limit; a failure stays counted, a success is forgotten. */
  async function attempt<T>(userId: string, ip: string, now: Date, check: () => Promise<T | null>): Promise<T> {
    const address = clientAddressKey(ip);
    const limit = settings.loginAttemptsPer15Minutes;
    const [reserved] = await db.query(S.reserve, { userId, ip: address, now });
    const id = String(reserved!.id);
    const recent = (
      await db.query(S.recent, { since: new Date(now.getTime() - WINDOW_MS), userId, ip: address, id })
    ).map((r) => TOTP_ATTEMPTS.fromRow(r));
    const over = [recent.filter((r) => r.userId === userId), recent.filter((r) => r.ip === address)].filter(
      (rows) => rows.length >= limit,
    );
    if (over.length > 0) {
      await db.query(S.release, { id });
      const freeAt = Math.max(...over.map((rows) => rows[rows.length - limit]!.attemptedAt.getTime() + WINDOW_MS));
      throw new ApiError('too_many_attempts', 'Too many wrong codes. Wait a while and try again.', {
        retryAfterSeconds: Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000)),
      });
    }
    const result = await check();
    if (result === null) {
      await securityEvents.record(db, 'two_factor_failed', { email: '', userId, ip }, now);
      throw wrongCode();
    }
    await db.query(S.clearUser, { userId });
    return result;
  }

  async function checkEnabled(userId: string, code: string, now: Date): Promise<{ usedRecoveryCode: boolean } | null> {
    const row = await factor(userId);
    const secret = row?.totp_enabled_at ? secretOf(userId, row) : null;
    if (!secret) return null;
    const typed = code.replace(/\s/g, '');
    if (/^\d{6}$/.test(typed)) {
      const after = row!.totp_last_step === null ? null : Number(row!.totp_last_step);
      const step = await totpStep(secret, typed, now, after);
      // The conditional UPDATE decides between two requests with the same code: only one advances the step.
      if (step === null || (await db.query(S.advance, { userId, step })).length === 0) return null;
      return { usedRecoveryCode: false };
    }
    const letters = normalizeRecoveryCode(typed);
    if (!/^[a-z0-9]{16}$/.test(letters)) return null;
    const spent = await db.query(S.spendCode, { userId, digest: codeDigest(letters), now });
    return spent.length > 0 ? { usedRecoveryCode: true } : null;
  }

  return {
    async status(userId) {
      const row = await factor(userId);
      const [left] = await db.query(S.codesLeft, { userId });
      return { enabled: Boolean(row?.totp_enabled_at), recoveryCodesLeft: Number(left?.n ?? 0) };
    },

    async begin(userId, email) {
      const secret = (await otp()).generateSecret({ length: 20 });
      const now = new Date();
      const updated = await db.query(S.setPending, {
        userId,
        secret: keyring.encryptText(secret, aadOf(userId)),
        now,
      });
      if (updated.length === 0) {
        throw new ApiError('forbidden', 'Two-factor sign-in is already on for this account: turn it off first.');
      }
      return enrolmentOf(secret, email);
    },

    async pending(userId, email) {
      const row = await factor(userId);
      const secret = row && !row.totp_enabled_at ? secretOf(userId, row) : null;
      return secret ? enrolmentOf(secret, email) : null;
    },

    async confirm(userId, code, ip, now = new Date()) {
      return attempt(userId, ip, now, async () => {
        const row = await factor(userId);
        const secret = row && !row.totp_enabled_at ? secretOf(userId, row) : null;
        const step = secret ? await totpStep(secret, code.replace(/\s/g, ''), now, null) : null;
        if (step === null) return null;
        const codes = newRecoveryCodes();
        const done = await db.transaction(async (tx) => {
          if ((await tx.query(S.enable, { userId, step, now })).length === 0) return false;
          await tx.query(S.deleteCodes, { userId });
          await tx.query(S.insertCodes, { userId, digests: codes.map(codeDigest) });
          return true;
        });
        return done ? codes : null;
      });
    },

    async verify(userId, code, ip, now = new Date()) {
      return attempt(userId, ip, now, () => checkEnabled(userId, typeof code === 'string' ? code : '', now));
    },

    async disable(userId, code, ip, now = new Date()) {
      await attempt(userId, ip, now, () => checkEnabled(userId, code, now));
      await db.transaction(async (tx) => {
        await tx.query(S.disable, { userId, now });
        await tx.query(S.deleteCodes, { userId });
      });
    },

    async renewRecoveryCodes(userId, code, ip, now = new Date()) {
      await attempt(userId, ip, now, () => checkEnabled(userId, code, now));
      const codes = newRecoveryCodes();
      const renewed = await db.transaction(async (tx) => {
        // The user's row is held while the codes change, so a factor turned off meanwhile gets no codes.
        if ((await tx.query(S.lockEnabled, { userId })).length === 0) return false;
        await tx.query(S.deleteCodes, { userId });
        await tx.query(S.insertCodes, { userId, digests: codes.map(codeDigest) });
        return true;
      });
      if (!renewed)
        throw new ApiError('forbidden', 'Two-factor sign-in is off for this account: there are no codes to renew.');
      return codes;
    },

    async reset(userId, now = new Date()) {
      await db.transaction(async (tx) => {
        await tx.query(S.disable, { userId, now });
        await tx.query(S.deleteCodes, { userId });
        await tx.query(S.clearUser, { userId });
      });
    },

    async forgetAttempts(now) {
      await db.query(S.forget, { before: new Date(now.getTime() - 2 * WINDOW_MS) });
    },
  };
}
