/**
 * The CLI at a terminal: a pseudo-terminal made by util-linux `script` (Debian's bsdutils, always installed; node-pty is
 * a native addon that would have to be built for Node 24), with the terminal's own echo on as in a real one. The test
 * waits for each prompt and types: passphrases (twice when pushing, again after a wrong one), a secret, a token. What
 * was typed never shows on the terminal, and progress bars show for a large upload and download.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealApi, type RealApi } from '@secret-push/server/testing';
import { newHome, runCli, runInPty } from './support/run.js';

let api: RealApi;
let env: Record<string, string>;
let recipient: Record<string, string>;
let home: string;
let token: string;

const linkIn = (text: string) =>
  /(http:\/\/127\.0\.0\.1:\d+\/p\/[a-z2-7]{24}(?:#k=[A-Za-z0-9_-]{43})?)/.exec(text)![1]!;

beforeAll(async () => {
  api = await startRealApi();
  ({ token } = await api.user('terminal@cli.test'));
  ({ home, env } = newHome());
  recipient = { ...env, SECRET_PUSH_URL: api.baseUrl };
  env = { ...env, SECRET_PUSH_URL: api.baseUrl, SECRET_PUSH_TOKEN: token };
});

afterAll(async () => {
  await api?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('secret-push at a terminal (a pseudo-terminal)', () => {
  it('asks twice for the passphrase of a push, and the recipient for it (again after a wrong one); nothing typed is shown', async () => {
    const pushed = await runInPty(['push', 'behind a passphrase', '--passphrase-prompt'], {
      env,
      steps: [
        { waitFor: /Passphrase for the recipient: $/, type: 'open sesame 42' },
        { waitFor: /Again: $/, type: 'open sesame 42' },
      ],
    });
    expect(pushed.code, pushed.transcript).toBe(0);
    expect(pushed.transcript).not.toContain('open sesame');
    const link = linkIn(pushed.transcript);

    const got = await runInPty(['get', link], {
      env: recipient,
      steps: [
        { waitFor: /Passphrase: $/, type: 'not it' },
        { waitFor: /Wrong passphrase, again: $/, type: 'open sesame 42' },
      ],
    });
    expect(got.code, got.transcript).toBe(0);
    expect(got.transcript).toContain('behind a passphrase');
    expect(got.transcript).not.toContain('open sesame');
    expect(got.transcript).not.toContain('not it');
    const audit = await runCli(['audit', link, '--json'], { env });
    expect((JSON.parse(audit.stdout) as { kind: string }[]).map((e) => e.kind)).toEqual([
      'creation',
      'failed_passphrase',
      'failed_passphrase',
      'view',
    ]);
  });

  it('takes a secret typed without echo when nothing is piped in', async () => {
    const pushed = await runInPty(['push'], {
      env,
      steps: [{ waitFor: /Secret \(not shown\): $/, type: 'typed at the terminal' }],
    });
    expect(pushed.code, pushed.transcript).toBe(0);
    expect(pushed.transcript).not.toContain('typed at the terminal');
    const got = await runCli(['get', linkIn(pushed.transcript)], { env: recipient });
    expect(got).toMatchObject({ code: 0, stdout: 'typed at the terminal' });
  });

  it('shows a payload’s control characters as ? on a terminal (a sender’s escape sequences do not reach it)', async () => {
    const hostile = 'line one\n\u001b]0;pwned\u0007\u001b[2Jline two';
    const pushed = await runCli(['push', '--no-e2e', '--json'], { env, input: hostile });
    const { url_token: token } = JSON.parse(pushed.stdout) as { url_token: string };
    const got = await runInPty(['get', token], { env: recipient, steps: [] });
    expect(got.code, got.transcript).toBe(0);
    expect(got.transcript).toContain('line one');
    expect(got.transcript).toContain('?]0;pwned??[2Jline two');
    expect(got.transcript).not.toContain('\u001b');
  });

  it('refuses two different passphrases, and Ctrl-C at a prompt exits 130', async () => {
    const differ = await runInPty(['push', 'x', '--passphrase-prompt'], {
      env,
      steps: [
        { waitFor: /Passphrase for the recipient: $/, type: 'one' },
        { waitFor: /Again: $/, type: 'two' },
      ],
    });
    expect(differ.code).toBe(2);
    expect(differ.transcript).toContain('the two passphrases differ');
    const interrupted = await runInPty(['push'], {
      env,
      steps: [{ waitFor: /Secret \(not shown\): $/, type: 'half\u0003' }],
    });
    expect(interrupted.code).toBe(130);
    expect(interrupted.transcript).not.toContain('half');
  });

  it('draws progress bars for a large file going up and coming down', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-cli-progress-'));
    const bytes = Buffer.alloc(3 * 1024 * 1024, 7);
    writeFileSync(path.join(dir, 'big.bin'), bytes);
    const pushed = await runInPty(['push', '--file', 'big.bin'], { env, steps: [], cwd: dir });
    expect(pushed.code, pushed.transcript).toBe(0);
    expect(pushed.transcript).toMatch(/Uploading +\[#+\] 100% 4\.\d MiB \/ 4\.\d MiB/);
    const got = await runInPty(['get', linkIn(pushed.transcript), '-o', dir], { env: recipient, steps: [], cwd: dir });
    expect(got.code, got.transcript).toBe(0);
    expect(got.transcript).toMatch(/Downloading +\[#+\] 100% 3\.0 MiB \/ 3\.0 MiB/);
    expect(readFileSync(path.join(dir, 'big-1.bin'))).toEqual(bytes);
    rmSync(dir, { recursive: true, force: true });
  });

  it('asks for a profile’s token without echo and writes the config file 0600', async () => {
    const added = await runInPty(['config', 'add', 'work', '--server', api.baseUrl], {
      env: { PATH: env.PATH!, HOME: home, XDG_CONFIG_HOME: env.XDG_CONFIG_HOME! },
      steps: [{ waitFor: /API token for .* \(not shown\): $/, type: token }],
    });
    expect(added.code, added.transcript).toBe(0);
    expect(added.transcript).not.toContain(token);
    const file = path.join(env.XDG_CONFIG_HOME!, 'secret-push', 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({
      default_profile: 'work',
      profiles: { work: { url: api.baseUrl, token } },
    });
    rmSync(path.dirname(file), { recursive: true, force: true });
  });
});
