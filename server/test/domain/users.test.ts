import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { API_KEY_SCOPES, ApiError } from '@secret-push/rules';
import { createCore } from '../../src/core.js';
import { tokenDigest } from '../../src/crypto/tokens.js';
import { makeSettings } from '../support/db.js';
import { ctx, harness } from './helpers.js';

const h = await harness();

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiError);
  return err as ApiError;
}

describe('users and tokens', () => {
  it('makes a token with the spt_ prefix and at least 160 bits, and stores only its SHA-256 digest', async () => {
    const { userId, token } = await h.core.users.createUser('Digest@Example.com');
    expect(token).toMatch(/^spt_[A-Za-z0-9_-]{32}$/); // 32 base64url characters = 192 bits
    const rows = await h.db.query(
      'select t.digest, u.email from api_tokens t join users u on u.id = t.user_id where u.id = $1',
      [userId],
    );
    expect(rows).toEqual([{ digest: tokenDigest(token), email: 'digest@example.com' }]);
    const dump =
      JSON.stringify(await h.db.query('select * from api_tokens')) +
      JSON.stringify(await h.db.query('select * from users'));
    expect(dump).not.toContain(token);
    expect(dump).not.toContain(token.slice(4));
  });

  it('authenticates a bearer token and rejects unknown ones', async () => {
    const { userId, token } = await h.core.users.createUser('bearer@example.com');
    expect(await h.core.users.authenticate(token)).toEqual({ userId, email: 'bearer@example.com' });
    expect(await h.core.users.authenticate(`${token}x`)).toBeNull();
    expect(await h.core.users.authenticate('')).toBeNull();
    expect(await h.core.users.authenticate('spt_' + 'A'.repeat(32))).toBeNull();
  });

  it("accepts the legacy email + token pair only when the email is the token user's", async () => {
    const { userId, token } = await h.core.users.createUser('legacy@example.com');
    await h.core.users.createUser('someone-else@example.com');
    expect(await h.core.users.authenticate(token, 'Legacy@Example.com')).toEqual({
      userId,
      email: 'legacy@example.com',
    });
    expect(await h.core.users.authenticate(token, 'someone-else@example.com')).toBeNull();
    expect(await h.core.users.authenticate(token, '')).toBeNull();
  });

  it('rotating a token invalidates the old one at once, also for another instance', async () => {
    const other = await h.second();
    const { userId, token: old } = await h.core.users.createUser('rotate@example.com');
    const fresh = await h.core.users.rotateToken('ROTATE@example.com');
    expect(fresh).not.toBe(old);
    expect(await other.users.authenticate(old)).toBeNull();
    expect(await other.users.authenticate(fresh)).toEqual({ userId, email: 'rotate@example.com' });
    expect(await h.db.query('select count(*)::int as n from api_tokens where user_id = $1', [userId])).toEqual([
      { n: 1 },
    ]);
  });

  it('refuses a second user with the same email (case-insensitive), bad emails and unknown emails on rotation', async () => {
    await h.core.users.createUser('dup@example.com');
    const dup = await rejection(h.core.users.createUser('DUP@example.com'));
    expect(dup.details.fields).toEqual({ email: ['is already registered'] });
    const bad = await rejection(h.core.users.createUser('not-an-email'));
    expect(bad.details.fields).toEqual({ email: ['must be an email address'] });
    expect((await rejection(h.core.users.rotateToken('nobody@example.com'))).code).toBe('not_found');
  });

  it('stores a password only as a scrypt hash', async () => {
    const { userId } = await h.core.users.createUser('pw@example.com', 'correct horse battery staple');
    const [row] = await h.db.query('select password_hash from users where id = $1', [userId]);
    expect(row!.password_hash).toMatch(/^scrypt\$/);
    expect(row!.password_hash).not.toContain('correct horse');
    expect(
      (await rejection(h.core.users.createUser('short@example.com', 'short'))).details.fields?.password,
    ).toBeDefined();
  });

  it("refuses passwords that are short, long, common or made of the account's own words, with the reason", async () => {
    const accounts = h.core.web!.accounts;
    const refused = async (email: string, password: string) => {
      const e = await rejection(accounts.signUp(email, password));
      expect(e.code).toBe('validation_failed');
      expect(e.message).not.toContain(password);
      return e.details.fields!.password![0]!;
    };
    // The length rule is kept, before any strength check: 11 strong-looking characters are still too short.
    expect(await refused('len@example.com', 'Xk9#mQ2!zL4')).toBe('must be at least 12 characters');
    expect(await refused('len@example.com', 'Xk9#mQ2!zL4w'.repeat(86))).toBe('must be at most 1024 characters');
    // zxcvbn: commonly used passwords, keyboard walks, sequences, repeats, the email itself: refused with its warning.
    expect(await refused('common@example.com', 'password1234')).toBe(
      'is too easy to guess: This is similar to a commonly used password. Add more words that are less common.',
    );
    expect(await refused('walk@example.com', 'qwertyuiop123')).toMatch(/^is too easy to guess: /);
    expect(await refused('seq@example.com', 'abcdefghijkl')).toMatch(
      /^is too easy to guess: Common character sequences like "abc" are easy to guess\./,
    );
    expect(await refused('repeat@example.com', 'passwordpassword')).toMatch(
      /^is too easy to guess: Repeated character patterns/,
    );
    expect(await refused('alice.wonderland@example.org', 'alice.wonderland@example.org')).toMatch(
      /^is too easy to guess: There should not be any personal or page related data\./,
    );
    expect(await refused('brand@example.com', 'secretpush12345')).toMatch(/^is too easy to guess/);
    // The same rule for the operator's set-password and for users made with a password; nothing was stored.
    const { userId } = await h.core.users.createUser('rules@example.com');
    const setWeak = await rejection(accounts.setPassword('rules@example.com', 'iloveyou2024!'));
    expect(setWeak.message).toMatch(/^The password is too easy to guess: .*\.$/);
    expect(setWeak.message).not.toMatch(/\.\.$/);
    expect(
      (await rejection(h.core.users.createUser('weak@example.com', 'letmein123456'))).details.fields?.password?.[0],
    ).toMatch(/^is too easy to guess/);
    expect(
      await h.db.query('select 1 from users where email in ($1, $2, $3)', [
        'common@example.com',
        'weak@example.com',
        'len@example.com',
      ]),
    ).toEqual([]);
    const [row] = await h.db.query('select password_hash from users where id = $1', [userId]);
    expect(row!.password_hash).toBeNull();
    // Passphrases and long random passwords pass.
    await accounts.setPassword('rules@example.com', 'correct horse battery staple');
    expect(await accounts.signUp('strong@example.com', 'K7#mQ9!zR2@wL5')).toMatchObject({
      email: 'strong@example.com',
    });
    expect(await accounts.signUp('phrase@example.com', 'violet kettles argue with the tide')).toMatchObject({
      email: 'phrase@example.com',
    });
  });

  it("ties pushes to the token's user for ownership", async () => {
    const { token } = await h.core.users.createUser('owner@example.com');
    const who = await h.core.users.authenticate(token);
    const push = await h.core.pushes.create({ payload: 'x' }, ctx(who!.userId));
    const listed = await h.core.pushes.list('active', 1, ctx(who!.userId));
    expect(listed.items.map((p) => p.url_token)).toEqual([push.url_token]);
  });
});

describe('core', () => {
  it('reports the version and features from the settings', async () => {
    const core = await h.withSettings({
      allowAnonymous: false,
      enableQrPushes: false,
      filesRequireAuth: false,
      expireAfterDurationMin: 3,
      expireAfterDays: { default: 7, min: 1, max: 30 },
    });
    const report = core.version();
    expect(report).toEqual({
      application_version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      api_version: '2.1',
      edition: 'oss',
      features: {
        anonymous_access: false,
        api_token_authentication: true,
        // Workspaces are served (issue 41): pwpush-cli calls /api/v2/accounts only when accounts are on.
        accounts: { enabled: true },
        workspaces: { enabled: true },
        api_keys: { enabled: true, scopes: [...API_KEY_SCOPES] },
        pushes: {
          enabled: true,
          email_auto_dispatch: false,
          file_attachments: { enabled: true, requires_authentication: false },
          url_pushes: { enabled: true },
          qr_code_pushes: { enabled: false },
          // PWPUSH_EXPIRE_AFTER_DURATION_MIN=3 (1 hour) and at most 30 days: 1 hour … 30 days.
          expire_after_duration: { enabled: true, min: 3, values: [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] },
          idempotency_keys: { enabled: true, lifetime_hours: 24 },
          client_encryption: {
            enabled: true,
            default: false,
            required: false,
            schemes: [{ scheme: 'aes-256-gcm', version: 1 }],
          },
          // No SMTP relay and no single sign-on here: IP ranges only, no named people (max_emails 0).
          recipient_access: {
            networks: true,
            email_codes: false,
            single_sign_on: false,
            max_emails: 0,
            max_networks: 20,
          },
        },
        requests: { enabled: true, email_auto_dispatch: false, sealed_answers: ['hpke-x25519-sha256-aes256gcm'] },
        webhooks: { enabled: false, read_receipts: false },
        storage_quotas: { anonymous_bytes_per_hour: 100 * 1024 * 1024, user_active_bytes: 1024 * 1024 * 1024 },
      },
    });
  });

  it('applies migrations once, even when two cores start on one database at the same time', async () => {
    const [a, b] = await Promise.all([h.second(), h.second()]);
    await a.ping();
    await b.ping();
    const rows = await h.db.query('select name from mikro_orm_migrations');
    const committed = readdirSync(fileURLToPath(new URL('../../src/db/migrations/', import.meta.url)))
      .filter((f) => /^Migration\d+_\w+\.ts$/.test(f))
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(committed.length).toBeGreaterThan(0);
    expect(rows.map((r) => r.name).sort()).toEqual(committed);
  });

  it('turns an unreachable database into service_unavailable', async () => {
    // A TCP proxy in front of PostgreSQL stands in for the network: closing it is the outage.
    const target = new URL(h.db.url);
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((client) => {
      const upstream = net.connect(Number(target.port), target.hostname);
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => s.destroy());
        s.on('close', () => sockets.delete(s));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const viaProxy = new URL(h.db.url);
    viaProxy.hostname = '127.0.0.1';
    viaProxy.port = String((proxy.address() as net.AddressInfo).port);
    const core = await createCore(makeSettings({ databaseUrl: viaProxy.toString() }));
    try {
      await core.ping();
      await new Promise<void>((resolve) => {
        proxy.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      await expect(core.ping()).rejects.toMatchObject({ code: 'service_unavailable' });
      await expect(core.pushes.preview('whatever12345', ctx())).rejects.toMatchObject({ code: 'service_unavailable' });
      await expect(core.users.authenticate('spt_whatever')).rejects.toMatchObject({ code: 'service_unavailable' });
      await expect(core.sweep()).rejects.toMatchObject({ code: 'service_unavailable' });
    } finally {
      await core.close().catch(() => undefined);
    }
  });

  it('fails to start, with the connection error, when the database cannot be reached', async () => {
    const url = new URL(h.db.url);
    url.port = '1';
    await expect(createCore(makeSettings({ databaseUrl: url.toString() }))).rejects.toThrow();
  });
});
