/**
 * `secret-push webhooks` against the real server with webhooks on (and private targets allowed, as on a developer's
 * machine: the receiver is on loopback): `listen --register` registers a webhook for itself, prints the verified
 * events of a push made and viewed with the CLI, and deletes the webhook when it stops; a delivery without a valid
 * signature is refused (401) and not printed; `create`, `test`, `list`, `delete`.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealApi, type RealApi } from '@secret-push/server/testing';
import { newHome, runCli, startCli } from './support/run.js';

let api: RealApi;
let env: Record<string, string>;
let recipient: Record<string, string>;
let home: string;

/** A port free right now (the listener takes it next). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A Standard Webhooks signature made here, independently of the SDK. */
function sign(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

beforeAll(async () => {
  api = await startRealApi({ webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1, 1, 1] } });
  const owner = await api.user('hooks@cli.test');
  ({ home, env } = newHome());
  recipient = { ...env };
  env = { ...env, SECRET_PUSH_URL: api.baseUrl, SECRET_PUSH_TOKEN: owner.token };
});

afterAll(async () => {
  await api?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('secret-push webhooks against the real server', () => {
  it('listens with --register: prints the verified events of a push, then deletes its webhook', async () => {
    const port = await freePort();
    const listener = startCli(
      [
        'webhooks',
        'listen',
        '--port',
        String(port),
        '--register',
        `http://127.0.0.1:${port}/`,
        '--events',
        'push.created,push.viewed',
        '--max-events',
        '2',
        '--json',
      ],
      { env },
    );
    await listener.waitFor(/registered webhook (\S+) for/);
    await listener.waitFor(/listening on http:\/\/127\.0\.0\.1:\d+\//);
    const pushed = await runCli(['push', 'watched secret'], { env });
    expect((await runCli(['get', pushed.stdout.trim()], { env: recipient })).stdout).toBe('watched secret');
    const done = await listener.exited;
    expect(done.code, done.stderr).toBe(0);
    const events = done.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; data: Record<string, unknown> });
    expect(events.map((e) => e.type)).toEqual(['push.created', 'push.viewed']);
    expect(events[1]!.data).toMatchObject({ push_id: expect.any(String), views_remaining: 4 });
    expect(done.stdout).not.toContain('watched secret');
    expect(JSON.parse((await runCli(['webhooks', 'list', '--json'], { env })).stdout)).toEqual([]);
  });

  it('refuses a delivery without a valid signature (401, not printed) and prints a signed one', async () => {
    const secret = `whsec_${randomBytes(32).toString('base64')}`;
    const secretFile = path.join(home, 'whsec');
    writeFileSync(secretFile, `${secret}\n`, { mode: 0o600 });
    const listener = startCli(['webhooks', 'listen', '--port', '0', '--secret-file', secretFile, '--max-events', '1'], {
      env,
    });
    const url = (await listener.waitFor(/listening on (http:\S+)/))[1]!;
    const body = JSON.stringify({
      type: 'webhook.test',
      timestamp: new Date().toISOString(),
      data: { webhook_id: 'w1' },
    });
    const now = Math.floor(Date.now() / 1000);
    const unsigned = await fetch(url, { method: 'POST', body });
    expect(unsigned.status).toBe(401);
    const forged = await fetch(url, {
      method: 'POST',
      body,
      headers: {
        'webhook-id': 'msg_1',
        'webhook-timestamp': String(now),
        'webhook-signature': sign(`whsec_${randomBytes(32).toString('base64')}`, 'msg_1', now, body),
      },
    });
    expect(forged.status).toBe(401);
    const stale = await fetch(url, {
      method: 'POST',
      body,
      headers: {
        'webhook-id': 'msg_2',
        'webhook-timestamp': String(now - 3600),
        'webhook-signature': sign(secret, 'msg_2', now - 3600, body),
      },
    });
    expect(stale.status).toBe(401);
    expect((await fetch(url)).status).toBe(405);
    const good = await fetch(url, {
      method: 'POST',
      body,
      headers: {
        'webhook-id': 'msg_3',
        'webhook-timestamp': String(now),
        'webhook-signature': sign(secret, 'msg_3', now, body),
      },
    });
    expect(good.status).toBe(204);
    const done = await listener.exited;
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/^\S+ webhook\.test webhook_id=w1\n$/);
    expect(done.stderr).toContain('refused a delivery (missing_headers)');
    expect(done.stderr).toContain('refused a delivery (bad_signature)');
    expect(done.stderr).toContain('refused a delivery (timestamp_out_of_range)');
  });

  it('creates a webhook (its secret printed once), sends it a test event, lists and deletes it', async () => {
    const port = await freePort();
    const made = await runCli(
      ['webhooks', 'create', `http://127.0.0.1:${port}/hook`, '--events', 'push.viewed', '--json'],
      { env },
    );
    expect(made.code, made.stderr).toBe(0);
    const hook = JSON.parse(made.stdout) as { id: string; secret: string; events: string[] };
    expect(hook).toMatchObject({ secret: expect.stringMatching(/^whsec_/), events: ['push.viewed'] });
    const secretFile = path.join(home, 'made-secret');
    writeFileSync(secretFile, hook.secret, { mode: 0o600 });
    const listener = startCli(
      ['webhooks', 'listen', '--port', String(port), '--secret-file', secretFile, '--max-events', '1'],
      { env },
    );
    await listener.waitFor(/listening on/);
    const tested = await runCli(['webhooks', 'test', hook.id], { env });
    expect(tested).toMatchObject({ code: 0, stdout: expect.stringMatching(/^queued delivery \S+\n$/) });
    const done = await listener.exited;
    expect(done.stdout).toContain(`webhook.test webhook_id=${hook.id}`);
    const listed = await runCli(['webhooks', 'list'], { env });
    expect(listed.stdout).toMatch(
      new RegExp(`^${hook.id} +http://127\\.0\\.0\\.1:${port}/hook +yes +push\\.viewed$`, 'm'),
    );
    expect(listed.stdout).not.toContain(hook.secret);
    expect(await runCli(['webhooks', 'delete', hook.id], { env })).toMatchObject({
      code: 0,
      stdout: `deleted ${hook.id}\n`,
    });
    expect((await runCli(['webhooks', 'delete', hook.id], { env })).code).toBe(5);
  });
});
