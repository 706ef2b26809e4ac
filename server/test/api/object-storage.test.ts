/**
 * File bytes in an S3-compatible object store (PWPUSH_FILE_STORAGE=s3://…), against a real S3-protocol server the
 * test starts on loopback (s3rver, with V4 signatures checked: ../support/s3.ts), through the real AWS SDK, the real
 * app and PostgreSQL, with the generated SDK as the client: round trips (JSON and multipart, pushes and request
 * attachments), what the store holds (ciphertext only), wrong credentials, deletes on expiry and view burn, the
 * reconcile of orphans (and /metrics), a store that is down (503, nothing stored, no view spent) and the migration
 * both ways.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPush, createRequest, expirePush, getPush, getRequest } from '@secret-push/sdk/generated';
import { DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { createKeyring } from '../../src/crypto/envelope.js';
import { poolDb } from '../../src/db/sql.js';
import { runFilesCli } from '../../src/cli/files.js';
import { migrateFiles } from '../../src/files/migrate.js';
import { createServerMetrics, type ServerMetrics } from '../../src/runtime/metrics.js';
import { createMigratedDatabase, TEST_KEY_A } from '../support/db.js';
import { S3_ACCESS_KEY_ID, S3_BUCKET, startS3Server, type S3Server } from '../support/s3.js';
import { multipart } from './support/multipart.js';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';

const MIN = 60_000;
let s3: S3Server;
let raw: S3Client;

beforeAll(async () => {
  s3 = await startS3Server();
  const settings = s3.settings();
  raw = new S3Client({
    region: 'us-east-1',
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: settings.credentials!,
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
});
afterAll(async () => {
  raw?.destroy();
  await s3?.close();
});

/** The keys under `prefix` in the bucket. */
async function keys(prefix: string): Promise<string[]> {
  const page = await raw.send(new ListObjectsV2Command({ Bucket: S3_BUCKET, Prefix: prefix }));
  return (page.Contents ?? []).map((o) => o.Key!).sort();
}

async function objectBytes(key: string): Promise<Buffer> {
  const { GetObjectCommand } = await import('@aws-sdk/client-s3');
  const got = await raw.send(new GetObjectCommand({ Bucket: S3_BUCKET, Key: key }));
  return Buffer.from(await got.Body!.transformToByteArray());
}

/** Waits until `check` holds (the objects of a delete go in the background). */
async function eventually(check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const b64 = (text: string) => Buffer.from(text).toString('base64');

async function download(api: RealApi, url: string): Promise<{ status: number; bytes: Buffer }> {
  const res = await fetch(url.replace(/^https?:\/\/[^/]+/, api.baseUrl));
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
}

/** A server with its files in the test store under a prefix of its own. */
async function storeApi(prefix: string, metrics?: ServerMetrics): Promise<RealApi> {
  return startRealApi({ fileStorage: s3.settings(prefix) }, metrics ? { core: { metrics } } : {});
}

describe('file pushes in the object store', () => {
  let api: RealApi;
  let token: string;
  beforeAll(async () => {
    api = await storeApi('round/');
    token = (await api.user('files@example.org')).token;
  });
  afterAll(() => api.stop());

  it('keeps JSON and multipart files as sealed objects and serves them back through signed links', async () => {
    const json = expectData(
      await createPush({
        client: api.client,
        auth: bearer(token),
        body: { push: { files: [{ filename: 'a.txt', content: b64('plain secret A') }], expire_after_views: 3 } },
      }),
      201,
    );
    const big = Buffer.alloc(6 * 1024 * 1024 + 12345, 7); // more than one part of a multipart upload
    const form = multipart([
      { name: 'push[expire_after_views]', value: '3' },
      { name: 'push[files][]', filename: 'b.bin', bytes: big },
      { name: 'push[files][]', filename: 'c.txt', bytes: Buffer.from('plain secret C') },
    ]);
    const made = await api.raw('/api/v2/pushes', {
      method: 'POST',
      body: form.body,
      headers: { 'Content-Type': form.type, Authorization: `Bearer ${token}` },
    });
    expect(made.status).toBe(201);

    const rows = await api.db.query<{ push_id: string; object_key: string | null; content: Buffer | null }>(
      'select push_id, object_key, content from push_files order by push_id, position',
    );
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row.content).toBeNull();
      expect(row.object_key).toMatch(/^round\/push-files\/[A-Za-z0-9_-]+$/);
    }
    expect(await keys('round/')).toEqual(rows.map((r) => r.object_key).sort());
    // The store holds ciphertext only.
    for (const key of await keys('round/')) {
      const bytes = await objectBytes(key);
      expect(bytes.includes(Buffer.from('plain secret'))).toBe(false);
      expect(bytes.includes(Buffer.alloc(64, 7))).toBe(false);
    }

    const a = expectData(await getPush({ client: api.client, path: { url_token: json.url_token } }));
    expect((await download(api, a.files[0]!.url)).bytes.toString()).toBe('plain secret A');
    const b = expectData(await getPush({ client: api.client, path: { url_token: made.body.url_token as string } }));
    expect(b.files.map((f) => [f.filename, f.size])).toEqual([
      ['b.bin', big.length],
      ['c.txt', 14],
    ]);
    const got = await download(api, b.files[0]!.url);
    expect([got.status, got.bytes.equals(big)]).toEqual([200, true]);
    expect((await download(api, b.files[1]!.url)).bytes.toString()).toBe('plain secret C');
    expect(api.checker.violations).toEqual([]);
  });

  it("keeps a request's attachments in the store and shows them inline", async () => {
    const made = expectData(
      await createRequest({
        client: api.client,
        auth: bearer(token),
        body: { request: { request: 'send the key', files: [{ filename: 'hint.txt', content: b64('attached!') }] } },
      }),
      201,
    );
    const [row] = await api.db.query<{ object_key: string; content: Buffer | null }>(
      'select object_key, content from request_files',
    );
    expect(row!.content).toBeNull();
    expect(row!.object_key).toMatch(/^round\/request-files\//);
    const read = expectData(
      await getRequest({ client: api.client, auth: bearer(token), path: { url_token: made.url_token } }),
    );
    expect(Buffer.from(read.files[0]!.content, 'base64').toString()).toBe('attached!');
  });

  it('a deleted push and a burnt last view remove their objects', async () => {
    const deleted = expectData(
      await createPush({
        client: api.client,
        auth: bearer(token),
        body: { push: { files: [{ filename: 'd.txt', content: b64('delete me') }] } },
      }),
      201,
    );
    const [d] = await api.db.query<{ object_key: string }>(
      'select f.object_key from push_files f join pushes p on p.id = f.push_id where p.url_token = $1',
      [deleted.url_token],
    );
    expect(await keys(d!.object_key)).toEqual([d!.object_key]);
    expectData(await expirePush({ client: api.client, auth: bearer(token), path: { url_token: deleted.url_token } }));
    await eventually(async () => (await keys(d!.object_key)).length === 0);

    const burnt = expectData(
      await createPush({
        client: api.client,
        auth: bearer(token),
        body: { push: { files: [{ filename: 'e.txt', content: b64('burn me') }], expire_after_views: 1 } },
      }),
      201,
    );
    const [e] = await api.db.query<{ object_key: string }>(
      'select f.object_key from push_files f join pushes p on p.id = f.push_id where p.url_token = $1',
      [burnt.url_token],
    );
    const view = expectData(await getPush({ client: api.client, path: { url_token: burnt.url_token } }));
    expect((await api.db.query('select expired from pushes where url_token = $1', [burnt.url_token]))[0]).toEqual({
      expired: true,
    });
    // The link issued with the last view works until it lapses; then the sweeper deletes the row and its object.
    expect((await download(api, view.files[0]!.url)).bytes.toString()).toBe('burn me');
    await api.core.sweep(new Date(Date.now() + 4 * MIN));
    expect(await keys(e!.object_key)).toEqual([e!.object_key]);
    await api.core.sweep(new Date(Date.now() + 6 * MIN));
    await eventually(async () => (await keys(e!.object_key)).length === 0);
    expect(await api.db.query('select 1 from push_files where object_key = $1', [e!.object_key])).toEqual([]);
  });
});

describe('a store that is down, or refuses the credentials', () => {
  let api: RealApi;
  let token: string;
  beforeAll(async () => {
    api = await storeApi('down/');
    token = (await api.user('down@example.org')).token;
  });
  afterAll(async () => {
    await s3.start().catch(() => undefined);
    await api.stop();
  });

  const pushCount = async () => Number((await api.db.query('select count(*) as n from pushes'))[0]!.n);

  it('answers a create with files 503 with Retry-After and stores nothing; text pushes go on', async () => {
    const before = await pushCount();
    await s3.stop();
    try {
      const refused = await createPush({
        client: api.client,
        auth: bearer(token),
        body: { push: { files: [{ filename: 'x.txt', content: b64('never stored') }] } },
      });
      expectError(refused, 503, 'service_unavailable');
      expect(refused.response?.headers.get('retry-after')).toMatch(/^\d+$/);
      const form = multipart([{ name: 'push[files][]', filename: 'y.bin', bytes: Buffer.alloc(100_000, 1) }]);
      const streamed = await api.raw('/api/v2/pushes', {
        method: 'POST',
        body: form.body,
        headers: { 'Content-Type': form.type, Authorization: `Bearer ${token}` },
      });
      expect([streamed.status, streamed.body.code]).toEqual([503, 'service_unavailable']);
      expect(streamed.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await pushCount()).toBe(before);
      expectData(await createPush({ client: api.client, body: { push: { payload: 'text is fine' } } }), 201);
      expect(await pushCount()).toBe(before + 1);
    } finally {
      await s3.start();
    }
    expect(await keys('down/')).toEqual([]);
    expect(api.checker.violations).toEqual([]);
  });

  it('stopped in the middle of a streamed upload: 503, no push, and no object left', async () => {
    const before = await pushCount();
    const form = multipart([
      { name: 'push[files][]', filename: 'one.bin', bytes: Buffer.alloc(1024, 1) },
      { name: 'push[files][]', filename: 'two.bin', bytes: Buffer.alloc(7 * 1024 * 1024, 2) },
    ]);
    // The store goes away once the first object is stored and the second one's parts are on their way.
    let stopping: Promise<void> | null = null;
    let done = false;
    const watch = setInterval(() => {
      void keys('down/').then(
        (k) => {
          if (k.length > 0 && !stopping && !done) stopping = s3.stop();
        },
        () => undefined,
      );
    }, 5);
    let answer: Awaited<ReturnType<RealApi['raw']>>;
    try {
      answer = await api.raw('/api/v2/pushes', {
        method: 'POST',
        body: form.body,
        headers: { 'Content-Type': form.type, Authorization: `Bearer ${token}` },
      });
    } finally {
      done = true;
      clearInterval(watch);
      await stopping;
      await s3.start();
    }
    expect(stopping).not.toBeNull();
    expect([answer.status, answer.body.code]).toEqual([503, 'service_unavailable']);
    expect(await pushCount()).toBe(before);
    // What was stored before the store went away is deleted by the request (or, if the store was still down then,
    // by the reconcile once it is older than the grace period).
    await api.core.reconcileFiles(new Date(Date.now() + 2 * 60 * MIN));
    expect(await keys('down/')).toEqual([]);
  });

  it('spends no view while the files cannot be fetched, and serves them once the store is back', async () => {
    const push = expectData(
      await createPush({
        client: api.client,
        auth: bearer(token),
        body: { push: { files: [{ filename: 'z.txt', content: b64('wait for me') }], expire_after_views: 1 } },
      }),
      201,
    );
    await s3.stop();
    try {
      const down = await getPush({ client: api.client, path: { url_token: push.url_token } });
      const error = expectError(down, 503, 'service_unavailable');
      expect(error.error).toMatch(/no view was counted/);
      expect(down.response?.headers.get('retry-after')).toMatch(/^\d+$/);
      const [row] = await api.db.query('select views_used, expired from pushes where url_token = $1', [push.url_token]);
      expect(row).toEqual({ views_used: 0, expired: false });
    } finally {
      await s3.start();
    }
    const view = expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
    expect((await download(api, view.files[0]!.url)).bytes.toString()).toBe('wait for me');
  });

  it('refuses to store with the wrong secret (the store checks signatures): 503, nothing stored', async () => {
    const wrong = await startRealApi({
      fileStorage: s3.settings('wrong/', {
        accessKeyId: s3.settings().credentials!.accessKeyId,
        secretAccessKey: 'nope-nope-nope',
      }),
    });
    try {
      const refusedBefore = s3.refused;
      const user = await wrong.user('wrong@example.org');
      expectError(
        await createPush({
          client: wrong.client,
          auth: bearer(user.token),
          body: { push: { files: [{ filename: 'w.txt', content: b64('w') }] } },
        }),
        503,
        'service_unavailable',
      );
      expect(s3.refused).toBeGreaterThan(refusedBefore);
      expect(await wrong.db.query('select 1 from pushes')).toEqual([]);
    } finally {
      await wrong.stop();
    }
    expect(await keys('wrong/')).toEqual([]);
  });
});

describe("the sweeper's reconcile", () => {
  it('removes old objects without a row, drops rows whose object is gone, and counts both in /metrics', async () => {
    // What /metrics answers (runtime/serve.ts serves this registry).
    const metrics = createServerMetrics('test');
    const api = await storeApi('reconcile/', metrics);
    try {
      const user = await api.user('reconcile@example.org');
      const push = expectData(
        await createPush({
          client: api.client,
          auth: bearer(user.token),
          body: {
            push: {
              files: [
                { filename: 'kept.txt', content: b64('kept') },
                { filename: 'lost.txt', content: b64('lost') },
              ],
            },
          },
        }),
        201,
      );
      const [kept, lost] = await api.db.query<{ object_key: string }>(
        'select object_key from push_files order by position',
      );
      await raw.send(new DeleteObjectCommand({ Bucket: S3_BUCKET, Key: lost!.object_key }));
      const orphan = 'reconcile/push-files/orphan-of-a-failed-create';
      await raw.send(new PutObjectCommand({ Bucket: S3_BUCKET, Key: orphan, Body: 'sealed bytes' }));
      // Someone else's object under the prefix but outside the server's folders is never touched.
      await raw.send(new PutObjectCommand({ Bucket: S3_BUCKET, Key: 'reconcile/README', Body: 'not ours' }));

      // Within the grace period, the orphan stays (a create may still be about to commit its row).
      const early = await api.core.reconcileFiles(new Date());
      expect(early).toEqual({ objectsWithoutRow: 1, objectsRemoved: 0, rowsWithoutObject: 1, rowsDeleted: 1 });
      expect(await keys('reconcile/')).toEqual([kept!.object_key, orphan, 'reconcile/README'].sort());
      const late = await api.core.reconcileFiles(new Date(Date.now() + 2 * 60 * MIN));
      expect(late).toEqual({ objectsWithoutRow: 1, objectsRemoved: 1, rowsWithoutObject: 0, rowsDeleted: 0 });
      expect(await keys('reconcile/')).toEqual([kept!.object_key, 'reconcile/README'].sort());

      const view = expectData(await getPush({ client: api.client, path: { url_token: push.url_token } }));
      expect(view.files.map((f) => f.filename)).toEqual(['kept.txt']);
      const scraped = (await metrics.registry.metrics()).split('\n');
      expect(scraped).toContain('secret_push_file_store_reconciles_total{result="ok"} 2');
      expect(scraped).toContain('secret_push_file_store_orphans_total{kind="object_without_row",outcome="removed"} 1');
      expect(scraped).toContain('secret_push_file_store_orphans_total{kind="object_without_row",outcome="kept"} 1');
      expect(scraped).toContain('secret_push_file_store_orphans_total{kind="row_without_object",outcome="removed"} 1');
    } finally {
      await api.stop();
    }
  });
});

describe('npm run files -- migrate', () => {
  it('moves files from PostgreSQL to the store and back, verified, resumable, readable all along', async () => {
    const database = await createMigratedDatabase('sp_migrate');
    const pgApi = await startRealApi({}, { db: database });
    const user = await pgApi.user('migrate@example.org');
    const push = expectData(
      await createPush({
        client: pgApi.client,
        auth: bearer(user.token),
        body: {
          push: {
            files: [
              { filename: 'one.txt', content: b64('first file') },
              { filename: 'two.txt', content: b64('second file') },
            ],
            expire_after_views: 10,
          },
        },
      }),
      201,
    );
    const request = expectData(
      await createRequest({
        client: pgApi.client,
        auth: bearer(user.token),
        body: { request: { request: 'r', files: [{ filename: 'r.txt', content: b64('request file') }] } },
      }),
      201,
    );
    await pgApi.stop().catch(() => undefined);
    const s3Api = await startRealApi({ fileStorage: s3.settings('migrate/') }, { db: database });
    try {
      const read = async () => {
        const view = expectData(await getPush({ client: s3Api.client, path: { url_token: push.url_token } }));
        const bytes = await Promise.all(view.files.map(async (f) => (await download(s3Api, f.url)).bytes.toString()));
        const req = expectData(
          await getRequest({ client: s3Api.client, auth: bearer(user.token), path: { url_token: request.url_token } }),
        );
        return [...bytes, Buffer.from(req.files[0]!.content, 'base64').toString()];
      };
      const expected = ['first file', 'second file', 'request file'];
      expect(await read()).toEqual(expected);

      const { pool, db } = await directDb(s3Api);
      try {
        const keyring = createKeyring([TEST_KEY_A]);
        // The command itself, as an operator runs it (its own pool and store, from the environment).
        const lines: string[] = [];
        const errors: string[] = [];
        const code = await runFilesCli(
          ['migrate', '--to', 's3'],
          (l) => lines.push(l),
          (l) => errors.push(l),
          {
            DATABASE_URL: s3Api.db.url,
            PWPUSH_ENV: 'test',
            PWPUSH_MASTER_KEY: `${TEST_KEY_A.id}:${TEST_KEY_A.key.toString('hex')}`,
            PWPUSH_FILE_STORAGE: `s3://${S3_BUCKET}/migrate/`,
            PWPUSH_S3_ENDPOINT: s3.endpoint,
            PWPUSH_S3_FORCE_PATH_STYLE: 'true',
            PWPUSH_S3_ACCESS_KEY_ID: S3_ACCESS_KEY_ID,
            PWPUSH_S3_SECRET_ACCESS_KEY: s3.settings().credentials!.secretAccessKey,
          },
        );
        expect([code, errors]).toEqual([0, []]);
        expect(lines).toEqual([
          'push_files: 2 moved to s3, 0 failed',
          'request_files: 1 moved to s3, 0 failed',
          `3 file(s) moved to s3 (s3://${S3_BUCKET}/migrate/), 0 failed`,
        ]);
        expect(await s3Api.db.query('select 1 from push_files where content is not null')).toEqual([]);
        expect((await keys('migrate/')).length).toBe(3);
        expect(await read()).toEqual(expected);
        // Again: nothing left to move (a stopped run picks up where it was).
        expect(await migrateFiles(db, keyring, s3Api.core.files!, 's3')).toEqual({ moved: 0, failed: 0 });

        expect(await migrateFiles(db, keyring, s3Api.core.files!, 'postgres')).toEqual({ moved: 3, failed: 0 });
        expect(await s3Api.db.query('select 1 from push_files where object_key is not null')).toEqual([]);
        await eventually(async () => (await keys('migrate/')).length === 0);
        expect(await read()).toEqual(expected);
      } finally {
        await pool.end();
      }
    } finally {
      await s3Api.stop();
      await database.drop();
    }
  });
});

/** A connection pool of its own on the API's database (what the CLI opens). */
async function directDb(api: RealApi) {
  const pg = (await import('pg')).default;
  const pool = new pg.Pool({ connectionString: api.db.url, max: 2 });
  return { pool, db: poolDb(pool) };
}
