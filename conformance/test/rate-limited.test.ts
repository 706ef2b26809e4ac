/**
 * A target whose per-client rate limit is on: the suite stops at the first 429 that is not the passphrase attempt
 * limit it tests, fails one requirement with the reason and how to turn the limit off, and runs nothing more (every
 * later requirement would fail for that reason alone). The CLI says so on stderr and exits non-zero.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli.js';
import { runSuite } from '../src/runner.js';
import { EMAIL_A, EMAIL_B, startOurServer, type Instance } from './support/our-server.js';

describe('conformance against a rate-limited target', () => {
  let instance: Instance;

  beforeAll(async () => {
    instance = await startOurServer({ rateLimitPerMinute: 25 });
  });
  afterAll(async () => {
    await instance?.close();
  });

  it('stops at the first rate-limit 429 and says the limit is on and how to turn it off', async () => {
    const run = await runSuite({
      baseUrl: instance.baseUrl,
      token: instance.tokenA,
      tokenB: instance.tokenB,
      email: EMAIL_A,
      emailB: EMAIL_B,
      profile: 'full',
    });
    expect(run.rateLimited).toMatch(
      /answered 429 \(rate limited, Retry-After \d+\): the target's per-client rate limit is on/,
    );
    expect(run.rateLimited).toContain('PWPUSH_RATE_LIMIT_PER_MINUTE=0');
    const failed = run.results.filter((r) => r.status === 'fail');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.reason).toBe(run.rateLimited);
    // Only what ran before the limit passed; everything after was not run (about 150 of the 175 requirements).
    expect(run.results.filter((r) => r.status === 'pass').length).toBeGreaterThan(0);
    const notRun = run.results.filter((r) => r.reason === 'the run stopped: the target rate-limited it');
    expect(notRun.length).toBeGreaterThan(100);
  });

  it('prints the reason from the CLI and exits 1', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const log = console.log;
    const error = console.error;
    console.log = (text: string) => void out.push(text);
    console.error = (text: string) => void err.push(text);
    let code: number;
    try {
      // The window of the first test is still full: the version probe itself meets the limit.
      code = await main(['--base-url', instance.baseUrl, '--token', instance.tokenA]);
    } finally {
      console.log = log;
      console.error = error;
    }
    expect(code).toBe(1);
    expect(out.join('\n')).toContain('STOPPED: GET /api/v2/version answered 429');
    expect(err.join('\n')).toMatch(/The run stopped early\. .*PWPUSH_RATE_LIMIT_PER_MINUTE=0/s);
  });
});
