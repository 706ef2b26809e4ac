/**
 * Fault test: every PostgreSQL process of a cluster of its own is frozen (SIGSTOP) for longer than every deadline,
 * while eight clients retrieve one-view pushes and a creator makes pushes with Idempotency-Keys, retrying each until
 * it succeeds. Afterwards:
 * - every push whose retrieval was answered with anything but 200 is still there and gives its payload: an error
 *   answer never hid a claimed view;
 * - every retried create with the same key left exactly one push;
 * - no answer was a 500.
 * Requires a Linux host and root or the same user as PostgreSQL (the test cluster runs as `postgres` under root).
 */
import { randomUUID } from 'node:crypto';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore, type Core } from '../../src/core.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { serve, type Served } from '../api/support/serve.js';
import { makeSettings } from '../support/db.js';

const FREEZE_MS = 12_000;
const PUSHES = 60;
const CLIENTS = 8;

/** The postmaster and every process it started (backends, checkpointer, WAL writer, …). */
function clusterPids(dataDir: string): number[] {
  const postmaster = Number(readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const children = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .filter((d) => {
      try {
        return Number(readFileSync(`/proc/${d}/stat`, 'utf8').split(') ')[1]!.split(' ')[1]) === postmaster;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [postmaster, ...children];
}

function signal(pids: number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      /* gone */
    }
  }
}

let dir: string;
let cluster: EmbeddedDatabase;
let core: Core;
let api: Served;
let frozen: number[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'secret-push-freeze-'));
  chmodSync(dir, 0o755);
  cluster = await startEmbeddedPostgres({ dataDir: dir, database: 'freeze' });
  core = await createCore(makeSettings({ databaseUrl: cluster.url }), { poolMax: 10 });
  api = await serve(core);
}, 120_000);

afterAll(async () => {
  signal(frozen, 'SIGCONT');
  await api?.close();
  await core?.close();
  await cluster?.stop().catch(() => undefined);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, p: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${api.baseUrl}${p}`, {
    method,
    headers: body ? { 'content-type': 'application/json', ...headers } : headers,
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the raw JSON answer, whatever its shape
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, any>) : null, headers: res.headers };
}

describe('the database frozen under load', () => {
  it('answers no error for a view it claimed, and retried creates with a key leave one push each', async () => {
    const owner = await core.users.createUser('freeze-owner@example.org');
    const pushes: { token: string; secret: string }[] = [];
    for (let i = 0; i < PUSHES; i += 1) {
      const secret = `frozen secret ${i} ${randomUUID()}`;
      const made = await call('POST', '/api/v2/pushes', { push: { payload: secret, expire_after_views: 1 } });
      pushes.push({ token: made.body!.url_token, secret });
    }

    const answers: { token: string; status: number; payload?: string }[] = [];
    const queue = [...pushes];
    let stop = false;
    const retrieve = async () => {
      while (!stop && queue.length > 0) {
        const { token } = queue.shift()!;
        const res = await call('GET', `/api/v2/pushes/${token}`);
        answers.push({ token, status: res.status, payload: res.body?.payload });
        await new Promise((r) => setTimeout(r, 150));
      }
    };
    const creates: { key: string; statuses: number[]; token?: string }[] = [];
    const create = async () => {
      while (!stop && creates.length < 40) {
        const entry = { key: randomUUID(), statuses: [] as number[], token: undefined as string | undefined };
        creates.push(entry);
        const body = { push: { payload: `made with ${entry.key}` } };
        for (;;) {
          const res = await call('POST', '/api/v2/pushes', body, {
            authorization: `Bearer ${owner.token}`,
            'idempotency-key': entry.key,
          });
          entry.statuses.push(res.status);
          if (res.status === 201) {
            entry.token = res.body!.url_token;
            break;
          }
          await new Promise((r) => setTimeout(r, 500));
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    };

    const workers = [...Array.from({ length: CLIENTS }, retrieve), create()];
    await new Promise((r) => setTimeout(r, 800));
    frozen = clusterPids(dir);
    signal(frozen, 'SIGSTOP');
    await new Promise((r) => setTimeout(r, FREEZE_MS));
    signal(frozen, 'SIGCONT');
    frozen = [];
    await new Promise((r) => setTimeout(r, 3_000));
    stop = true;
    await Promise.all(workers);

    const failed = answers.filter((a) => a.status !== 200);
    // The freeze was felt: some answers were errors, and each error was a 503 (nothing happened), never a 500.
    expect(failed.length).toBeGreaterThan(0);
    expect(new Set(failed.map((a) => a.status))).toEqual(new Set([503]));
    for (const a of answers.filter((x) => x.status === 200))
      expect(a.payload).toBe(pushes.find((p) => p.token === a.token)!.secret);
    // Every push answered with an error is intact: its view was not claimed.
    for (const a of failed) {
      const again = await call('GET', `/api/v2/pushes/${a.token}`);
      expect([again.status, again.body?.expired, again.body?.payload], a.token).toEqual([
        200,
        false,
        pushes.find((p) => p.token === a.token)!.secret,
      ]);
    }
    // Retried creates: one push per key, and the retries answered the same push.
    const retried = creates.filter((c) => c.statuses.length > 1);
    expect(retried.length).toBeGreaterThan(0);
    expect(creates.flatMap((c) => c.statuses).filter((s) => s !== 201 && s !== 503 && s !== 409)).toEqual([]);
    const rows = await core.pushes.list('active', 1, {
      actor: { userId: owner.userId, ip: '', userAgent: '', referrer: '' },
      baseUrl: api.baseUrl,
    });
    const made = creates.filter((c) => c.token).map((c) => c.token);
    expect(rows.total).toBe(made.length);
    expect(new Set(rows.items.map((p) => p.url_token))).toEqual(new Set(made));
    // The figures of the run, for notes and reports (the assertions above are what CI holds).
    const attempts = creates.flatMap((c) => c.statuses);
    console.log(
      `freeze ${FREEZE_MS} ms: ${answers.length} retrievals (${answers.length - failed.length} × 200, ${failed.length} × 503, all ${failed.length} re-read intact); ` +
        `${creates.length} keyed creates in ${attempts.length} attempts (${attempts.filter((s) => s === 503).length} × 503, ${attempts.filter((s) => s === 409).length} × 409), ${retried.length} retried, ${rows.total} pushes made`,
    );
  }, 120_000);
});
