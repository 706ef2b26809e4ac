/**
 * The owner's commands against the real server: `preview`, `expire`, `audit`, `list active|expired`, `keys`
 * (an API key made, used through SECRET_PUSH_TOKEN, held to its scopes, revoked) and `info`, each in text and
 * with `--json`.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealApi, type RealApi } from '@secret-push/server/testing';
import { newHome, runCli } from './support/run.js';

let api: RealApi;
let env: Record<string, string>;
let home: string;

beforeAll(async () => {
  api = await startRealApi();
  const owner = await api.user('owner@cli.test');
  ({ home, env } = newHome());
  env = { ...env, SECRET_PUSH_URL: api.baseUrl, SECRET_PUSH_TOKEN: owner.token };
});

afterAll(async () => {
  await api?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

const json = async (args: string[], runEnv = env) => {
  const result = await runCli([...args, '--json'], { env: runEnv });
  expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
  return JSON.parse(result.stdout) as unknown;
};

describe("the owner's commands against the real server", () => {
  it('previews (no view), lists, audits and expires a push', async () => {
    const made = (await json(['push', 'to be expired', '--name', 'release key'])) as {
      url_token: string;
      share_link: string;
      html_url: string;
    };
    const preview = await runCli(['preview', made.share_link], { env });
    expect(preview).toMatchObject({ code: 0, stdout: `${made.html_url}\n` });

    const active = (await json(['list', 'active'])) as { url_token: string; name: string }[];
    expect(active.find((p) => p.url_token === made.url_token)).toMatchObject({ name: 'release key' });
    const table = await runCli(['list', 'active'], { env });
    expect(table.stdout).toMatch(
      new RegExp(
        `^TOKEN +KIND +VIEWS LEFT +EXPIRES +E2E +NAME\\n${made.url_token} +text +5 +\\S+ +yes +release key$`,
        'm',
      ),
    );

    const expired = await runCli(['expire', made.url_token], { env });
    expect(expired).toMatchObject({ code: 0, stdout: `expired ${made.url_token}\n` });
    const gone = (await json(['list', 'expired'])) as { url_token: string; expired: boolean; deleted: boolean }[];
    expect(gone.find((p) => p.url_token === made.url_token)).toMatchObject({ expired: true, deleted: true });
    const audit = (await json(['audit', made.url_token])) as { kind: string }[];
    expect(audit.map((e) => e.kind)).toEqual(['creation', 'expire']);
    expect((await runCli(['audit', made.url_token], { env })).stdout).toMatch(
      /^WHEN +WHAT +IP +USER AGENT\n.* creation /,
    );
  });

  it('pages a list with --page and caps it with --limit', async () => {
    for (let i = 0; i < 3; i++) await json(['push', `paged ${i}`, '--no-e2e']);
    expect(((await json(['list', 'active', '--limit', '2'])) as unknown[]).length).toBe(2);
    expect(((await json(['list', 'active', '--page', '1'])) as unknown[]).length).toBeGreaterThanOrEqual(3);
    expect(await json(['list', 'active', '--page', '2'])).toEqual([]);
    const wrong = await runCli(['list', 'pending'], { env });
    expect(wrong).toMatchObject({ code: 2, stderr: expect.stringMatching(/active or expired/) });
  });

  it('makes an API key, whose token works within its scopes only, and revokes it', async () => {
    const key = (await json(['keys', 'create', 'ci pushes', '--scope', 'pushes:create', '--days', '30'])) as {
      id: string;
      token: string;
      scopes: string[];
      expires_at: string;
    };
    expect(key).toMatchObject({ token: expect.stringMatching(/^spk_/), scopes: ['pushes:create'] });
    const listed = await runCli(['keys', 'list'], { env });
    expect(listed.stdout).toContain(key.id);
    expect(listed.stdout).not.toContain(key.token);

    const withKey = { ...env, SECRET_PUSH_TOKEN: key.token };
    expect((await runCli(['push', 'from ci'], { env: withKey })).code).toBe(0);
    const refused = await runCli(['list', 'active'], { env: withKey });
    expect(refused).toMatchObject({ code: 4, stderr: expect.stringMatching(/insufficient_scope/) });

    expect(await runCli(['keys', 'revoke', key.id], { env })).toMatchObject({ code: 0, stdout: `revoked ${key.id}\n` });
    expect((await runCli(['push', 'after revocation'], { env: withKey })).code).toBe(4);
    const bad = await runCli(['keys', 'create', 'x', '--scope', 'pushes:everything'], { env });
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringMatching(/unknown scope/) });
  });

  it('reports what the instance offers', async () => {
    const text = await runCli(['info'], { env });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`server:      ${api.baseUrl}`);
    expect(text.stdout).toMatch(/end-to-end: +allowed/);
    expect(text.stdout).toMatch(/token: +sent/);
    const report = (await json(['info'])) as { server: string; api_version: string };
    expect(report).toMatchObject({ server: api.baseUrl, api_version: '2.1' });
  });
});
