/**
 * Target 1: our own server (createApp over createCore on a fresh database). Every requirement must pass, or be an
 * honest skip / not-run; nothing may fail. Two instances: the defaults (anonymous on, every kind enabled) and a
 * locked-down one (anonymous off, url and qr disabled) so the gated requirements run too; then the E2E class alone
 * on instances where client encryption is required and off.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EMAIL_A,
  EMAIL_B,
  startOurServer,
  startRelayedServer,
  type Instance,
  type RelayedInstance,
} from './support/our-server.js';
import { runSuite, type RunOutput } from '../src/runner.js';
import { formatTable } from '../src/report.js';

function failures(run: RunOutput): string[] {
  return run.results.filter((r) => r.status === 'fail').map((r) => `${r.id}: ${r.reason}`);
}

describe.each([
  // The defaults' body limit is about 141 MiB: too much to send in CI, so CRE-021 is not-run here (no --max-body-bytes).
  { name: 'default settings', overrides: {}, giveMaxBody: false, notRun: ['CRE-021'] },
  {
    // Small file limits make the body limit small (about 8 MiB), so the 413 requirement runs here; durations from
    // 1 hour only, so the instance refuses some values (DUR-006).
    name: 'anonymous off, url and qr disabled, 2 files of 64 KiB, durations from 1 hour',
    overrides: {
      allowAnonymous: false,
      enableUrlPushes: false,
      enableQrPushes: false,
      fileMaxCount: 2,
      fileMaxBytes: 64 * 1024,
      expireAfterDurationMin: 3,
    },
    giveMaxBody: true,
    notRun: [],
  },
])('conformance against our server ($name)', ({ overrides, giveMaxBody, notRun: expectedNotRun }) => {
  let instance: Instance;
  let run: RunOutput;

  beforeAll(async () => {
    instance = await startOurServer(overrides);
    run = await runSuite({
      baseUrl: instance.baseUrl,
      baseUrl2: instance.baseUrl2,
      token: instance.tokenA,
      tokenB: instance.tokenB,
      email: EMAIL_A,
      emailB: EMAIL_B,
      profile: 'full',
      ...(giveMaxBody ? { maxBodyBytes: instance.maxBodyBytes } : {}),
    });
    if (process.env.CONFORMANCE_PRINT) console.log(formatTable(run, 140));
  }, 170_000);

  afterAll(async () => {
    await instance?.close();
  });

  it('fails no requirement', () => {
    expect(failures(run)).toEqual([]);
  });

  it('runs the durations and the legacy v1 classes: the instance reports durations and serves v1', () => {
    const skipped = run.results
      .filter((r) => (r.area === 'DUR' || r.area === 'V1') && r.status === 'skip')
      .map((r) => r.id);
    // DUR-006 needs an instance that refuses some values; V1-014 URL pushes, V1-012's anonymous half aside.
    const expected = [
      ...(overrides.expireAfterDurationMin === undefined ? ['DUR-006'] : []),
      ...(overrides.enableUrlPushes === false ? ['V1-014'] : []),
    ];
    expect(skipped).toEqual(expected);
  });

  it('runs every requirement it has the input for (not-run only for what the instance cannot offer)', () => {
    const notRun = run.results.filter((r) => r.status === 'not-run');
    expect(notRun.map((r) => r.id)).toEqual(expectedNotRun);
    for (const r of notRun) expect(r.reason).toMatch(/needs --max-body-bytes/);
    expect(run.results.filter((r) => r.status === 'pass').length).toBeGreaterThan(50);
  });
});

// The operator's other choices for end-to-end encrypted pushes: `required` refuses every ordinary push (so only the
// E2E class is run there: the other classes make ordinary pushes on purpose) and `off` refuses encrypted ones.
describe.each([
  {
    name: 'required',
    clientEncryption: { enabled: true, default: true, required: true },
    decisive: 'E2E-013',
    passing: 12,
  },
  {
    name: 'off',
    clientEncryption: { enabled: false, default: false, required: false },
    decisive: 'E2E-010',
    passing: 2,
  },
])('the E2E class against our server (client encryption $name)', ({ clientEncryption, decisive, passing }) => {
  let instance: Instance;
  let run: RunOutput;

  beforeAll(async () => {
    instance = await startOurServer({ clientEncryption });
    run = await runSuite({
      baseUrl: instance.baseUrl,
      token: instance.tokenA,
      tokenB: instance.tokenB,
      profile: 'full',
      only: ['E2E'],
    });
    if (process.env.CONFORMANCE_PRINT) console.log(formatTable(run, 140));
  }, 170_000);

  afterAll(async () => {
    await instance?.close();
  });

  it(`fails nothing and runs ${decisive}`, () => {
    expect(failures(run)).toEqual([]);
    expect(run.results.find((r) => r.id === decisive)?.status).toBe('pass');
    expect(run.results.filter((r) => r.status === 'pass').length).toBe(passing);
    expect(run.results.every((r) => r.id.startsWith('E2E-'))).toBe(true);
  });
});

// The classes that need mail (EMAIL, RCPT, TEAM) on one instance with an SMTP relay (a real SMTP server in this
// process), its mailbox read through the suite's hook: the instances above have no relay, so they run EMAIL-006 and
// the network requirements of RCPT (RCPT-001 to RCPT-005) and skip the rest, TEAM-027 among them.
describe('the EMAIL, RCPT and TEAM classes against our server with an SMTP relay', () => {
  let relayed: RelayedInstance;
  let run: RunOutput;

  beforeAll(async () => {
    relayed = await startRelayedServer();
    run = await runSuite({
      baseUrl: relayed.instance.baseUrl,
      token: relayed.instance.tokenA,
      tokenB: relayed.instance.tokenB,
      // The requester's address (EMAIL-008 reads the notice of the answer there); B is invited by email (TEAM-027).
      email: EMAIL_A,
      emailB: EMAIL_B,
      profile: 'full',
      only: ['EMAIL', 'RCPT', 'TEAM'],
      mailDomain: 'example.net',
      mailbox: relayed.mailbox,
    });
    if (process.env.CONFORMANCE_PRINT) console.log(formatTable(run, 140));
  }, 300_000);

  afterAll(async () => {
    await relayed?.close();
  });

  it('fails nothing', () => {
    expect(failures(run)).toEqual([]);
  });

  it('EMAIL: delivers (EMAIL-007, EMAIL-008) and skips only the check for instances without email', () => {
    expect(
      run.results.filter((r) => r.area === 'EMAIL' && r.status !== 'pass').map((r) => `${r.id} ${r.status}`),
    ).toEqual(['EMAIL-006 skip']);
    expect(run.results.find((r) => r.id === 'EMAIL-007')?.status).toBe('pass');
  });

  it('RCPT: passes every requirement: networks refused and allowed with the views counted, codes mailed, wrong, used once', () => {
    expect(run.results.filter((r) => r.area === 'RCPT').map((r) => `${r.id} ${r.status}`)).toEqual(
      Array.from({ length: 9 }, (_, i) => `RCPT-00${i + 1} pass`),
    );
  });

  it('TEAM: accepts an invitation by email only with its addressee (TEAM-027)', () => {
    expect(run.results.find((r) => r.id === 'TEAM-027')?.status).toBe('pass');
  });

  it('runs only those classes', () => {
    expect(new Set(run.results.map((r) => r.area))).toEqual(new Set(['EMAIL', 'RCPT', 'TEAM']));
  });
});

// The HOOK class on an instance with webhooks (allowed to send to this process's receiver on loopback); the default
// instances above (webhooks off in tests) skip it.
describe('the HOOK class against our server with webhooks', () => {
  let instance: Instance;
  let run: RunOutput;

  beforeAll(async () => {
    instance = await startOurServer({ webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1] } });
    run = await runSuite({
      baseUrl: instance.baseUrl,
      token: instance.tokenA,
      tokenB: instance.tokenB,
      profile: 'full',
      only: ['HOOK'],
      webhookReceiver: { host: '127.0.0.1', port: 0 },
    });
    if (process.env.CONFORMANCE_PRINT) console.log(formatTable(run, 140));
  }, 170_000);

  afterAll(async () => {
    await instance?.close();
  });

  it('passes every requirement: signed deliveries, events, retries, a rotated secret', () => {
    expect(failures(run)).toEqual([]);
    expect(run.results.map((r) => `${r.id} ${r.status}`)).toEqual([
      'HOOK-001 pass',
      'HOOK-002 pass',
      'HOOK-003 pass',
      'HOOK-004 pass',
      'HOOK-005 pass',
      'HOOK-006 pass',
    ]);
  });
});
