/**
 * Where the CLI finds its instance and token, against two real servers: environment variables, `--server`, profiles of
 * the config file (made with `config add --token-stdin`, written 0600; refused when others may read a token), and the
 * binding of a token to the address it was configured for (`--server` elsewhere gets no token, with a warning).
 */
import { chmodSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealApi, type RealApi } from '@secret-push/server/testing';
import { newHome, runCli } from './support/run.js';

let one: RealApi;
let two: RealApi;
let tokenOne: string;
let tokenTwo: string;
let env: Record<string, string>;
let home: string;
let configFile: string;

beforeAll(async () => {
  [one, two] = await Promise.all([startRealApi(), startRealApi()]);
  ({ token: tokenOne } = await one.user('one@cli.test'));
  ({ token: tokenTwo } = await two.user('two@cli.test'));
  ({ home, env } = newHome());
  configFile = path.join(env.XDG_CONFIG_HOME!, 'secret-push', 'config.json');
});

afterAll(async () => {
  await one?.stop();
  await two?.stop();
  if (home) rmSync(home, { recursive: true, force: true });
});

const whoAmI = async (args: string[], runEnv = env) => {
  const result = await runCli(['info', '--json', ...args], { env: runEnv });
  return { ...result, report: result.code === 0 ? (JSON.parse(result.stdout) as { server: string }) : undefined };
};

describe('configuration: environment, --server and profiles', () => {
  it('keeps profiles of several instances in a 0600 file, each token given on stdin, never echoed or listed', async () => {
    const added = await runCli(['config', 'add', 'one', '--server', `${one.baseUrl}/api/v2/`, '--token-stdin'], {
      env,
      input: `${tokenOne}\n`,
    });
    expect(added).toMatchObject({ code: 0, stdout: `saved profile one in ${configFile}\n` });
    expect(
      await runCli(['config', 'add', 'two', '--server', two.baseUrl, '--token-stdin'], { env, input: tokenTwo }),
    ).toMatchObject({ code: 0 });
    expect(statSync(configFile).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(configFile)).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(configFile, 'utf8'))).toEqual({
      default_profile: 'one',
      profiles: { one: { url: one.baseUrl, token: tokenOne }, two: { url: two.baseUrl, token: tokenTwo } },
    });
    const listed = await runCli(['config', 'list'], { env });
    expect(listed.stdout).toMatch(new RegExp(`^\\* +one +${one.baseUrl} +yes$`, 'm'));
    expect(listed.stdout).not.toContain(tokenOne);
    expect((await runCli(['config', 'path'], { env })).stdout).toBe(`${configFile}\n`);
  });

  it('uses the default profile, --profile, SECRET_PUSH_PROFILE and config use; the environment over the file', async () => {
    // Each profile's token is accepted by its own instance only: a list of pushes proves which token went where.
    expect((await runCli(['list', 'active'], { env })).code).toBe(0);
    expect((await whoAmI([])).report?.server).toBe(one.baseUrl);
    expect((await whoAmI(['--profile', 'two'])).report?.server).toBe(two.baseUrl);
    expect((await runCli(['list', 'active', '--profile', 'two'], { env })).code).toBe(0);
    expect((await whoAmI([], { ...env, SECRET_PUSH_PROFILE: 'two' })).report?.server).toBe(two.baseUrl);
    expect((await runCli(['config', 'use', 'two'], { env })).code).toBe(0);
    expect((await whoAmI([])).report?.server).toBe(two.baseUrl);
    expect((await runCli(['config', 'use', 'one'], { env })).code).toBe(0);
    const fromEnv = { ...env, SECRET_PUSH_URL: two.baseUrl, SECRET_PUSH_TOKEN: tokenTwo };
    expect((await runCli(['list', 'active'], { env: fromEnv })).code).toBe(0);
    const missing = await runCli(['info', '--profile', 'three'], { env });
    expect(missing).toMatchObject({ code: 3, stderr: expect.stringMatching(/no profile named "three"/) });
  });

  it('never sends a token to another address than its own: --server elsewhere runs anonymously, with a warning', async () => {
    const elsewhere = await runCli(['list', 'active', '--server', two.baseUrl], { env });
    expect(elsewhere.stderr).toContain(
      `warning: not sending the token of profile one (configured for ${one.baseUrl}) to ${two.baseUrl}`,
    );
    expect(elsewhere.code).toBe(4); // anonymous: the list needs a token
    const envBound = { ...newHome().env, SECRET_PUSH_URL: one.baseUrl, SECRET_PUSH_TOKEN: tokenOne };
    const other = await runCli(['list', 'active', '--server', two.baseUrl], { env: envBound });
    expect(other.stderr).toContain(`not sending SECRET_PUSH_TOKEN (configured for ${one.baseUrl}) to ${two.baseUrl}`);
    expect(other.code).toBe(4);
    // A push link names its instance: get goes there, without the other instance's token.
    const made = await runCli(['push', 'on two', '--profile', 'two'], { env });
    const got = await runCli(['get', made.stdout.trim()], { env: { ...env, SECRET_PUSH_PROFILE: 'one' } });
    expect(got).toMatchObject({ code: 0, stdout: 'on two' });
    expect(got.stderr).toContain(`not sending the token of profile one`);
    expect((await runCli(['info', '--anonymous', '--json'], { env })).stdout).toContain(one.baseUrl);
  });

  it('refuses a config file that others may read while it holds a token, and a malformed one, without quoting it', async () => {
    chmodSync(configFile, 0o644);
    const exposed = await runCli(['list', 'active'], { env });
    expect(exposed).toMatchObject({ code: 3, stderr: expect.stringContaining(`run chmod 600 ${configFile}`) });
    chmodSync(configFile, 0o600);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(configFile, `{"profiles": {"one": {"url": "${one.baseUrl}", "token": "${tokenOne}"}`, {
      mode: 0o600,
    });
    const malformed = await runCli(['list', 'active'], { env });
    expect(malformed).toMatchObject({ code: 3, stderr: expect.stringMatching(/is not valid JSON/) });
    expect(malformed.stderr).not.toContain(tokenOne);
    expect((await runCli(['config', 'add', 'x', '--server', 'ftp://example.org', '--no-token'], { env })).code).toBe(3);
    writeFileSync(
      configFile,
      JSON.stringify({ default_profile: 'one', profiles: { one: { url: one.baseUrl, token: tokenOne } } }),
      { mode: 0o600 },
    );
    expect(await runCli(['config', 'remove', 'one'], { env })).toMatchObject({
      code: 0,
      stdout: 'removed profile one\n',
    });
    expect(JSON.parse(readFileSync(configFile, 'utf8'))).toEqual({ profiles: {} });
    expect((await runCli(['config', 'remove', 'one'], { env })).code).toBe(3);
  });
});
