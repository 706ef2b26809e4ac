/**
 * Accounts for the web pages: sign-up and sign-in with email and password (scrypt, compared in constant time), a
 * session version per user, and the failed sign-in limit. The limit lives in PostgreSQL (login_attempts) so that it
 * holds across instances; an attempt reserves its row before the password is checked, so parallel guesses count too.
 */
import { randomUUID } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { hashPassphrase, verifyPassphrase } from '../crypto/passphrase.js';
import { User } from '../db/entities.js';
import { DomainError, type AccountService, type AccountUser, type Settings } from './contract.js';
import { toDate } from './records.js';
import { normalizeEmail } from './user-service.js';

export const LOGIN_WINDOW_MS = 15 * 60_000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const PASSWORD_MIN = 12;
const PASSWORD_MAX = 1024;
// Verified against when the email is unknown, so that a missing account costs the same time as a wrong password.
const DUMMY_HASH = hashPassphrase(randomUUID());

interface UserRow {
  id: string;
  email: string;
  password_hash: string | null;
  session_version: number;
}

/**
 * The client an address stands for, as the per-address limit counts it: an IPv4-mapped IPv6 address is its IPv4
 * address, and an IPv6 address is its /64 (one host usually holds a whole /64, so rotating the interface id would
 * otherwise give an attacker 2^64 fresh limits). Anything else is kept as it is (lower-cased).
 */
export function clientAddressKey(ip: string): string {
  let address = (ip || 'unknown').trim().toLowerCase();
  const zone = address.indexOf('%');
  if (zone > 0) address = address.slice(0, zone);
  const mapped = /^(?:0{0,4}:){0,5}(?:0{0,4}:)?ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address.replace(/^::/, '0:'));
  if (mapped && isIPv4(mapped[1]!)) return mapped[1]!;
  if (!isIPv6(address)) return address.slice(0, 255);
  let tail = address;
  // An embedded IPv4 tail (`64:ff9b::192.0.2.1`) is two groups.
  const v4 = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(tail);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    tail = `${tail.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = tail.includes('::') ? tail.split('::') as [string, string] : [tail, undefined];
  const left = head ? head.split(':') : [];
  const right = rest === undefined ? [] : rest ? rest.split(':') : [];
  const groups = rest === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

function accountOf(row: UserRow): AccountUser {
  return { userId: row.id, email: row.email, sessionVersion: Number(row.session_version) };
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; name?: string; cause?: { code?: string } };
  return e?.name === 'UniqueConstraintViolationException' || e?.code === '23505' || e?.cause?.code === '23505';
}

export function createAccountService(orm: MikroORM, settings: Pick<Settings, 'loginAttemptsPer15Minutes'>): AccountService {
  const em = (): EntityManager => orm.em.fork() as EntityManager;

  return {
    async signUp(email: string, password: string) {
      const normalized = normalizeEmail(email ?? '');
      const fields: Record<string, string[]> = {};
      if (normalized.length > 320 || !EMAIL.test(normalized)) fields.email = ['must be an email address'];
      if (typeof password !== 'string' || password.length < PASSWORD_MIN) {
        fields.password = [`must be at least ${PASSWORD_MIN} characters`];
      } else if (password.length > PASSWORD_MAX) fields.password = [`must be at most ${PASSWORD_MAX} characters`];
      if (Object.keys(fields).length > 0) {
        throw new DomainError('validation_failed', 'Check the highlighted fields.', { fields });
      }
      const passwordHash = await hashPassphrase(password);
      const now = new Date();
      const m = em();
      try {
        const user = m.create(User, { id: randomUUID(), email: normalized, passwordHash, createdAt: now, updatedAt: now, sessionVersion: 1 });
        await m.flush();
        return { userId: user.id, email: user.email, sessionVersion: 1 };
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw new DomainError('validation_failed', 'An account with this email already exists.', {
            fields: { email: ['is already registered'] },
          });
        }
        throw err;
      }
    },

    async signIn(email: string, password: string, ip: string, now = new Date()) {
      const normalized = normalizeEmail(email ?? '').slice(0, 320);
      const address = clientAddressKey(ip);
      const limit = settings.loginAttemptsPer15Minutes;
      const windowStart = new Date(now.getTime() - LOGIN_WINDOW_MS);
      const m = em();
      const [reserved] = await m.execute<{ id: string }[]>(
        'insert into login_attempts (email, ip, attempted_at) values (?, ?, ?) returning id',
        [normalized, address, now],
      );
      const release = () => m.execute('delete from login_attempts where id = ?', [reserved!.id]);
      const recent = await m.execute<{ id: string; email: string; ip: string; attempted_at: string | Date }[]>(
        `select id, email, ip, attempted_at from login_attempts
         where attempted_at > ? and (email = ? or ip = ?) and id <> ? order by attempted_at, id`,
        [windowStart, normalized, address, reserved!.id],
      );
      const byEmail = recent.filter((r) => r.email === normalized);
      const byIp = recent.filter((r) => r.ip === address);
      const over = [byEmail, byIp].filter((rows) => rows.length >= limit);
      if (over.length > 0) {
        await release();
        // Free again once enough of the counted failures have left the window.
        const freeAt = Math.max(...over.map((rows) => toDate(rows[rows.length - limit]!.attempted_at).getTime() + LOGIN_WINDOW_MS));
        throw new DomainError('too_many_attempts', 'Too many failed sign-ins. Wait a while and try again.', {
          retryAfterSeconds: Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000)),
        });
      }
      const [row] = await m.execute<UserRow[]>(
        'select id, email, password_hash, session_version from users where email = ?',
        [normalized],
      );
      const candidate = typeof password === 'string' ? password.slice(0, PASSWORD_MAX) : '';
      const ok = row?.password_hash
        ? await verifyPassphrase(candidate, row.password_hash)
        : (await verifyPassphrase(candidate, await DUMMY_HASH), false);
      if (!ok || !row) throw new DomainError('authentication_required', 'That email and password do not match an account.');
      await release();
      // A success clears this email's failures (the per-address ones stay).
      await m.execute('delete from login_attempts where email = ?', [normalized]);
      return accountOf(row);
    },

    async sessionUser(userId: string, sessionVersion: number) {
      if (typeof userId !== 'string' || !/^[0-9a-f-]{36}$/i.test(userId) || !Number.isSafeInteger(sessionVersion)) return null;
      const [row] = await em().execute<UserRow[]>(
        'select id, email, password_hash, session_version from users where id = ? and session_version = ?',
        [userId, sessionVersion],
      );
      return row ? accountOf(row) : null;
    },

    async endSessions(userId: string) {
      await em().execute('update users set session_version = session_version + 1, updated_at = ? where id = ?', [new Date(), userId]);
    },

    async tokenStatus(userId: string) {
      const [row] = await em().execute<{ created_at: string | Date }[]>('select created_at from api_tokens where user_id = ?', [userId]);
      return { hasToken: row !== undefined, createdAt: row ? toDate(row.created_at).toISOString() : null };
    },
  };
}
