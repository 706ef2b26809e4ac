/**
 * `secret-push push` and `get` as a user runs them (a child process) against the real server (the real app on a fresh
 * PostgreSQL database, its log lines captured, every answer checked against the contract): stdin, `--json`, the
 * end-to-end default (what the server stored is the client's envelope: its own decryption of the row is not the
 * plaintext, and no log line holds the plaintext or the key), files with their real names and bytes, URLs, and the
 * refusals with their exit codes.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealApi, storedPush, type RealApi } from '@secret-push/server/testing';
import { newHome, runCli } from './support/run.js';

let api: RealApi;
let env: Record<string, string>;
/** A recipient: no token (the owner's own retrieval would not count as a view). */
let recipient: Record<string, string>;
let home: string;
let alice: { token: string };
const secrets: string[] = [];

const linkOf = (stdout: string) => stdout.trim();
const keyOf = (link: string) => link.split('#k=')[1]!;

beforeAll(async () => {
  api = await startRealApi();
  alice = await api.user('alice@cli.test');
  ({ home, env } = newHome());
  recipient = { ...env };
  env = { ...env, SECRET_PUSH_URL: api.baseUrl, SECRET_PUSH_TOKEN: alice.token };
});

afterAll(async () => {
  // No plaintext and no key ever reached a log line of the server.
  const logs = api?.logs.join('\n') ?? '';
  for (const secret of secrets) expect(logs).not.toContain(secret);
  await api?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('secret-push push and get against the real server', () => {
  it('pushes stdin end-to-end encrypted by default; the server stores only the envelope; get decrypts it here', async () => {
    const plaintext = 'hunter2 — the staging DB password 🔑';
    const pushed = await runCli(['push', '--views', '3'], { env, input: `${plaintext}\n` });
    expect(pushed.stderr).toContain('end-to-end encrypted');
    expect(pushed.code).toBe(0);
    const link = linkOf(pushed.stdout);
    expect(link).toMatch(new RegExp(`^${api.baseUrl}/p/[a-z2-7]{24}#k=[A-Za-z0-9_-]{43}$`));
    secrets.push(plaintext, keyOf(link));

    const token = /\/p\/([a-z2-7]{24})#/.exec(link)![1]!;
    const stored = await storedPush(api.db, api.settings, token);
    expect(stored.clientEncryption).toEqual({ scheme: 'aes-256-gcm', version: 1 });
    // The server's own decryption of what it stored is the client's envelope, never the plaintext.
    expect(stored.payload).toMatch(/^spe1\./);
    expect(stored.payload).not.toContain('hunter2');

    const got = await runCli(['get', link], { env: recipient });
    expect(got).toMatchObject({ code: 0, stdout: plaintext });
    expect(got.stderr).toContain('2 views left');
  });

  it('prints one JSON document with --json: the record, the share link and the lifetime asked for', async () => {
    const pushed = await runCli(['push', 'json secret', '--json', '--views', '2', '--expires', '1h', '--name', 'db'], {
      env,
    });
    expect(pushed.code).toBe(0);
    const record = JSON.parse(pushed.stdout) as Record<string, unknown>;
    expect(record).toMatchObject({
      kind: 'text',
      expire_after_views: 2,
      expire_after_seconds: 3600,
      name: 'db',
      end_to_end: true,
      client_encryption: { scheme: 'aes-256-gcm', version: 1 },
      share_link: expect.stringMatching(/#k=/),
    });
    secrets.push(keyOf(record.share_link as string));
    expect(pushed.stderr).toBe(''); // --json: no notes

    const got = await runCli(['get', record.share_link as string, '--json'], { env: recipient });
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ payload: 'json secret', end_to_end: true, views_remaining: 1 });
  });

  it('pushes without end-to-end encryption when asked (--no-e2e): the server can read it, and a bare token retrieves it', async () => {
    const pushed = await runCli(['push', '--no-e2e', '--json'], { env, input: 'plain for the server\n' });
    expect(pushed.code).toBe(0);
    const record = JSON.parse(pushed.stdout) as { url_token: string; share_link: string; end_to_end: boolean };
    expect(record.end_to_end).toBe(false);
    expect(record.share_link).not.toContain('#');
    const stored = await storedPush(api.db, api.settings, record.url_token);
    expect(stored).toMatchObject({ clientEncryption: null, payload: 'plain for the server' });
    const got = await runCli(['get', record.url_token], { env });
    expect(got).toMatchObject({ code: 0, stdout: 'plain for the server' });
  });

  it('pushes files (their names and bytes encrypted here) and get saves them, mode 0600, never overwriting', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-cli-files-'));
    const bytes = Buffer.from([0, 1, 2, 127, 128, 254, 255, 10, 13]);
    writeFileSync(path.join(dir, 'clé privée.pem'), bytes);
    writeFileSync(path.join(dir, 'notes.txt'), 'second file');
    const pushed = await runCli(['push', 'the keys', '--file', 'clé privée.pem', '--file', 'notes.txt', '--json'], {
      env,
      cwd: dir,
    });
    expect(pushed.code).toBe(0);
    const record = JSON.parse(pushed.stdout) as { url_token: string; share_link: string; kind: string };
    expect(record.kind).toBe('file');
    secrets.push(keyOf(record.share_link));
    const stored = await storedPush(api.db, api.settings, record.url_token);
    expect(stored.fileNames).toHaveLength(2);
    for (const name of stored.fileNames) expect(name).toMatch(/^spe1\./);
    for (const content of stored.fileContents) expect(content.includes(bytes)).toBe(false);

    const out = path.join(dir, 'out');
    await runCli(['get', record.share_link, '-o', out], { env }).then((r) => expect(r.code).toBe(2)); // no such folder
    // The usage error above spent no view: the push is retrieved next.
    const { mkdirSync } = await import('node:fs');
    mkdirSync(out);
    writeFileSync(path.join(out, 'notes.txt'), 'already here');
    const got = await runCli(['get', record.share_link, '-o', out], { env });
    expect(got).toMatchObject({ code: 0, stdout: 'the keys' });
    expect(readFileSync(path.join(out, 'clé privée.pem'))).toEqual(bytes);
    expect(statSync(path.join(out, 'clé privée.pem')).mode & 0o777).toBe(0o600);
    expect(readFileSync(path.join(out, 'notes.txt'), 'utf8')).toBe('already here');
    expect(readFileSync(path.join(out, 'notes-1.txt'), 'utf8')).toBe('second file');
    expect(got.stderr).toContain(`saved ${path.join(out, 'notes-1.txt')}`);
    rmSync(dir, { recursive: true, force: true });
  });

  it('takes passphrases from files, and without a terminal to ask on says how to give one (exit 6)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-cli-pass-'));
    writeFileSync(path.join(dir, 'pass.txt'), 'from a file\nignored second line\n', { mode: 0o600 });
    const pushed = await runCli(['push', 'guarded', '--passphrase-file', 'pass.txt'], { env, cwd: dir });
    expect(pushed.code).toBe(0);
    const link = linkOf(pushed.stdout);
    const noTerminal = await runCli(['get', link], { env: recipient });
    expect(noTerminal).toMatchObject({
      code: 6,
      stderr: expect.stringMatching(/needs a passphrase: .* --passphrase-file/),
    });
    writeFileSync(path.join(dir, 'wrong.txt'), 'not it\n');
    expect((await runCli(['get', link, '--passphrase-file', 'wrong.txt'], { env: recipient, cwd: dir })).code).toBe(6);
    const got = await runCli(['get', link, '--passphrase-file', '-'], { env: recipient, input: 'from a file\n' });
    expect(got).toMatchObject({ code: 0, stdout: 'guarded' });
    rmSync(dir, { recursive: true, force: true });
  });

  it('saves files under safe names whatever their sender called them', async () => {
    // A sender's own client, as JSON (a multipart parser would already rewrite some of these names).
    const file = (filename: string, text: string) => ({ filename, content: Buffer.from(text).toString('base64') });
    const response = await fetch(`${api.baseUrl}/api/v2/pushes`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${alice.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        push: { files: [file('.envrc', 'export EVIL=1'), file('..', 'dots'), file('a<b>:c|d?.txt', 'x')] },
      }),
    });
    expect(response.status).toBe(201);
    const made = (await response.json()) as { url_token: string };
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-cli-names-'));
    const got = await runCli(['get', `${api.baseUrl}/p/${made.url_token}`, '--json'], { env: recipient, cwd: dir });
    expect(got.code, got.stderr).toBe(0);
    const saved = (JSON.parse(got.stdout) as { files: { filename: string; saved_to: string }[] }).files;
    expect(saved.map((f) => [f.filename, path.relative(dir, f.saved_to)])).toEqual([
      ['.envrc', '_envrc'],
      ['..', 'file'],
      ['a<b>:c|d?.txt', 'a_b__c_d_.txt'],
    ]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('pushes a URL, and get prints it', async () => {
    const pushed = await runCli(['push', '--url', 'https://example.org/reset?t=abc'], { env });
    expect(pushed.code).toBe(0);
    const got = await runCli(['get', linkOf(pushed.stdout)], { env });
    expect(got).toMatchObject({ code: 0, stdout: 'https://example.org/reset?t=abc' });
  });

  it('refuses a link without its key before spending a view, and a wrong key after it (exit 10)', async () => {
    const pushed = await runCli(['push', 'one view only', '--views', '1'], { env });
    const link = linkOf(pushed.stdout);
    const [page, key] = link.split('#k=') as [string, string];
    secrets.push(key);
    const missing = await runCli(['get', page], { env: recipient });
    expect(missing.code).toBe(10);
    expect(missing.stderr).toMatch(/end-to-end encrypted and the link has no key/);
    expect(missing.stderr).not.toContain(key);
    const wrong = await runCli(['get', `${page}#k=${key[0] === 'A' ? 'B' : 'A'}${key.slice(1)}`], { env: recipient });
    expect(wrong.code).toBe(10);
    // That try spent the view, as any retrieval does.
    const after = await runCli(['get', link], { env: recipient });
    expect(after.code).toBe(5);
    expect(after.stderr).toContain('expired or was deleted');
  });

  it('answers wrong input with a clear message and its exit code', async () => {
    const cases: { args: string[]; input?: string; code: number; message: RegExp }[] = [
      { args: ['push', 'x', '--views', '500'], code: 2, message: /--views must be a whole number from 1 to 100/ },
      { args: ['push', 'x', '--expires', '7m'], code: 2, message: /--expires takes/ },
      { args: ['push', '--url', 'not a url'], code: 7, message: /payload/ },
      { args: ['push'], input: '', code: 2, message: /stdin was empty/ },
      { args: ['push', 'x', '--token', 'spt_leaked'], code: 2, message: /token on the command line/ },
      { args: ['push', 'x', '--passphrase=leaked'], code: 2, message: /passphrase on the command line/ },
      { args: ['push', 'x', '--notify', 'a@example.org'], code: 2, message: /--no-e2e/ },
      { args: ['get', 'zzzzzzzzzzzzzzzzzzzzzzzz'], code: 5, message: /404/ },
      { args: ['get', 'not a link!'], code: 2, message: /not a push link/ },
      { args: ['pusj'], code: 2, message: /unknown command "pusj"/ },
      { args: ['push', 'x', '--vews', '3'], code: 2, message: /Unknown option '--vews'/ },
    ];
    for (const c of cases) {
      const result = await runCli(c.args, { env, input: c.input });
      expect(result.stderr, c.args.join(' ')).toMatch(c.message);
      expect(result.code, c.args.join(' ')).toBe(c.code);
      expect(result.stderr).not.toContain('leaked');
      expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
    }
  });

  it('exits 3 without a server, 4 when the token is refused, 9 when the server cannot be reached', async () => {
    const bare = { PATH: env.PATH!, HOME: home };
    expect(await runCli(['list', 'active'], { env: bare })).toMatchObject({
      code: 3,
      stderr: expect.stringMatching(/no server: set SECRET_PUSH_URL/),
    });
    const refused = await runCli(['list', 'active'], { env: { ...env, SECRET_PUSH_TOKEN: 'spt_not_a_real_token' } });
    expect(refused.code).toBe(4);
    const anonymous = await runCli(['list', 'active'], { env: { ...bare, SECRET_PUSH_URL: api.baseUrl } });
    expect(anonymous).toMatchObject({ code: 4, stderr: expect.stringMatching(/needs a token/) });
    const down = await runCli(['info'], { env: { ...bare, SECRET_PUSH_URL: 'http://127.0.0.1:9' } });
    expect(down.code).toBe(9);
  });
});
