/**
 * Issue 25, two-factor sign-in for password accounts, through the real pages on the real core and PostgreSQL:
 * enrolment (the key read from the page, codes computed from it with otplib), sign-in with a code, a code accepted
 * once, a recovery code used once, the limit on wrong codes, the secret encrypted at rest and the recovery codes kept
 * only as digests, API tokens unaffected, and PWPUSH_REQUIRE_2FA (enrolment before any session, password-only
 * sessions no longer counted, no turning it off).
 */
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWeb, Visitor, type WebApp } from './support.js';

const PASSWORD = 'a long enough password';
let app: WebApp;
let strict: WebApp;

beforeAll(async () => {
  app = await startWeb();
  // The same database with PWPUSH_REQUIRE_2FA: sessions signed on `app` are presented to it.
  strict = await startWeb({ require2fa: true }, { db: app.db });
});
afterAll(async () => {
  await strict?.stop();
  await app?.stop();
});

const codeAt = (secret: string, offsetSeconds = 0) =>
  generate({ secret, epoch: Math.floor(Date.now() / 1000) + offsetSeconds });

const errorOf = (html: string) => /id="form-error">([^<]*)</.exec(html)?.[1] ?? '';

/** Starts an enrolment as `v` (signed in, or sent there by sign-in) and returns the key shown on the page. */
async function enrolmentKey(v: Visitor): Promise<string> {
  const { html, response } = await v.page('/users/two_factor/setup');
  expect(response.status).toBe(200);
  expect(html).toContain('data-otpauth="otpauth://totp/');
  return /id="totp-secret">([^<]+)</.exec(html)![1]!.replace(/\s/g, '');
}

async function confirm(v: Visitor, code: string): Promise<Response> {
  const { csrf } = await v.page('/users/two_factor/setup');
  return v.post('/users/two_factor/confirm', { _csrf: csrf, code });
}

async function verify(v: Visitor, code: string): Promise<Response> {
  const { csrf } = await v.page('/users/two_factor/verify');
  return v.post('/users/two_factor/verify', { _csrf: csrf, code });
}

async function signedIn(v: Visitor): Promise<boolean> {
  return (await v.fetch('/pushes/active')).status === 200;
}

async function signOut(v: Visitor): Promise<void> {
  await v.post('/users/sign_out', { _csrf: (await v.page('/')).csrf });
}

describe('two-factor sign-in', () => {
  const email = 'totp@example.org';
  let alice: Visitor;
  let secret = '';
  let enrolCode = '';
  let recovery: string[] = [];

  it('enrols with a code computed from the key shown, and gives ten recovery codes once', async () => {
    alice = new Visitor(app.baseUrl);
    expect((await alice.signUp(email, PASSWORD)).status).toBe(303);
    expect((await alice.page('/users/two_factor')).html).toContain('Two-factor sign-in is <strong>off</strong>');
    const { csrf } = await alice.page('/users/two_factor');
    const setup = await alice.post('/users/two_factor/setup', { _csrf: csrf });
    expect(setup.status).toBe(200);
    secret = await enrolmentKey(alice);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);

    const wrong = await confirm(alice, (await codeAt(secret)) === '000000' ? '111111' : '000000');
    expect(wrong.status).toBe(401);
    expect(errorOf(await wrong.text())).toMatch(/not right/);

    enrolCode = await codeAt(secret);
    const ok = await confirm(alice, enrolCode);
    expect(ok.status).toBe(200);
    const page = await ok.text();
    recovery = [...page.matchAll(/<li><code>([a-z0-9-]+)<\/code><\/li>/g)].map((m) => m[1]!);
    expect(recovery).toHaveLength(10);
    expect(new Set(recovery).size).toBe(10);
    for (const c of recovery) expect(c).toMatch(/^[a-z2-9]{4}(-[a-z2-9]{4}){3}$/);
    // The enrolling browser keeps a (new) session; the status page says on.
    expect(await signedIn(alice)).toBe(true);
    expect((await alice.page('/users/two_factor')).html).toContain('You have 10 unused recovery codes');
  });

  it('keeps the key encrypted under the master key and the recovery codes as digests only', async () => {
    const [row] = await app.db.query<{ totp_secret: string; id: string }>(
      'select id, totp_secret from users where email = $1',
      [email],
    );
    expect(row!.totp_secret).not.toContain(secret);
    expect(Buffer.from(row!.totp_secret, 'base64').toString('latin1')).not.toContain(secret);
    const codes = await app.db.query<{ digest: string }>('select digest from recovery_codes where user_id = $1', [
      row!.id,
    ]);
    expect(codes).toHaveLength(10);
    const stored = JSON.stringify(codes);
    for (const c of recovery) {
      expect(stored).not.toContain(c);
      expect(stored).not.toContain(c.replace(/-/g, ''));
    }
  });

  it('asks for a code after the password: no session before it, a code accepted once', async () => {
    await signOut(alice);
    const signIn = await alice.signIn(email, PASSWORD, '/pushes/active');
    expect(signIn.status).toBe(303);
    expect(signIn.headers.get('location')).toBe('/users/two_factor/verify');
    expect(alice.cookies.has('sp_session')).toBe(false);
    expect(await signedIn(alice)).toBe(false);

    // The code of the step enrolment used was spent there: refused.
    const replay = await verify(alice, enrolCode);
    expect(replay.status).toBe(401);
    expect(alice.cookies.has('sp_session')).toBe(false);

    const next = await codeAt(secret, 30);
    const ok = await verify(alice, next);
    expect(ok.status).toBe(303);
    expect(ok.headers.get('location')).toBe('/pushes/active');
    expect(await signedIn(alice)).toBe(true);

    // The same code again, in a new sign-in: refused.
    await signOut(alice);
    await alice.signIn(email, PASSWORD);
    expect((await verify(alice, next)).status).toBe(401);
    expect(await signedIn(alice)).toBe(false);
  });

  it('takes a recovery code once', async () => {
    const code = recovery[3]!;
    const ok = await verify(alice, code.toUpperCase().replace(/-/g, ' '));
    expect(ok.status).toBe(303);
    expect(await signedIn(alice)).toBe(true);
    expect((await alice.page('/users/two_factor')).html).toContain('You have 9 unused recovery codes');

    await signOut(alice);
    await alice.signIn(email, PASSWORD);
    const again = await verify(alice, code);
    expect(again.status).toBe(401);
    expect(await signedIn(alice)).toBe(false);
  });

  it('limits wrong codes like passwords: 429 with Retry-After, even for a right code', async () => {
    const mallory = new Visitor(app.baseUrl);
    await mallory.signIn(email, PASSWORD);
    // alice's wrong codes above count too (per user): fill up to the limit of 5.
    let answer: Response | undefined;
    for (let i = 0; i < 8; i += 1) {
      answer = await verify(mallory, String(100000 + i));
      if (answer.status === 429) break;
      expect(answer.status).toBe(401);
    }
    expect(answer!.status).toBe(429);
    expect(Number(answer!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(errorOf(await answer!.text())).toMatch(/Too many wrong codes/);
    const right = await verify(mallory, recovery[5]!);
    expect(right.status).toBe(429);
    expect(await signedIn(mallory)).toBe(false);
    // The recovery code was not spent by the refused attempt.
    const [left] = await app.db.query<{ n: string }>(
      'select count(*) as n from recovery_codes r join users u on u.id = r.user_id where u.email = $1 and used_at is null',
      [email],
    );
    expect(Number(left!.n)).toBe(9);
    await app.db.query('delete from totp_attempts where user_id = (select id from users where email = $1)', [email]);
  });

  it('leaves API tokens alone: a token works without any code', async () => {
    const bob = new Visitor(app.baseUrl);
    await bob.signIn(email, PASSWORD);
    expect((await verify(bob, recovery[0]!)).status).toBe(303);
    const { csrf } = await bob.page('/users/token');
    const made = await (await bob.post('/users/token', { _csrf: csrf })).text();
    const token = /id="api-token">([^<]+)</.exec(made)![1]!;
    const api = await fetch(`${app.baseUrl}/api/v2/pushes/active`, { headers: { authorization: `Bearer ${token}` } });
    expect(api.status).toBe(200);
  });

  it('turns off with a code, after which the password alone signs in', async () => {
    const v = new Visitor(app.baseUrl);
    await v.signIn(email, PASSWORD);
    expect((await verify(v, recovery[1]!)).status).toBe(303);
    const { csrf } = await v.page('/users/two_factor');
    const wrong = await v.post('/users/two_factor/disable', { _csrf: csrf, code: '12345' });
    expect(wrong.status).toBe(401);
    const off = await v.post('/users/two_factor/disable', { _csrf: csrf, code: recovery[2]! });
    expect(off.status).toBe(200);
    expect(await off.text()).toContain('Two-factor sign-in is off.');
    const [row] = await app.db.query<{ totp_secret: string | null }>('select totp_secret from users where email = $1', [
      email,
    ]);
    expect(row!.totp_secret).toBeNull();
    await signOut(v);
    const signIn = await v.signIn(email, PASSWORD, '/pushes/active');
    expect(signIn.headers.get('location')).toBe('/pushes/active');
    expect(await signedIn(v)).toBe(true);
  });
});

describe('PWPUSH_REQUIRE_2FA', () => {
  it('sends a password account without a factor to enrol before any session, then signs it in', async () => {
    const v = new Visitor(strict.baseUrl);
    const signUp = await v.signUp('required@example.org', PASSWORD);
    expect(signUp.status).toBe(303);
    expect(signUp.headers.get('location')).toBe('/users/two_factor/setup');
    expect(v.cookies.has('sp_session')).toBe(false);
    expect(await signedIn(v)).toBe(false);
    const secret = await enrolmentKey(v);
    expect((await confirm(v, await codeAt(secret))).status).toBe(200);
    expect(await signedIn(v)).toBe(true);
    // No turning it off here.
    expect((await v.page('/users/two_factor')).html).toContain('it cannot be turned off');
    const { csrf } = await v.page('/users/two_factor');
    expect((await v.post('/users/two_factor/disable', { _csrf: csrf, code: await codeAt(secret, 30) })).status).toBe(
      403,
    );
    // The next sign-in asks for a code.
    await signOut(v);
    const again = await v.signIn('required@example.org', PASSWORD);
    expect(again.headers.get('location')).toBe('/users/two_factor/verify');
    expect((await verify(v, await codeAt(secret, 30))).status).toBe(303);
    expect(await signedIn(v)).toBe(true);
  });

  it('no longer counts a session signed in with a password alone (made before the setting)', async () => {
    const v = new Visitor(app.baseUrl);
    expect((await v.signUp('before@example.org', PASSWORD)).status).toBe(303);
    expect(await signedIn(v)).toBe(true);
    const sameCookies = new Visitor(strict.baseUrl);
    for (const [k, val] of v.cookies) sameCookies.cookies.set(k, val);
    expect(await signedIn(sameCookies)).toBe(false);
    // Signing in again on the strict instance sends the account to enrol.
    const signIn = await sameCookies.signIn('before@example.org', PASSWORD);
    expect(signIn.headers.get('location')).toBe('/users/two_factor/setup');
  });
});
