/**
 * Hostile bodies against the compiled server as `npm start` runs it, one process (issue 19): a multipart body cut
 * short (the 110-byte request that killed the process), forms with hundreds of thousands of fields, JSON with millions
 * of items, hundreds of thousands of keys, deep nesting, a 50 MB string in each field, through every body type and
 * both API versions, anonymous and with a token. Each gets a 4xx at once (the times are printed; `npm run
 * bench:hostile` measures them), ordinary creates keep being answered meanwhile, and afterwards it is the same process,
 * its resident memory bounded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../../src/core.js';
import { startCompiledServer, type ServerProcess } from '../support/compiled-server.js';
import { createMigratedDatabase, makeSettings, TEST_KEY_A, type TestDatabase } from '../support/db.js';
import {
  CREATE_PATHS,
  hostileBodies,
  rawExchange,
  rssMb,
  stream,
  truncatedMultipart,
  type Answer,
} from '../support/hostile-bodies.js';

let db: TestDatabase;
let server: ServerProcess;
let base: string;
let token: string;
let pid: number;

beforeAll(async () => {
  db = await createMigratedDatabase('sp_hostile');
  server = await startCompiledServer({
    DATABASE_URL: db.url,
    PWPUSH_WORKERS: '1',
    PWPUSH_LOG_LEVEL: 'warn',
    PWPUSH_RATE_LIMIT_PER_MINUTE: '0',
    // The same key, under the same id, as the Core below (the start-up key check refuses a key under another id).
    PWPUSH_MASTER_KEY: `${TEST_KEY_A.id}:${TEST_KEY_A.key.toString('hex')}`,
  });
  base = server.baseUrl;
  pid = server.child.pid!;
  // A user of the same database, for the token cases.
  const core = await createCore(makeSettings({ databaseUrl: db.url }), { sweeper: false });
  try {
    token = (await core.users.createUser('hostile@example.org')).token;
  } finally {
    await core.close();
  }
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

const callers = [
  { name: 'anonymous', headers: {} as Record<string, string> },
  { name: 'with a token', headers: {} as Record<string, string> },
];

async function stillServing(): Promise<void> {
  expect(server.child.exitCode, server.output().slice(-2000)).toBeNull();
  expect(server.child.pid).toBe(pid);
  const created = await fetch(`${base}/api/v2/pushes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"push":{"payload":"still here"}}',
  });
  expect(created.status).toBe(201);
}

function request(path: string, contentType: string, body: Buffer, extra: Record<string, string>): Buffer {
  const lines = [
    `POST ${path} HTTP/1.1`,
    `Host: ${new URL(base).host}`,
    `Content-Type: ${contentType}`,
    `Content-Length: ${body.length}`,
    'Connection: close',
  ];
  for (const [name, value] of Object.entries(extra)) lines.push(`${name}: ${value}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), body]);
}

describe('a multipart body that ends inside a part', () => {
  for (const target of CREATE_PATHS) {
    for (const part of ['file', 'text'] as const) {
      it(`${target.path}, ${part} part: 4xx at once, anonymous and with a token, and the same process serves on`, async () => {
        callers[1]!.headers = { Authorization: `Bearer ${token}` };
        for (const caller of callers) {
          const { contentType, body } = truncatedMultipart(target.wrapper, part);
          const answer = await rawExchange(base, request(target.path, contentType, body, caller.headers));
          expect(answer.status, `${caller.name}: ${answer.head}\n${answer.body}`).toBeGreaterThanOrEqual(400);
          expect(answer.status).toBeLessThan(500);
          const json = JSON.parse(answer.body) as { code: string };
          // Anonymous callers may send no file on this instance: the first file part answers 401 before the cut.
          const expected =
            part === 'file' && caller.name === 'anonymous'
              ? ['authentication_required', 'invalid_form']
              : ['invalid_form'];
          expect(expected).toContain(json.code);
          expect(answer.ms).toBeLessThan(5_000);
          await stillServing();
        }
      });
    }
  }

  it('a file part past the count the reader keeps (its stream discarded), cut short: 400 at once', async () => {
    const parts = Array.from(
      { length: 11 },
      (_, i) => `--X\r\nContent-Disposition: form-data; name="push[files][]"; filename="f${i}.txt"\r\n\r\nbytes\r\n`,
    ).join('');
    const body = Buffer.from(
      `${parts}--X\r\nContent-Disposition: form-data; name="push[files][]"; filename="last.txt"\r\n\r\ncut sh`,
    );
    const answer = await rawExchange(
      base,
      request('/api/v2/pushes', 'multipart/form-data; boundary=X', body, { Authorization: `Bearer ${token}` }),
    );
    expect(answer.status, answer.body).toBe(400);
    expect(JSON.parse(answer.body).code).toBe('invalid_form');
    await stillServing();
  });

  it("the pages' forms: a cut multipart body and a form of 200,000 fields answer 4xx at once", async () => {
    const { contentType, body } = truncatedMultipart('x', 'file');
    const cut = await rawExchange(
      base,
      request('/', contentType, Buffer.from(body.toString().replace('x[files][]', 'files')), {}),
    );
    expect(cut.status, cut.head).toBe(400);
    expect(cut.ms).toBeLessThan(5_000);
    const fields = await rawExchange(
      base,
      request('/', 'application/x-www-form-urlencoded', Buffer.from('payload=x' + '&files'.repeat(200_000)), {}),
    );
    expect(fields.status, fields.head).toBeGreaterThanOrEqual(400);
    expect(fields.status).toBeLessThan(500);
    expect(fields.ms).toBeLessThan(5_000);
    await stillServing();
  });

  it('sent chunked, the cut body is refused alike', async () => {
    const { contentType, body } = truncatedMultipart('push', 'file');
    const chunked = Buffer.concat([
      Buffer.from(
        `POST /api/v2/pushes HTTP/1.1\r\nHost: ${new URL(base).host}\r\nContent-Type: ${contentType}\r\nTransfer-Encoding: chunked\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
      ),
      Buffer.from(`${body.length.toString(16)}\r\n`),
      body,
      Buffer.from('\r\n0\r\n\r\n'),
    ]);
    const answer = await rawExchange(base, chunked);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body).code).toBe('invalid_form');
    await stillServing();
  });
});

describe('hostile bodies through every body type and both API versions', () => {
  it('each gets a 4xx at once, ordinary creates are answered meanwhile, and the process and its memory hold', async () => {
    callers[1]!.headers = { Authorization: `Bearer ${token}` };
    const before = await rssMb(pid);
    // Ordinary traffic alongside: a create every 20 ms, each must be answered 201.
    const ordinary: number[] = [];
    let running = true;
    const background = (async () => {
      while (running) {
        const t0 = performance.now();
        const r = await fetch(`${base}/api/v2/pushes`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"push":{"payload":"ordinary"}}',
        });
        expect(r.status).toBe(201);
        ordinary.push(performance.now() - t0);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const rows: { what: string; answer: Answer }[] = [];
    let peak = before;
    try {
      for (const target of CREATE_PATHS) {
        for (const type of ['json', 'urlencoded', 'multipart'] as const) {
          for (const body of hostileBodies(target, type)) {
            for (const caller of callers) {
              const answer = await stream(
                base,
                'POST',
                target.path,
                { 'content-type': body.contentType, ...caller.headers },
                body.chunks(),
              );
              const what = `${target.path} ${type} ${body.name} (${caller.name})`;
              rows.push({ what, answer });
              expect(answer.status, `${what}: ${answer.body}`).toBeGreaterThanOrEqual(400);
              expect(answer.status, `${what}: ${answer.body}`).toBeLessThan(500);
              expect(answer.ms, what).toBeLessThan(10_000);
              peak = Math.max(peak, await rssMb(pid));
            }
          }
        }
      }
    } finally {
      running = false;
      await background;
    }
    const after = await rssMb(pid);
    const slowest = rows.reduce((a, b) => (b.answer.ms > a.answer.ms ? b : a));
    console.log(
      `hostile bodies: ${rows.length} refused, median ${median(rows.map((r) => r.answer.ms)).toFixed(0)} ms, slowest ${slowest.answer.ms.toFixed(0)} ms (${slowest.what}); ` +
        `ordinary creates meanwhile: ${ordinary.length}, median ${median(ordinary).toFixed(0)} ms; RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} → ${after.toFixed(0)} MB`,
    );
    expect(ordinary.length).toBeGreaterThan(5);
    expect(peak - before, `RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} MB`).toBeLessThan(300);
    await stillServing();
  }, 600_000);
});

describe('Host headers', () => {
  it('two Host headers answer 400 with a JSON error, on the API and on the pages', async () => {
    for (const path of ['/api/v2/version', '/p.json', '/']) {
      const host = new URL(base).host;
      const answer = await rawExchange(
        base,
        Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nHost: evil.example\r\nConnection: close\r\n\r\n`),
      );
      expect(answer.status, `${path}: ${answer.head}`).toBe(400);
      expect(answer.head).toMatch(/content-type: application\/json/i);
      expect(JSON.parse(answer.body)).toMatchObject({
        code: 'bad_request',
        error: 'The request has more than one Host header.',
      });
    }
    await stillServing();
  });

  it('a Host header that names no host answers 400 too; a host name, an address or an IPv6 literal with a port do not', async () => {
    for (const host of ['a'.repeat(300), 'evil.example/path', 'a b', 'x@y:80:90']) {
      const answer = await rawExchange(
        base,
        Buffer.from(`GET /api/v2/version HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
      );
      expect(answer.status, `${host.slice(0, 20)}: ${answer.head}`).toBe(400);
      expect(JSON.parse(answer.body)).toMatchObject({ code: 'bad_request' });
    }
    for (const host of [
      'secret-push.example.org',
      'localhost:5100',
      '127.0.0.1:8080',
      '[::1]:5100',
      'xn--bcher-kva.example',
    ]) {
      const answer = await rawExchange(
        base,
        Buffer.from(`GET /api/v2/version HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
      );
      expect(answer.status, `${host}: ${answer.head}`).toBe(200);
    }
  });
});

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}
