/**
 * What needs no server: `--version`, help (overview, a command, a group, exit codes), and the shell completions, the
 * bash one loaded into a real bash and asked to complete words as a user's Tab would.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newHome, runCli } from './support/run.js';

let env: Record<string, string>;
let home: string;
let bashScript: string;

beforeAll(async () => {
  ({ home, env } = newHome());
  const completion = await runCli(['completion', 'bash'], { env });
  expect(completion.code).toBe(0);
  bashScript = completion.stdout;
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

/** What bash completes for the words typed so far (the last one being completed). */
function complete(...words: string[]): string[] {
  const script = `${bashScript}
COMP_WORDS=(secret-push ${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length}
_secret_push; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const run = spawnSync('bash', ['--norc', '--noprofile', '-c', script], { encoding: 'utf8', cwd: home });
  expect(run.stderr).toBe('');
  return run.stdout.split('\n').filter(Boolean);
}

describe('help, version and completions', () => {
  it('prints its version, the overview, a command’s help and the exit codes', async () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    expect(await runCli(['--version'], { env })).toMatchObject({ code: 0, stdout: `${manifest.version}\n` });
    const overview = await runCli(['--help'], { env });
    expect(overview.code).toBe(0);
    expect(overview.stdout).toMatch(/^ {2}request collect TOKEN\|LINK +Open the answer of your request/m);
    expect(overview.stdout).toContain('SECRET_PUSH_URL');
    const push = await runCli(['push', '--help'], { env });
    expect(push.stdout).toMatch(/^Usage: secret-push push \[TEXT\] \[options\]/);
    expect(push.stdout).toMatch(/--passphrase-file FILE +the passphrase from the first line of FILE/);
    expect(push.stdout).not.toMatch(/--token\b/); // refused, not offered
    expect((await runCli(['help', 'request', 'create'], { env })).stdout).toMatch(/^Usage: secret-push request create/);
    expect((await runCli(['help', 'exit-codes'], { env })).stdout).toMatch(/^ {2}10 +end-to-end encryption/m);
    const group = await runCli(['request'], { env });
    expect(group.code).toBe(2);
    expect(group.stderr).toMatch(/^Usage: secret-push request <command>/);
    expect(await runCli([], { env })).toMatchObject({ code: 2, stdout: expect.stringContaining('Commands:') });
  });

  it('completes commands, sub-commands, options and their values in bash', () => {
    expect(complete('re')).toEqual(['request']);
    expect(complete('request', 'c')).toEqual(['create', 'collect']);
    expect(complete('list', '')).toEqual(['active', 'expired']);
    expect(complete('push', '--exp')).toEqual(['--expires']);
    expect(complete('push', '--expires', '1')).toEqual(['15m', '1h', '12h', '1d', '1w']);
    expect(complete('--profile', 'work', 'keys', 'create', 'ci', '--scope', 'pushes:c')).toEqual(['pushes:create']);
    expect(complete('completion', '')).toEqual(['bash', 'zsh', 'fish']);
    expect(complete('get', '--')).toContain('--passphrase-file');
    expect(complete('get', '--')).not.toContain('--token');
  });

  it('writes zsh and fish scripts from the same table', async () => {
    const zsh = await runCli(['completion', 'zsh'], { env });
    expect(zsh.stdout).toMatch(/^#compdef secret-push\n/);
    expect(zsh.stdout).toContain(bashScript);
    const fish = await runCli(['completion', 'fish'], { env });
    expect(fish.stdout).toContain(
      "complete -c secret-push -n '__fish_seen_subcommand_from request; and __fish_seen_subcommand_from collect' -l wait",
    );
    expect(spawnSync('bash', ['-n'], { input: bashScript }).status).toBe(0);
    expect((await runCli(['completion', 'tcsh'], { env })).code).toBe(2);
  });
});
