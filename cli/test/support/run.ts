/**
 * The CLI as a user runs it: a child process on this Node (24) with the workspace sources (the `@secret-push/source`
 * condition, tsx), its own HOME and config file, stdin given or closed; or inside a pseudo-terminal made by util-linux
 * `script` (no native addon: node-pty would have to be built for Node 24), where a test types at its prompts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../src/bin.ts', import.meta.url));
/** tsx's loader by its absolute address: the CLI runs in folders (a temporary home) where `tsx` does not resolve. */
const TSX = import.meta.resolve('tsx');
const NODE_ARGS = ['--conditions=@secret-push/source', '--import', TSX, BIN];

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A fresh home for one user of the CLI: HOME, and the config file inside it. */
export function newHome(): { home: string; env: Record<string, string> } {
  const home = mkdtempSync(path.join(os.tmpdir(), 'sp-cli-home-'));
  return {
    home,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, '.config'),
      NO_COLOR: '1',
    },
  };
}

/** Runs `secret-push ...args`; `input` is written to its stdin, which is then closed. */
export function runCli(
  args: string[],
  opts: { env: Record<string, string>; input?: string | Buffer; cwd?: string; timeoutMs?: number },
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...NODE_ARGS, ...args], {
      env: opts.env,
      cwd: opts.cwd ?? opts.env.HOME,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** A running CLI whose output is watched (for `webhooks listen`). */
export function startCli(args: string[], opts: { env: Record<string, string> }) {
  const child = spawn(process.execPath, [...NODE_ARGS, ...args], {
    env: opts.env,
    cwd: opts.env.HOME,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<Run>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return {
    child,
    exited,
    output: () => ({ stdout, stderr }),
    async waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(stdout + stderr);
        if (match) return match;
        if (child.exitCode !== null || Date.now() > deadline)
          throw new Error(`never printed ${pattern}: ${JSON.stringify({ stdout, stderr })}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

const shellQuote = (arg: string) => `'${arg.replace(/'/g, `'\\''`)}'`;

export interface PtyStep {
  /** Wait until the terminal shows this (the prompt), then type `type` and Enter. */
  waitFor: RegExp;
  type: string;
}

/**
 * Runs `secret-push ...args` on a pseudo-terminal (`script -q -e -c …`): stdin, stdout and stderr are the terminal,
 * with the line discipline's echo on, as in a real one. Each step waits for its prompt before typing (typed too early,
 * the terminal itself would echo it). Resolves with the exit code and everything the terminal showed.
 */
export function runInPty(
  args: string[],
  opts: { env: Record<string, string>; steps: PtyStep[]; cwd?: string; timeoutMs?: number },
): Promise<{ code: number | null; transcript: string }> {
  const command = [process.execPath, ...NODE_ARGS, ...args].map(shellQuote).join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], {
      env: { ...opts.env, SHELL: '/bin/sh', TERM: 'dumb' },
      cwd: opts.cwd ?? opts.env.HOME,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let transcript = '';
    let seen = 0;
    const steps = [...opts.steps];
    const onOutput = (chunk: Buffer) => {
      transcript += chunk.toString('utf8');
      const step = steps[0];
      if (step && step.waitFor.test(transcript.slice(seen))) {
        steps.shift();
        seen = transcript.length;
        child.stdin.write(`${step.type}\r`);
      }
    };
    child.stdout.on('data', onOutput);
    child.stderr.on('data', onOutput);
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      child.stdin.destroy();
      resolve({ code, transcript });
    });
  });
}
