/**
 * The SDK parity suite: one set of behaviours, run against any target (the real server, the stateful mock).
 * Every answer is also checked against the bundled spec (see ../support/spec-fetch.ts).
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  BadRequestError,
  createSecretPushClient,
  fileFromBlob,
  fileFromBytes,
  ForbiddenError,
  NotFoundError,
  PassphraseIncorrectError,
  PassphraseRequiredError,
  RateLimitError,
  SecretPushError,
  type SecretPushClient,
  ValidationError,
} from '../../src/index.js';
import { specCheckingFetch } from '../support/spec-fetch.js';

export interface ParityTarget {
  /** Shown in test names. */
  name: string;
  baseUrl: string;
  /** Tokens of two different users. */
  tokenA: string;
  tokenB: string;
  /** tokenA's user's email, for the legacy pair. */
  emailA: string;
  /** Moves the target's clock to this instant; absent when the target's clock cannot be set. */
  setClock?: (date: Date) => void | Promise<void>;
  /** The target's current clock (defaults to real time). */
  now?: () => Date;
  /** Moves one push's timestamps back by `ms`, for targets whose clock cannot be set (the real server). */
  backdate?: (urlToken: string, ms: number) => Promise<void>;
}

async function rejection(promise: Promise<unknown>): Promise<SecretPushError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SecretPushError);
    return error as SecretPushError;
  }
  throw new Error('expected the call to fail, and it succeeded');
}

export function defineParitySuite(getTarget: () => ParityTarget): void {
  let target: ParityTarget;
  const checker = specCheckingFetch();
  let anon: SecretPushClient;
  let alice: SecretPushClient;
  let bob: SecretPushClient;

  beforeAll(() => {
    target = getTarget();
    const make = (token?: string, email?: string) =>
      createSecretPushClient({ baseUrl: target.baseUrl, token, email, fetch: checker.fetch, maxRetries: 0 });
    anon = make();
    alice = make(target.tokenA);
    bob = make(target.tokenB);
  });

  afterEach(() => {
    const violations = [...checker.violations];
    checker.clear();
    expect(violations, 'answers that break the spec').toEqual([]);
  });

  describe('version', () => {
    it('reports api_version 2.1, the oss edition and the feature set', async () => {
      const report = await anon.version();
      expect(report.api_version).toBe('2.1');
      expect(report.edition).toBe('oss');
      expect(report.features.api_token_authentication).toBe(true);
      // Workspaces are served (issue 41), so Pro clients may ask /api/v2/accounts.
      expect(report.features.accounts.enabled).toBe(true);
      expect(report.features.workspaces?.enabled).toBe(true);
    });

    it('ignores an invalid token on version', async () => {
      const stranger = createSecretPushClient({
        baseUrl: target.baseUrl,
        token: 'spt_not_a_real_token',
        fetch: checker.fetch,
      });
      await expect(stranger.version()).resolves.toMatchObject({ api_version: '2.1' });
    });
  });

  describe('create and retrieve', () => {
    it('creates a text push with the owner view and retrieves its payload, counting the view', async () => {
      const created = await alice.createPush({
        payload: 'correct horse',
        expire_after_views: 3,
        name: 'db',
        note: 'for ops',
      });
      expect(created).toMatchObject({
        kind: 'text',
        expired: false,
        views_remaining: 3,
        name: 'db',
        note: 'for ops',
        passphrase_protected: false,
      });
      expect(created.json_url).toMatch(new RegExp(`/api/v2/pushes/${created.url_token}$`));
      expect(created.html_url).toMatch(new RegExp(`/p/${created.url_token}$`));
      const retrieved = await anon.retrievePush(created.url_token);
      expect(retrieved.payload).toBe('correct horse');
      expect(retrieved.views_remaining).toBe(2);
      expect(retrieved.files).toEqual([]);
      expect(retrieved).not.toHaveProperty('note');
    });

    it('answers the last view with the payload and views_remaining 0, then the expired record', async () => {
      const created = await anon.createPush({ payload: 'once', expire_after_views: 1 });
      const last = await anon.retrievePush(created.url_token);
      expect(last).toMatchObject({ payload: 'once', views_remaining: 0, expired: false });
      const after = await anon.retrievePush(created.url_token);
      expect(after).toMatchObject({ payload: null, files: [], expired: true, views_remaining: 0, deleted: false });
      expect(after.expired_on).not.toBeNull();
    });

    it("does not count the owner's own retrieval as a view", async () => {
      const created = await alice.createPush({ payload: 'mine', expire_after_views: 2 });
      const own = await alice.retrievePush(created.url_token);
      expect(own).toMatchObject({ payload: 'mine', views_remaining: 2 });
      const audit = await alice.audit.page(created.url_token, 1);
      expect(audit.items.map((e) => e.kind)).toEqual(['creation', 'owner_view']);
    });

    it('throws NotFoundError for an unknown token', async () => {
      const error = await rejection(anon.retrievePush('zzzzzzzzzzzzzzzzzzzzzzzz'));
      expect(error).toBeInstanceOf(NotFoundError);
      expect(error).toMatchObject({ status: 404, code: 'not_found' });
      expect(error.requestId).toEqual(expect.any(String));
    });

    it('applies the defaults: 7 days, 5 views, deletable by viewer, no retrieval step', async () => {
      const created = await anon.createPush({ payload: 'defaults' });
      expect(created).toMatchObject({
        expire_after_days: 7,
        expire_after_views: 5,
        deletable_by_viewer: true,
        retrieval_step: false,
        days_remaining: 7,
      });
      expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(7 * 24 * 3600 * 1000);
    });

    it('makes the html_url end in /r when retrieval_step is on', async () => {
      const created = await anon.createPush({ payload: 'step', retrieval_step: true });
      expect(created.html_url).toMatch(new RegExp(`/p/${created.url_token}/r$`));
    });

    it('creates url and qr pushes', async () => {
      const url = await anon.createPush({ kind: 'url', payload: 'https://example.org/reset?code=1' });
      expect(url.kind).toBe('url');
      const qr = await anon.createPush({ kind: 'qr', payload: 'WIFI:T:WPA;S:lab;P:secret;;' });
      expect((await anon.retrievePush(qr.url_token)).payload).toBe('WIFI:T:WPA;S:lab;P:secret;;');
    });
  });

  describe('validation', () => {
    it('throws ValidationError with per-field errors for an empty payload and days out of range', async () => {
      const error = await rejection(anon.createPush({ payload: '', expire_after_days: 0 }));
      expect(error).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ status: 422, code: 'validation_failed' });
      const fields = Object.keys((error as ValidationError).errors);
      expect(fields).toEqual(expect.arrayContaining(['expire_after_days']));
    });

    it('rejects a url push whose payload is not an http(s) URL', async () => {
      const error = await rejection(anon.createPush({ kind: 'url', payload: 'javascript:alert(1)' }));
      expect(error).toBeInstanceOf(ValidationError);
      expect((error as ValidationError).errors).toHaveProperty('payload');
    });

    it('rejects views over 100 on expire_after_views', async () => {
      const error = await rejection(anon.createPush({ payload: 'x', expire_after_views: 101 }));
      expect((error as ValidationError).errors).toHaveProperty('expire_after_views');
    });
  });

  describe('passphrase', () => {
    it('throws PassphraseRequiredError, then PassphraseIncorrectError, then retrieves with X-Passphrase', async () => {
      const created = await alice.createPush({ payload: 'behind a phrase', passphrase: 'open sesame' });
      expect(created.passphrase_protected).toBe(true);
      expect(JSON.stringify(created)).not.toContain('open sesame');

      const missing = await rejection(anon.retrievePush(created.url_token));
      expect(missing).toBeInstanceOf(PassphraseRequiredError);
      expect(missing).not.toBeInstanceOf(AuthenticationError);
      expect(missing).toMatchObject({ status: 401, code: 'passphrase_required' });

      const wrong = await rejection(anon.retrievePush(created.url_token, { passphrase: 'close sesame' }));
      expect(wrong).toBeInstanceOf(PassphraseIncorrectError);
      expect(wrong).toMatchObject({ status: 401, code: 'passphrase_incorrect' });

      checker.seen.length = 0;
      const ok = await anon.retrievePush(created.url_token, { passphrase: 'open sesame' });
      expect(ok.payload).toBe('behind a phrase');
      const request = checker.seen.find((r) => r.method === 'GET');
      expect(request?.headers.get('X-Passphrase')).toBe('open sesame');
      expect(request?.url).not.toContain('sesame');

      const kinds = (await alice.audit.page(created.url_token, 1)).items.map((e) => e.kind);
      expect(kinds).toEqual(['creation', 'failed_passphrase', 'failed_passphrase', 'view']);
    });

    it('accepts the deprecated passphrase query parameter from clients that cannot send headers', async () => {
      const created = await anon.createPush({ payload: 'query phrase', passphrase: 'q p' });
      const response = await checker.fetch(`${target.baseUrl}/api/v2/pushes/${created.url_token}?passphrase=q%20p`);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { payload: string }).payload).toBe('query phrase');
    });

    it('answers 429 too_many_attempts with Retry-After after 5 wrong passphrases within a minute', async () => {
      const created = await anon.createPush({ payload: 'guarded', passphrase: 'right' });
      for (let i = 0; i < 5; i++) {
        await expect(anon.retrievePush(created.url_token, { passphrase: `wrong ${i}` })).rejects.toBeInstanceOf(
          PassphraseIncorrectError,
        );
      }
      const limited = await rejection(anon.retrievePush(created.url_token, { passphrase: 'wrong again' }));
      expect(limited).toBeInstanceOf(RateLimitError);
      expect(limited).toMatchObject({ status: 429, code: 'too_many_attempts' });
      const wait = (limited as RateLimitError).retryAfterSeconds;
      expect(wait).toBeGreaterThan(0);
      expect(wait).toBeLessThanOrEqual(60);
    });
  });

  describe('preview', () => {
    it('returns the html_url without counting a view or writing an audit entry', async () => {
      const created = await alice.createPush({ payload: 'peek', expire_after_views: 1 });
      const preview = await anon.previewPush(created.url_token);
      expect(preview.url).toBe(created.html_url);
      const audit = await alice.audit.page(created.url_token, 1);
      expect(audit.items.map((e) => e.kind)).toEqual(['creation']);
      expect((await anon.retrievePush(created.url_token)).payload).toBe('peek');
    });

    it('throws NotFoundError for an unknown token', async () => {
      await expect(anon.previewPush('zzzzzzzzzzzzzzzzzzzzzzzz')).rejects.toBeInstanceOf(NotFoundError);
    });
  });

  describe('expire', () => {
    it('lets the owner expire a push: deleted, payload gone, audit expire, and a second expire changes nothing', async () => {
      const created = await alice.createPush({ payload: 'burn me', deletable_by_viewer: false });
      const expired = await alice.expirePush(created.url_token);
      expect(expired).toMatchObject({ expired: true, deleted: true });
      expect(expired.expired_on).not.toBeNull();
      const again = await alice.expirePush(created.url_token);
      expect(again).toMatchObject({ expired: true, deleted: true, expired_on: expired.expired_on });
      expect(await anon.retrievePush(created.url_token)).toMatchObject({ expired: true, payload: null });
      const kinds = (await alice.audit.page(created.url_token, 1)).items.map((e) => e.kind);
      expect(kinds).toEqual(['creation', 'expire', 'failed_view']);
    });

    it('lets an anonymous viewer expire a deletable_by_viewer push', async () => {
      const created = await anon.createPush({ payload: 'viewer may burn', deletable_by_viewer: true });
      await expect(anon.expirePush(created.url_token)).resolves.toMatchObject({ expired: true, deleted: true });
    });

    it('refuses a push not deletable by viewers: 401 anonymous, 403 another user', async () => {
      const created = await alice.createPush({ payload: 'owner only', deletable_by_viewer: false });
      const anonymous = await rejection(anon.expirePush(created.url_token));
      expect(anonymous).toBeInstanceOf(AuthenticationError);
      expect(anonymous.status).toBe(401);
      const other = await rejection(bob.expirePush(created.url_token));
      expect(other).toBeInstanceOf(ForbiddenError);
      expect(other).toMatchObject({ status: 403, code: 'forbidden' });
      expect((await alice.retrievePush(created.url_token)).payload).toBe('owner only');
    });
  });

  describe('audit', () => {
    it('is for the owner only: AuthenticationError anonymous, ForbiddenError for another user', async () => {
      const created = await alice.createPush({ payload: 'audited' });
      const anonymous = await rejection(anon.audit.page(created.url_token, 1));
      expect(anonymous).toBeInstanceOf(AuthenticationError);
      expect(anonymous).toMatchObject({ status: 401, code: 'authentication_required' });
      await expect(bob.audit.page(created.url_token, 1)).rejects.toBeInstanceOf(ForbiddenError);
    });

    it("lists entries oldest first with view, failed_view and the request's user agent", async () => {
      const created = await alice.createPush({ payload: 'trail', expire_after_views: 1 });
      const agent = createSecretPushClient({
        baseUrl: target.baseUrl,
        fetch: checker.fetch,
        userAgent: 'parity-suite/1.0',
      });
      await agent.retrievePush(created.url_token);
      await agent.retrievePush(created.url_token);
      const entries: string[] = [];
      for await (const entry of alice.audit(created.url_token)) entries.push(entry.kind);
      expect(entries).toEqual(['creation', 'view', 'failed_view']);
      const page = await alice.audit.page(created.url_token, 1);
      expect(page.items[1]?.user_agent).toBe('parity-suite/1.0');
      expect(page).toMatchObject({ page: 1, totalCount: 3, nextPage: null });
      const times = page.items.map((e) => Date.parse(e.created_at));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
    });
  });

  describe('owner lists', () => {
    it('lists active pushes newest first and moves a push to expired once its last view is used', async () => {
      const first = await alice.createPush({ payload: 'one', expire_after_views: 1 });
      const second = await alice.createPush({ payload: 'two' });
      const page = await alice.activePushes.page(1);
      const tokens = page.items.map((p) => p.url_token);
      expect(tokens.indexOf(second.url_token)).toBeGreaterThanOrEqual(0);
      expect(tokens.indexOf(second.url_token)).toBeLessThan(tokens.indexOf(first.url_token));
      expect(page.totalCount).toBeGreaterThanOrEqual(2);

      await anon.retrievePush(first.url_token);
      const active: string[] = [];
      for await (const push of alice.activePushes()) active.push(push.url_token);
      expect(active).not.toContain(first.url_token);
      const expired: string[] = [];
      for await (const push of alice.expiredPushes()) expired.push(push.url_token);
      expect(expired).toContain(first.url_token);
      expect(expired).not.toContain(second.url_token);
    });

    it("never shows another user's pushes", async () => {
      const mine = await bob.createPush({ payload: 'bob only' });
      const seen: string[] = [];
      for await (const push of alice.activePushes()) seen.push(push.url_token);
      expect(seen).not.toContain(mine.url_token);
    });

    it('walks more than one page through the Link header (50 per page)', async () => {
      const made: string[] = [];
      for (let i = 0; i < 51; i++)
        made.push((await bob.createPush({ payload: `bulk ${i}`, name: `bulk ${i}` })).url_token);
      const first = await bob.activePushes.page(1);
      expect(first.items).toHaveLength(50);
      expect(first.nextPage).toBe(2);
      const all: string[] = [];
      for await (const push of bob.activePushes()) all.push(push.url_token);
      expect(all.length).toBe(first.totalCount);
      expect(new Set(all).size).toBe(all.length);
      // Newest first: the 51 made here come first, in reverse order of creation.
      expect(all.slice(0, 51)).toEqual([...made].reverse());
    });

    it('throws BadRequestError invalid_page for page 0', async () => {
      const error = await rejection(alice.activePushes.page(0));
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error).toMatchObject({ status: 400, code: 'invalid_page' });
    });

    it('requires a token: AuthenticationError without one, invalid_token with a bad one', async () => {
      const anonymous = await rejection(anon.activePushes.page(1));
      expect(anonymous).toBeInstanceOf(AuthenticationError);
      const stranger = createSecretPushClient({
        baseUrl: target.baseUrl,
        token: 'spt_not_a_real_token',
        fetch: checker.fetch,
      });
      const invalid = await rejection(stranger.expiredPushes.page(1));
      expect(invalid).toBeInstanceOf(AuthenticationError);
      expect(invalid).toMatchObject({ status: 401, code: 'invalid_token' });
    });
  });

  describe('authentication', () => {
    it("accepts the legacy X-User-Email + X-User-Token pair, and only with the token's own email", async () => {
      const legacy = createSecretPushClient({
        baseUrl: target.baseUrl,
        token: target.tokenA,
        email: target.emailA,
        fetch: checker.fetch,
      });
      const created = await legacy.createPush({ payload: 'legacy' });
      await expect(alice.audit.page(created.url_token, 1)).resolves.toMatchObject({ totalCount: 1 });
      const sent = checker.seen.find((r) => r.method === 'POST');
      expect(sent?.headers.get('X-User-Email')).toBe(target.emailA);
      expect(sent?.headers.get('Authorization')).toBeNull();
      const wrongEmail = createSecretPushClient({
        baseUrl: target.baseUrl,
        token: target.tokenA,
        email: 'someone@else.example',
        fetch: checker.fetch,
      });
      await expect(wrongEmail.activePushes.page(1)).rejects.toBeInstanceOf(AuthenticationError);
    });

    it('rejects an invalid token on create with AuthenticationError invalid_token', async () => {
      const stranger = createSecretPushClient({
        baseUrl: target.baseUrl,
        token: 'spt_not_a_real_token',
        fetch: checker.fetch,
      });
      const error = await rejection(stranger.createPush({ payload: 'x' }));
      expect(error).toBeInstanceOf(AuthenticationError);
      expect(error.code).toBe('invalid_token');
    });
  });

  describe('files', () => {
    it('attaches bytes and a Blob, retrieves signed links and downloads the bytes without counting a view', async () => {
      const bytes = new Uint8Array([0, 1, 2, 250, 251, 252, 255]);
      const blob = new Blob(['hello file'], { type: 'text/plain' });
      const created = await alice.createPush({
        payload: 'see attached',
        files: [fileFromBytes(bytes, 'key.bin'), fileFromBlob(blob, 'hello.txt')],
        expire_after_views: 2,
      });
      expect(created.kind).toBe('file');
      const retrieved = await anon.retrievePush(created.url_token);
      expect(retrieved.payload).toBe('see attached');
      expect(retrieved.files.map((f) => [f.filename, f.content_type, f.size])).toEqual([
        ['key.bin', 'application/octet-stream', 7],
        ['hello.txt', 'text/plain', 10],
      ]);
      expect(await anon.downloadFile(retrieved.files[0]!)).toEqual(bytes);
      expect(new TextDecoder().decode(await anon.downloadFile(retrieved.files[1]!.url))).toBe('hello file');
      expect(
        (await alice.activePushes.page(1)).items.find((p) => p.url_token === created.url_token)?.views_remaining,
      ).toBe(1);
    });

    it('refuses a file push without a token (file attachments require authentication)', async () => {
      const error = await rejection(anon.createPush({ files: [fileFromBytes(new Uint8Array([1]), 'a.bin')] }));
      expect(error).toBeInstanceOf(AuthenticationError);
      expect(error.status).toBe(401);
    });

    it('refuses a tampered download link with ForbiddenError', async () => {
      const created = await alice.createPush({ files: [fileFromBytes(new Uint8Array([9, 9]), 'x.bin')] });
      const file = (await anon.retrievePush(created.url_token)).files[0]!;
      const tampered = file.url.replace(
        /token=([^&]+)/,
        (_, t: string) => `token=${t.slice(0, -2)}${t.endsWith('AA') ? 'BB' : 'AA'}`,
      );
      const error = await rejection(anon.downloadFile(tampered));
      expect(error).toBeInstanceOf(ForbiddenError);
      expect(error.code).toBe('invalid_link');
    });
  });

  describe('expiry by duration', () => {
    it('keeps a 15-minute push for exactly 15 minutes: the record says so, and it is expired at the next read after', async () => {
      const created = await alice.createPush({
        payload: 'fifteen minutes',
        expire_after_duration: 0,
        expire_after_views: 3,
      });
      expect([
        created.expire_after_duration,
        created.expire_after_seconds,
        created.expire_after_days,
        created.days_remaining,
      ]).toEqual([0, 900, 1, 1]);
      expect(Date.parse(created.expires_at) - Date.parse(created.created_at)).toBe(900_000);
      const report = await anon.version();
      expect(report.features.pushes.expire_after_duration?.values).toContain(0);
      const refused = await rejection(
        alice.createPush({ payload: 'both', expire_after_duration: 3, expire_after_days: 7 }),
      );
      expect(refused).toBeInstanceOf(ValidationError);
      expect(Object.keys((refused as ValidationError).errors)).toEqual(['expire_after_days', 'expire_after_duration']);
      const past = 15 * 60 * 1000 + 1000;
      if (target.setClock) {
        const now = target.now?.() ?? new Date();
        await target.setClock(new Date(now.getTime() + past));
      } else if (target.backdate) {
        await target.backdate(created.url_token, past);
      } else {
        throw new Error(`target ${target.name} can neither set its clock nor backdate a push`);
      }
      const record = await anon.retrievePush(created.url_token);
      expect(record).toMatchObject({ expired: true, payload: null, days_remaining: 0, seconds_remaining: 0 });
    });
  });

  describe('expiry by days', () => {
    it('expires a push past expires_at at read time and moves it to the expired list', async () => {
      const created = await alice.createPush({ payload: 'one day', expire_after_days: 1 });
      const dayAndASecond = 24 * 3600 * 1000 + 1000;
      if (target.setClock) {
        const now = target.now?.() ?? new Date();
        await target.setClock(new Date(now.getTime() + dayAndASecond));
      } else if (target.backdate) {
        await target.backdate(created.url_token, dayAndASecond);
      } else {
        throw new Error(`target ${target.name} can neither set its clock nor backdate a push`);
      }
      const expiredList: string[] = [];
      for await (const push of alice.expiredPushes()) expiredList.push(push.url_token);
      expect(expiredList).toContain(created.url_token);
      const record = await anon.retrievePush(created.url_token);
      expect(record).toMatchObject({ expired: true, payload: null, days_remaining: 0 });
    });
  });
}
