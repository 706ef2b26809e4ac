/**
 * Fault test on a real server process (the compiled server): anonymous callers send bodies of 140 MB, three at a time, with and without a
 * declared length, to the create operation, to an unknown route and with a wrong method. Every one is answered (413,
 * 404, 405) long before it is sent in full, and the server's resident memory stays within 150 MB of where it started.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMigratedDatabase, TEST_KEY_A, type TestDatabase } from '../support/db.js';
import { startCompiledServer, type ServerProcess } from '../support/compiled-server.js';

const BODY = 140 * 1024 * 1024;
const CHUNK = Buffer.alloc(1024 * 1024, 0x61);

let db: TestDatabase;
let server: ServerProcess;
let base: string;

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(/(\d+)/.exec(line)![1]) / 1024;
}

beforeAll(async () => {
  db = await createMigratedDatabase('sp_bodies');
  // The compiled server, as `npm start` runs it, with one process (the one whose memory is measured).
  server = await startCompiledServer({
    DATABASE_URL: db.url,
    PWPUSH_WORKERS: '1',
    PWPUSH_LOG_LEVEL: 'warn',
    PWPUSH_RATE_LIMIT_PER_MINUTE: '0',
    PWPUSH_MASTER_KEY: TEST_KEY_A.key.toString('hex'),
  });
  base = server.baseUrl;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  await db?.drop();
});

/** Sends up to 140 MB (declared or chunked) and resolves with the answer's status and how much was sent by then. */
function flood(method: string, p: string, declared: boolean): Promise<{ status: number; sentMb: number }> {
  return new Promise((resolve, reject) => {
    const url = new URL(p, base);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (declared) headers['content-length'] = String(BODY);
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method, headers });
    let sent = 0;
    let answered = false;
    req.on('response', (res) => {
      answered = true;
      res.resume();
      resolve({ status: res.statusCode!, sentMb: Math.round(sent / 1024 / 1024) });
    });
    req.on('error', (error) => {
      if (!answered) reject(error);
    });
    const pump = () => {
      while (!answered && sent < BODY) {
        sent += CHUNK.length;
        if (!req.write(CHUNK)) return void req.once('drain', pump);
      }
      if (!answered) req.end();
    };
    req.on('socket', pump);
  });
}

describe('big bodies from anonymous callers', () => {
  it('are refused before they are read, three at a time, and leave memory where it was', async () => {
    const before = rssMb(server.child.pid!);
    const sent: number[] = [];
    for (const declared of [true, false]) {
      const answers = await Promise.all([
        flood('POST', '/api/v2/pushes', declared),
        flood('POST', '/api/v2/pushes', declared),
        flood('POST', '/api/v2/pushes', declared),
      ]);
      expect(
        answers.map((a) => a.status),
        `declared ${declared}`,
      ).toEqual([413, 413, 413]);
      // Answered long before the body was sent (the small limit is 8 MiB).
      for (const a of answers) expect(a.sentMb).toBeLessThan(100);
      sent.push(...answers.map((a) => a.sentMb));
    }
    const others = await Promise.all([
      flood('POST', '/nope', true),
      flood('POST', '/api/v2/nope', false),
      flood('DELETE', '/api/v2/version', true),
    ]);
    expect(others.map((a) => a.status)).toEqual([404, 404, 405]);
    const after = rssMb(server.child.pid!);
    expect(after - before, `RSS ${before.toFixed(0)} → ${after.toFixed(0)} MB`).toBeLessThan(150);
    console.log(
      `big bodies: 6 × 413 after at most ${Math.max(...sent).toFixed(1)} MB sent each; RSS ${before.toFixed(0)} → ${after.toFixed(0)} MB`,
    );
    // The server still works.
    const created = await fetch(`${base}/api/v2/pushes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"push":{"payload":"fine"}}',
    });
    expect(created.status).toBe(201);
  }, 180_000);
});
