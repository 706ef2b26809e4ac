/**
 * `secret-push request …` against the real server: a sealed request (its private key kept in the requester's config
 * folder, 0600), answered by someone else with stdin (sealed by the SDK: the server stores only envelopes), collected
 * and opened with that key (which is then forgotten); an unsealed one with --wait; the refusals.
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealApi, storedPush, type RealApi } from '@secret-push/server/testing';
import { newHome, runCli, startCli } from './support/run.js';

let api: RealApi;
let requester: Record<string, string>;
let responder: Record<string, string>;
const homes: string[] = [];

beforeAll(async () => {
  api = await startRealApi();
  const owner = await api.user('requester@cli.test');
  const a = newHome();
  const b = newHome();
  homes.push(a.home, b.home);
  requester = { ...a.env, SECRET_PUSH_URL: api.baseUrl, SECRET_PUSH_TOKEN: owner.token };
  responder = b.env; // no server, no token: the request's link says where it lives
});

afterAll(async () => {
  const logs = api?.logs.join('\n') ?? '';
  expect(logs).not.toContain('the vendor password');
  await api?.stop();
  for (const home of homes) rmSync(home, { recursive: true, force: true });
});

describe('secret-push request against the real server', () => {
  it('asks for a sealed answer, which the responder sends from stdin and only the requester’s kept key opens', async () => {
    const made = await runCli(['request', 'create', 'The vendor API password, please', '--views', '2', '--json'], {
      env: requester,
    });
    expect(made.code, made.stderr).toBe(0);
    const request = JSON.parse(made.stdout) as {
      url_token: string;
      html_url: string;
      sealed: boolean;
      key_file: string;
    };
    expect(request).toMatchObject({ sealed: true, html_url: `${api.baseUrl}/r/${request.url_token}` });
    expect(request.key_file).toBe(
      path.join(requester.XDG_CONFIG_HOME!, 'secret-push', 'request-keys', `${request.url_token}.json`),
    );
    expect(statSync(request.key_file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(request.key_file, 'utf8'))).toMatchObject({
      url_token: request.url_token,
      private_key: { kty: 'OKP', crv: 'X25519', d: expect.any(String) },
    });

    const early = await runCli(['request', 'collect', request.url_token], { env: requester });
    expect(early).toMatchObject({ code: 5, stderr: expect.stringMatching(/not answered yet/) });

    const answered = await runCli(['request', 'answer', request.html_url], {
      env: responder,
      input: 'the vendor password\n',
    });
    expect(answered).toMatchObject({ code: 0, stdout: `answered ${request.url_token}\n` });
    expect(answered.stderr).toContain('asks: The vendor API password, please');
    expect(answered.stderr).toContain("sealed: your answer is encrypted here for the requester's key only");
    const again = await runCli(['request', 'answer', request.html_url, 'second try'], { env: responder });
    expect(again).toMatchObject({
      code: 5,
      stderr: expect.stringMatching(/this request is fulfilled: it takes no answer/),
    });

    const shown = await runCli(['request', 'show', request.url_token, '--json'], { env: requester });
    const record = JSON.parse(shown.stdout) as { state: string; answer: { url_token: string; sealed_key: string } };
    expect(record.state).toBe('fulfilled');
    expect(record.answer.sealed_key).toMatch(/^sph1\./);
    // The answer push holds envelopes only: the server's own decryption is not the secret.
    const stored = await storedPush(api.db, api.settings, record.answer.url_token);
    expect(stored.clientEncryption).toEqual({ scheme: 'aes-256-gcm', version: 1 });
    expect(stored.payload).not.toContain('vendor');

    const collected = await runCli(['request', 'collect', request.url_token], { env: requester });
    expect(collected).toMatchObject({ code: 0, stdout: 'the vendor password' });
    expect(existsSync(request.key_file)).toBe(false); // opened: the key is forgotten
    const after = await runCli(['request', 'show', request.url_token], { env: requester });
    expect(after.stdout).toMatch(/^state: +collected$/m);
    const audit = await runCli(['request', 'audit', request.url_token, '--json'], { env: requester });
    expect((JSON.parse(audit.stdout) as { kind: string }[]).map((e) => e.kind)).toEqual([
      'creation',
      'fulfilled',
      'collected',
    ]);
  });

  it('waits for the answer of an unsealed request with --wait, and lists and revokes requests', async () => {
    const made = await runCli(['request', 'create', 'the wifi code', '--no-seal', '--json'], { env: requester });
    const request = JSON.parse(made.stdout) as { url_token: string; html_url: string; sealed: boolean };
    expect(request.sealed).toBe(false);
    const waiting = startCli(['request', 'collect', request.url_token, '--wait', '--timeout', '60'], {
      env: requester,
    });
    await new Promise((r) => setTimeout(r, 1500));
    expect(
      (await runCli(['request', 'answer', request.url_token, 'wifi-1234', '--server', api.baseUrl], { env: responder }))
        .code,
    ).toBe(0);
    const collected = await waiting.exited;
    expect(collected).toMatchObject({ code: 0, stdout: 'wifi-1234' });

    const pending = JSON.parse(
      (await runCli(['request', 'create', 'never answered', '--json'], { env: requester })).stdout,
    ) as { url_token: string; key_file: string };
    const active = await runCli(['request', 'list', 'active'], { env: requester });
    expect(active.stdout).toMatch(new RegExp(`^${pending.url_token} +pending +yes +\\S+ +never answered$`, 'm'));
    expect(await runCli(['request', 'revoke', pending.url_token], { env: requester })).toMatchObject({ code: 0 });
    expect(existsSync(pending.key_file)).toBe(false);
    const closed = await runCli(['request', 'answer', pending.url_token, 'too late', '--server', api.baseUrl], {
      env: responder,
    });
    expect(closed).toMatchObject({
      code: 5,
      stderr: expect.stringMatching(/this request is revoked: it takes no answer/),
    });
    const expired = JSON.parse((await runCli(['request', 'list', 'expired', '--json'], { env: requester })).stdout) as {
      url_token: string;
      state: string;
    }[];
    expect(expired.map((r) => [r.url_token, r.state])).toEqual(
      expect.arrayContaining([
        [pending.url_token, 'revoked'],
        [request.url_token, 'collected'],
      ]),
    );
  });

  it('refuses a sealed answer whose key is not on this machine (exit 10)', async () => {
    const made = JSON.parse(
      (await runCli(['request', 'create', 'sealed elsewhere', '--json'], { env: requester })).stdout,
    ) as { url_token: string; html_url: string; key_file: string };
    await runCli(['request', 'answer', made.html_url, 'only for the other machine'], { env: responder });
    rmSync(made.key_file);
    const collected = await runCli(['request', 'collect', made.url_token], { env: requester });
    expect(collected).toMatchObject({ code: 10, stderr: expect.stringMatching(/its key is not in/) });
    expect(collected.stdout).toBe('');
  });
});
