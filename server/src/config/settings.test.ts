import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  defaultWorkers,
  loadSettings,
  mailLinkBase,
  maxBodyBytes,
  parseMasterKey,
  SECRET_SETTINGS,
  secretSettingsMarkdown,
  SettingsError,
  settingsTable,
  unknownVariables,
  unknownVariablesWarning,
} from './settings.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const HEX = 'ab'.repeat(32);
const base = { PWPUSH_DATA_DIR: dir, PWPUSH_MASTER_KEY: HEX };

function error(env: NodeJS.ProcessEnv): SettingsError {
  try {
    loadSettings(env);
  } catch (e) {
    expect(e).toBeInstanceOf(SettingsError);
    return e as SettingsError;
  }
  throw new Error('expected a SettingsError');
}

describe('loadSettings', () => {
  it('has the documented defaults', () => {
    const s = loadSettings(base);
    expect(s).toMatchObject({
      env: 'development',
      port: 5100,
      dataDir: dir,
      databaseUrl: null,
      publicBaseUrl: null,
      trustProxy: false,
      logLevel: 'info',
      allowAnonymous: true,
      enableFilePushes: true,
      enableUrlPushes: true,
      enableQrPushes: true,
      filesRequireAuth: true,
      fileMaxCount: 10,
      fileMaxBytes: 10_485_760,
      expireAfterDays: { default: 7, min: 1, max: 90 },
      expireAfterDurationMin: 0,
      expireAfterViews: { default: 5, min: 1, max: 100 },
      deletableByViewerDefault: true,
      retrievalStepDefault: false,
      passphraseAttemptsPerMinute: 5,
      clientEncryption: { enabled: true, default: false, required: false },
      rateLimitPerMinute: 120,
      sweepIntervalSeconds: 30,
      purgeExpiredAfterDays: null,
    });
    expect(s.masterKeys).toHaveLength(1);
    expect(s.signingSecret.length).toBe(32);
  });

  it('parses booleans strictly (true/false/1/0/yes/no) and names the variable on a bad value', () => {
    for (const [v, want] of [
      ['yes', true],
      ['NO', false],
      ['1', true],
      ['0', false],
      ['True', true],
    ] as const) {
      expect(loadSettings({ ...base, PWPUSH_ALLOW_ANONYMOUS: v }).allowAnonymous).toBe(want);
    }
    const e = error({ ...base, PWPUSH_ALLOW_ANONYMOUS: 'maybe' });
    expect(e.variable).toBe('PWPUSH_ALLOW_ANONYMOUS');
    expect(e.message).toMatch(/PWPUSH_ALLOW_ANONYMOUS must be one of true, false, 1, 0, yes, no/);
  });

  it('reads PWPUSH_CLIENT_ENCRYPTION as off, allowed, default or required, each implying the weaker ones', () => {
    const mode = (v: string) => loadSettings({ ...base, PWPUSH_CLIENT_ENCRYPTION: v }).clientEncryption;
    expect(mode('off')).toEqual({ enabled: false, default: false, required: false });
    expect(mode('Allowed')).toEqual({ enabled: true, default: false, required: false });
    expect(mode('default')).toEqual({ enabled: true, default: true, required: false });
    expect(mode('REQUIRED')).toEqual({ enabled: true, default: true, required: true });
    const e = error({ ...base, PWPUSH_CLIENT_ENCRYPTION: 'on' });
    expect(e.variable).toBe('PWPUSH_CLIENT_ENCRYPTION');
    expect(e.message).toMatch(/must be one of off, allowed, default, required/);
  });

  it('accepts integers only, within their ranges', () => {
    expect(error({ ...base, PORT: '51.5' }).message).toMatch(/PORT must be an integer from 1 to 65535/);
    expect(error({ ...base, PWPUSH_FILE_MAX_COUNT: '11' }).message).toMatch(
      /PWPUSH_FILE_MAX_COUNT must be an integer from 1 to 10/,
    );
    expect(error({ ...base, PWPUSH_FILE_MAX_BYTES: '0' }).variable).toBe('PWPUSH_FILE_MAX_BYTES');
    expect(error({ ...base, PWPUSH_EXPIRE_AFTER_DAYS_MAX: '91' }).message).toMatch(/from 1 to 90/);
    expect(error({ ...base, PWPUSH_EXPIRE_AFTER_VIEWS_MIN: 'abc' }).message).toMatch(/from 1 to 100/);
    expect(loadSettings({ ...base, PWPUSH_PURGE_EXPIRED_AFTER_DAYS: '30' }).purgeExpiredAfterDays).toBe(30);
  });

  it('keeps expiry defaults within min..max', () => {
    const s = loadSettings({ ...base, PWPUSH_EXPIRE_AFTER_DAYS_MIN: '2', PWPUSH_EXPIRE_AFTER_DAYS_MAX: '5' });
    expect(s.expireAfterDays).toEqual({ default: 5, min: 2, max: 5 });
    expect(
      error({ ...base, PWPUSH_EXPIRE_AFTER_DAYS_MAX: '5', PWPUSH_EXPIRE_AFTER_DAYS_DEFAULT: '7' }).message,
    ).toMatch(/PWPUSH_EXPIRE_AFTER_DAYS_DEFAULT must be an integer from 1 to 5/);
    expect(error({ ...base, PWPUSH_EXPIRE_AFTER_VIEWS_MIN: '9', PWPUSH_EXPIRE_AFTER_VIEWS_MAX: '3' }).variable).toBe(
      'PWPUSH_EXPIRE_AFTER_VIEWS_MIN',
    );
  });

  it('reads the shortest sub-day duration 0..6 (6: nothing under a day)', () => {
    expect(loadSettings({ ...base, PWPUSH_EXPIRE_AFTER_DURATION_MIN: '3' }).expireAfterDurationMin).toBe(3);
    expect(loadSettings({ ...base, PWPUSH_EXPIRE_AFTER_DURATION_MIN: '6' }).expireAfterDurationMin).toBe(6);
    expect(error({ ...base, PWPUSH_EXPIRE_AFTER_DURATION_MIN: '7' }).message).toMatch(
      /PWPUSH_EXPIRE_AFTER_DURATION_MIN must be an integer from 0 to 6/,
    );
    expect(error({ ...base, PWPUSH_EXPIRE_AFTER_DURATION_MIN: '-1' }).variable).toBe(
      'PWPUSH_EXPIRE_AFTER_DURATION_MIN',
    );
  });

  it('accepts only http(s) public base URLs and drops the trailing slash', () => {
    expect(loadSettings({ ...base, PWPUSH_PUBLIC_BASE_URL: 'https://pw.example.com/' }).publicBaseUrl).toBe(
      'https://pw.example.com',
    );
    expect(loadSettings({ ...base, PWPUSH_PUBLIC_BASE_URL: 'https://example.com/secrets/' }).publicBaseUrl).toBe(
      'https://example.com/secrets',
    );
    expect(error({ ...base, PWPUSH_PUBLIC_BASE_URL: 'ftp://x.example' }).variable).toBe('PWPUSH_PUBLIC_BASE_URL');
    expect(error({ ...base, PWPUSH_PUBLIC_BASE_URL: 'not a url' }).variable).toBe('PWPUSH_PUBLIC_BASE_URL');
  });

  it('refuses to start in production without a public base URL, saying what to set and why', () => {
    for (const env of [
      { NODE_ENV: 'production' },
      { PWPUSH_ENV: 'production' },
      { NODE_ENV: 'test', PWPUSH_ENV: 'production' },
    ]) {
      const e = error({ ...base, ...env, PWPUSH_MASTER_KEY: HEX });
      expect(e.variable).toBe('PWPUSH_PUBLIC_BASE_URL');
      expect(e.message).toMatch(/PWPUSH_PUBLIC_BASE_URL is required in production/);
      expect(e.message).toMatch(/PWPUSH_PUBLIC_BASE_URL=https:\/\//);
      expect(e.message).toMatch(/Host header/);
      expect(error({ ...base, ...env, PWPUSH_MASTER_KEY: HEX, PWPUSH_PUBLIC_BASE_URL: '   ' }).variable).toBe(
        'PWPUSH_PUBLIC_BASE_URL',
      );
    }
    // Development and test still build links from the request.
    expect(loadSettings({ ...base, PWPUSH_ENV: 'development' }).publicBaseUrl).toBeNull();
    expect(
      loadSettings({
        ...base,
        PWPUSH_ENV: 'production',
        PWPUSH_MASTER_KEY: HEX,
        PWPUSH_PUBLIC_BASE_URL: 'https://pw.example.com',
      }).publicBaseUrl,
    ).toBe('https://pw.example.com');
  });

  it('refuses an SMTP relay without a public base URL in every environment: links in email never follow Host', () => {
    for (const env of ['development', 'test'] as const) {
      const e = error({ ...base, PWPUSH_ENV: env, PWPUSH_SMTP_URL: 'smtp://127.0.0.1:2525' });
      expect(e.variable).toBe('PWPUSH_PUBLIC_BASE_URL');
      expect(e.message).toMatch(/PWPUSH_SMTP_URL needs PWPUSH_PUBLIC_BASE_URL/);
      expect(e.message).toMatch(/Host header/);
      expect(e.message).toContain('PWPUSH_PUBLIC_BASE_URL=http://localhost:5100');
    }
    const withBase = loadSettings({
      ...base,
      PWPUSH_SMTP_URL: 'smtp://127.0.0.1:2525',
      PWPUSH_PUBLIC_BASE_URL: 'http://localhost:5100',
    });
    expect([withBase.mail.smtpUrl, withBase.publicBaseUrl]).toEqual(['smtp://127.0.0.1:2525', 'http://localhost:5100']);
    expect(mailLinkBase(withBase)).toBe('http://localhost:5100');
    // Settings made in code (tests, embedders) are refused by the same rule where links are built.
    expect(() => mailLinkBase({ publicBaseUrl: null })).toThrow(/PWPUSH_SMTP_URL needs PWPUSH_PUBLIC_BASE_URL/);
  });

  it('validates the log level, environment and database URL', () => {
    expect(error({ ...base, PWPUSH_LOG_LEVEL: 'loud' }).message).toMatch(
      /fatal, error, warn, info, debug, trace, silent/,
    );
    expect(error({ ...base, NODE_ENV: 'staging' }).variable).toBe('NODE_ENV');
    expect(
      loadSettings({
        ...base,
        NODE_ENV: 'test',
        PWPUSH_ENV: 'production',
        PWPUSH_PUBLIC_BASE_URL: 'https://pw.example.com',
      }).env,
    ).toBe('production');
    expect(error({ ...base, DATABASE_URL: 'mysql://x' }).variable).toBe('DATABASE_URL');
  });
});

describe('master keys', () => {
  it('reads hex or base64 keys with an optional id, and previous keys for decryption', () => {
    const b64 = Buffer.alloc(32, 7).toString('base64');
    const s = loadSettings({
      ...base,
      PWPUSH_MASTER_KEY: `k2:${b64}`,
      PWPUSH_MASTER_KEY_PREVIOUS: `k1:${HEX}, ${'cd'.repeat(32)}`,
    });
    expect(s.masterKeys.map((k) => k.id)).toEqual(['k2', 'k1', parseMasterKey('cd'.repeat(32), 'x').id]);
    expect(s.masterKeys[0]!.key).toEqual(Buffer.alloc(32, 7));
    expect(s.masterKeys[1]!.key.toString('hex')).toBe(HEX);
  });

  it('rejects malformed keys without echoing them', () => {
    const e = error({ ...base, PWPUSH_MASTER_KEY: 'secret-but-short' });
    expect(e.message).toMatch(/PWPUSH_MASTER_KEY must be 64 hex characters or base64 of 32 bytes/);
    expect(e.message).not.toContain('secret-but-short');
    expect(error({ ...base, PWPUSH_MASTER_KEY_PREVIOUS: 'zz' }).variable).toBe('PWPUSH_MASTER_KEY_PREVIOUS');
  });

  it('reads a key file', () => {
    const file = path.join(dir, 'key.txt');
    writeFileSync(file, `file:${HEX}\n`);
    const s = loadSettings({ PWPUSH_DATA_DIR: dir, PWPUSH_MASTER_KEY_FILE: file });
    expect(s.masterKeys[0]!.id).toBe('file');
    expect(error({ PWPUSH_DATA_DIR: dir, PWPUSH_MASTER_KEY_FILE: path.join(dir, 'missing') }).variable).toBe(
      'PWPUSH_MASTER_KEY_FILE',
    );
  });

  it('refuses to start in production without a key', () => {
    const e = error({ PWPUSH_DATA_DIR: dir, NODE_ENV: 'production' });
    expect(e.variable).toBe('PWPUSH_MASTER_KEY');
    expect(e.message).toMatch(/required in production/);
  });

  it('generates a development key file once (mode 0600) and reuses it', () => {
    const devDir = path.join(dir, 'dev');
    const first = loadSettings({ PWPUSH_DATA_DIR: devDir });
    const second = loadSettings({ PWPUSH_DATA_DIR: devDir });
    expect(second.masterKeys[0]!.key).toEqual(first.masterKeys[0]!.key);
    const file = path.join(devDir, 'master.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
  });

  it('derives the signing secret from the master key unless set, and wants at least 32 characters', () => {
    const a = loadSettings(base).signingSecret;
    const b = loadSettings({ ...base, PWPUSH_MASTER_KEY: 'cd'.repeat(32) }).signingSecret;
    expect(a.equals(b)).toBe(false);
    expect(loadSettings({ ...base, PWPUSH_SIGNING_SECRET: 'x'.repeat(40) }).signingSecret.toString()).toBe(
      'x'.repeat(40),
    );
    expect(error({ ...base, PWPUSH_SIGNING_SECRET: 'short' }).variable).toBe('PWPUSH_SIGNING_SECRET');
  });
});

describe('runtime settings', () => {
  it('defaults the workers to the cores, less one for a PostgreSQL on this machine, and at least one', () => {
    expect(defaultWorkers(null, 4)).toBe(3);
    expect(defaultWorkers('postgres://u:p@127.0.0.1:5432/db', 4)).toBe(3);
    expect(defaultWorkers('postgres://u:p@localhost/db', 8)).toBe(7);
    expect(defaultWorkers('postgres://u:p@[::1]:5432/db', 2)).toBe(1);
    expect(defaultWorkers('postgres://u:p@db.internal:5432/db', 4)).toBe(4);
    expect(defaultWorkers(null, 1)).toBe(1);
    expect(defaultWorkers('postgres://u:p@db.internal/db', 200)).toBe(64);
    expect(loadSettings({ ...base, PWPUSH_WORKERS: '3' }).workers).toBe(3);
    expect(error({ ...base, PWPUSH_WORKERS: '0' }).variable).toBe('PWPUSH_WORKERS');
    expect(loadSettings(base).databasePoolSize).toBe(10);
    expect(error({ ...base, PWPUSH_DATABASE_POOL_SIZE: '1000' }).variable).toBe('PWPUSH_DATABASE_POOL_SIZE');
  });

  it('serves metrics only when asked, and takes a token only with them and long enough', () => {
    expect(loadSettings(base)).toMatchObject({ metricsEnabled: false, metricsToken: null });
    expect(loadSettings({ ...base, PWPUSH_METRICS: 'true' })).toMatchObject({
      metricsEnabled: true,
      metricsToken: null,
    });
    const token = 't'.repeat(20);
    expect(loadSettings({ ...base, PWPUSH_METRICS: 'true', PWPUSH_METRICS_TOKEN: token }).metricsToken).toBe(token);
    const without = error({ ...base, PWPUSH_METRICS_TOKEN: token });
    expect(without.variable).toBe('PWPUSH_METRICS_TOKEN');
    expect(without.message).not.toContain(token);
    const short = error({ ...base, PWPUSH_METRICS: 'true', PWPUSH_METRICS_TOKEN: 'short' });
    expect(short.message).toMatch(/at least 16 characters/);
    expect(short.message).not.toContain('short"');
  });
});

describe('host, CORS and unknown variables', () => {
  it('binds loopback in development and test, every interface in production, and what PWPUSH_HOST says', () => {
    expect(loadSettings(base).host).toBe('127.0.0.1');
    expect(loadSettings({ ...base, PWPUSH_ENV: 'development' }).host).toBe('127.0.0.1');
    const production = {
      ...base,
      PWPUSH_ENV: 'production',
      PWPUSH_MASTER_KEY: HEX,
      PWPUSH_PUBLIC_BASE_URL: 'https://pw.example.com',
    };
    expect(loadSettings(production).host).toBe('0.0.0.0');
    expect(loadSettings({ ...production, PWPUSH_HOST: '10.0.0.5' }).host).toBe('10.0.0.5');
    expect(loadSettings({ ...base, PWPUSH_HOST: '0.0.0.0' }).host).toBe('0.0.0.0');
  });

  it('reads PWPUSH_CORS_ORIGINS as exact origins, none by default, and the v1 create exception on by default', () => {
    expect(loadSettings(base)).toMatchObject({ corsOrigins: [], corsV1Create: true });
    const s = loadSettings({
      ...base,
      PWPUSH_CORS_ORIGINS:
        ' https://App.Example.org , http://localhost:3000/,http://localhost:3000,https://a.example:443',
      PWPUSH_CORS_V1_CREATE: 'false',
    });
    expect(s.corsOrigins).toEqual(['https://app.example.org', 'http://localhost:3000', 'https://a.example']);
    expect(s.corsV1Create).toBe(false);
    for (const bad of [
      '*',
      'https://*.example.org',
      'app.example.org',
      'https://app.example.org/path',
      'ftp://x.example',
      'https://u:p@x.example',
      'https://x.example?q=1',
    ]) {
      const e = error({ ...base, PWPUSH_CORS_ORIGINS: bad });
      expect(e.variable, bad).toBe('PWPUSH_CORS_ORIGINS');
      expect(e.message).toMatch(/exact origins/);
    }
  });

  it('names unknown PWPUSH_* variables with the closest known name, and only those', () => {
    expect(
      unknownVariables({ ...base, PORT: '1', DATABASE_URL: 'postgres://x', HOME: '/root', PWPUSH_CORS_ORIGINS: '' }),
    ).toEqual([]);
    expect(unknownVariablesWarning(base)).toBeNull();
    const env = {
      ...base,
      PWPUSH_RATE_LIMT_PER_MINUTE: '5',
      PWPUSH_CORS_ORIGIN: 'http://a.example',
      pwpush_log_level: 'debug',
      PWPUSH_MASTERKEY: 'secret!',
    };
    expect(unknownVariables(env)).toEqual([
      { name: 'PWPUSH_CORS_ORIGIN', closest: 'PWPUSH_CORS_ORIGINS' },
      { name: 'PWPUSH_MASTERKEY', closest: 'PWPUSH_MASTER_KEY' },
      { name: 'PWPUSH_RATE_LIMT_PER_MINUTE', closest: 'PWPUSH_RATE_LIMIT_PER_MINUTE' },
      { name: 'pwpush_log_level', closest: 'PWPUSH_LOG_LEVEL' },
    ]);
    const warning = unknownVariablesWarning(env)!;
    expect(warning).toContain('PWPUSH_RATE_LIMT_PER_MINUTE (did you mean PWPUSH_RATE_LIMIT_PER_MINUTE?)');
    expect(warning).not.toContain('secret!');
  });
});

describe('secrets from files (issue 38)', () => {
  const secretFile = (name: string, content: string) => {
    const file = path.join(dir, `secret-${name}`);
    writeFileSync(file, content, { mode: 0o600 });
    return file;
  };
  /** A valid value of each secret setting, and where loadSettings puts it. */
  const names = Object.keys(SECRET_SETTINGS) as (keyof typeof SECRET_SETTINGS)[];
  const samples: Record<
    keyof typeof SECRET_SETTINGS,
    { value: string; read: (env: NodeJS.ProcessEnv) => unknown; extra?: NodeJS.ProcessEnv }
  > = {
    PWPUSH_MASTER_KEY: { value: `k9:${'cd'.repeat(32)}`, read: (env) => loadSettings(env).masterKeys[0]!.id },
    PWPUSH_MASTER_KEY_PREVIOUS: { value: `old:${'ef'.repeat(32)}`, read: (env) => loadSettings(env).masterKeys[1]!.id },
    PWPUSH_SIGNING_SECRET: { value: 's'.repeat(40), read: (env) => loadSettings(env).signingSecret.toString() },
    PWPUSH_SMTP_URL: {
      value: 'smtp://user:pa%40ss@mail.example.org:587',
      read: (env) => loadSettings(env).mail.smtpUrl,
      extra: { PWPUSH_PUBLIC_BASE_URL: 'https://secrets.example.org' },
    },
    PWPUSH_OIDC_CLIENT_SECRET: {
      value: 'client-secret-from-a-file',
      read: (env) => loadSettings(env).oidc!.clientSecret,
      extra: { PWPUSH_OIDC_ISSUER: 'https://id.example.org', PWPUSH_OIDC_CLIENT_ID: 'secret-push' },
    },
    PWPUSH_METRICS_TOKEN: {
      value: 'scrape-token-0123456789',
      read: (env) => loadSettings(env).metricsToken,
      extra: { PWPUSH_METRICS: 'true' },
    },
    DATABASE_URL: {
      value: 'postgres://app:pw@db.example.org:5432/secret_push',
      read: (env) => loadSettings(env).databaseUrl,
    },
    PWPUSH_S3_ACCESS_KEY_ID: {
      value: 'AKIAEXAMPLEKEYID',
      read: (env) => {
        const storage = loadSettings(env).fileStorage;
        return storage.kind === 's3' ? storage.credentials?.accessKeyId : null;
      },
      extra: { PWPUSH_FILE_STORAGE: 's3://bucket/prefix', PWPUSH_S3_SECRET_ACCESS_KEY: 'the-other-half' },
    },
    PWPUSH_S3_SECRET_ACCESS_KEY: {
      value: 'secret-access-key-from-a-file',
      read: (env) => {
        const storage = loadSettings(env).fileStorage;
        return storage.kind === 's3' ? storage.credentials?.secretAccessKey : null;
      },
      extra: { PWPUSH_FILE_STORAGE: 's3://bucket/prefix', PWPUSH_S3_ACCESS_KEY_ID: 'AKIAEXAMPLEKEYID' },
    },
  };
  /** The sample of a secret setting (every one has one: checked below, the names come from the declarations). */
  const sampleOf = (name: string) => {
    const sample = samples[name];
    if (!sample) throw new Error(`no sample for the secret setting ${name}`);
    return sample;
  };
  const expected = (name: string) =>
    name === 'PWPUSH_MASTER_KEY' ? 'k9' : name === 'PWPUSH_MASTER_KEY_PREVIOUS' ? 'old' : sampleOf(name).value;

  it('has a sample of every secret setting', () => {
    expect(Object.keys(samples).sort()).toEqual([...names].sort());
  });

  it('reads every secret setting inline or from NAME_FILE (its first line, trimmed), the same value either way', () => {
    for (const name of names) {
      const { value, read, extra } = sampleOf(name);
      const env: NodeJS.ProcessEnv = { ...base, ...extra };
      if (name === 'PWPUSH_MASTER_KEY') delete env.PWPUSH_MASTER_KEY;
      expect(read({ ...env, [name]: value }), name).toBe(expected(name));
      const file = secretFile(name, `  ${value}  \nsecond line ignored\n`);
      expect(read({ ...env, [`${name}_FILE`]: file }), `${name}_FILE`).toBe(expected(name));
    }
  });

  it('refuses both NAME and NAME_FILE, an unreadable or empty file, and a bad value from a file, never echoing it', () => {
    for (const name of names) {
      const { value, extra } = sampleOf(name);
      const env = { ...base, ...extra };
      const file = secretFile(name, `${value}\n`);
      const both = error({ ...env, [name]: value, [`${name}_FILE`]: file });
      expect(both.variable, name).toBe(name);
      expect(both.message).toMatch(new RegExp(`Set only one of ${name} and ${name}_FILE`));
      const missing = error({ ...env, [name]: undefined, [`${name}_FILE`]: path.join(dir, 'no-such-file') });
      expect(missing.variable).toBe(`${name}_FILE`);
      expect(missing.message).toMatch(/cannot read .*no-such-file \(ENOENT\)/);
      const empty = error({ ...env, [name]: undefined, [`${name}_FILE`]: secretFile(`${name}-empty`, '\n') });
      expect(empty.variable).toBe(`${name}_FILE`);
      expect(empty.message).toMatch(/is empty/);
    }
    const bad = 'not-a-url-but-a-secret';
    for (const name of ['PWPUSH_SMTP_URL', 'DATABASE_URL', 'PWPUSH_SIGNING_SECRET', 'PWPUSH_MASTER_KEY'] as const) {
      const e = error({
        ...base,
        ...sampleOf(name).extra,
        [name]: undefined,
        [`${name}_FILE`]: secretFile(`${name}-bad`, bad),
      });
      expect(e.variable, name).toMatch(new RegExp(`^${name}_FILE`));
      expect(e.message).not.toContain(bad);
    }
  });

  it('knows every NAME_FILE (no unknown-variable warning) and documents them in one table', () => {
    const rows = settingsTable().map((r) => r.name);
    for (const name of names) {
      expect(rows).toContain(name);
      expect(rows[rows.indexOf(name) + 1]).toBe(`${name}_FILE`);
    }
    const env = Object.fromEntries(names.map((n) => [`${n}_FILE`, '/run/secrets/x']));
    expect(unknownVariables(env)).toEqual([]);
    const table = secretSettingsMarkdown().split('\n');
    expect(table).toHaveLength(2 + names.length);
    for (const name of names) expect(table.some((l) => l.startsWith(`| \`${name}\` | \`${name}_FILE\` |`))).toBe(true);
  });
});

describe('production refusals and the mode (issue 38)', () => {
  it('names every missing production setting in one refusal, not one per start', () => {
    const e = error({ PWPUSH_DATA_DIR: dir, PWPUSH_ENV: 'production' });
    expect(e.variable).toBe('PWPUSH_MASTER_KEY');
    expect(e.message).toMatch(/production needs 2 settings/);
    expect(e.message).toMatch(/PWPUSH_MASTER_KEY or PWPUSH_MASTER_KEY_FILE is required in production/);
    expect(e.message).toMatch(/PWPUSH_PUBLIC_BASE_URL is required in production/);
    const key = error({
      PWPUSH_DATA_DIR: dir,
      PWPUSH_ENV: 'production',
      PWPUSH_PUBLIC_BASE_URL: 'https://s.example.org',
    });
    expect(key.message).not.toMatch(/PWPUSH_PUBLIC_BASE_URL/);
  });

  it('reads PWPUSH_MODE as full (default) or retrieve-only', () => {
    expect(loadSettings(base).mode).toBe('full');
    expect(loadSettings({ ...base, PWPUSH_MODE: 'retrieve-only' }).mode).toBe('retrieve-only');
    expect(loadSettings({ ...base, PWPUSH_MODE: 'Retrieve-Only' }).mode).toBe('retrieve-only');
    const e = error({ ...base, PWPUSH_MODE: 'gateway' });
    expect(e.variable).toBe('PWPUSH_MODE');
    expect(e.message).toMatch(/full, retrieve-only/);
  });
});

describe('settingsTable and maxBodyBytes', () => {
  it('documents every variable loadSettings reads, and each once', () => {
    const names = settingsTable().map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    // Every variable the loader asks the environment for, recorded as it asks: with single sign-on, a relay, the
    // object store and both metrics settings on, so that every area's settings are read.
    const read = new Set<string>();
    const env = new Proxy<NodeJS.ProcessEnv>(
      {
        ...base,
        PWPUSH_PUBLIC_BASE_URL: 'https://secrets.example.org',
        PWPUSH_SMTP_URL: 'smtp://relay.example.org:587',
        PWPUSH_OIDC_ISSUER: 'https://id.example.org',
        PWPUSH_OIDC_CLIENT_ID: 'secret-push',
        PWPUSH_OIDC_CLIENT_SECRET: 'client-secret-value',
        PWPUSH_FILE_STORAGE: 's3://bucket/prefix',
        PWPUSH_METRICS: 'true',
      },
      {
        get(target, name: string) {
          read.add(name);
          return target[name];
        },
      },
    );
    loadSettings(env);
    read.delete('NODE_ENV'); // documented under PWPUSH_ENV
    expect(read.size).toBeGreaterThan(60);
    expect([...read].filter((name) => !names.includes(name))).toEqual([]);
    for (const row of settingsTable()) {
      expect(row.default).not.toBe('');
      expect(row.accepts).not.toBe('');
      expect(row.meaning).not.toBe('');
    }
  });

  it('sizes the body limit to the file limits plus 8 MiB', () => {
    expect(maxBodyBytes({ fileMaxCount: 10, fileMaxBytes: 10_485_760 })).toBe(10 * 13_981_016 + 8 * 1024 * 1024);
    expect(maxBodyBytes({ fileMaxCount: 1, fileMaxBytes: 3 })).toBe(4 + 8 * 1024 * 1024);
  });
});

describe('sign-in settings (issue 25)', () => {
  const oidc = {
    ...base,
    PWPUSH_OIDC_ISSUER: 'https://id.example.org/realms/main/',
    PWPUSH_OIDC_CLIENT_ID: 'secret-push',
    PWPUSH_OIDC_CLIENT_SECRET: 'client-secret-value',
  };

  it('has single sign-on off and 2FA optional by default', () => {
    expect(loadSettings(base)).toMatchObject({ oidc: null, require2fa: false });
    expect(loadSettings({ ...base, PWPUSH_REQUIRE_2FA: 'true' }).require2fa).toBe(true);
  });

  it('reads the provider, its client and who may sign in', () => {
    const s = loadSettings({ ...oidc, PWPUSH_OIDC_ALLOWED_DOMAINS: 'Example.org, @example.com,,example.org' });
    expect(s.oidc).toEqual({
      issuer: 'https://id.example.org/realms/main/',
      clientId: 'secret-push',
      clientSecret: 'client-secret-value',
      allowedDomains: ['example.org', 'example.com'],
      autoCreate: true,
      only: false,
      providerName: 'id.example.org',
      allowHttp: false,
      emailVerifiedClaim: 'email_verified',
    });
    const file = path.join(dir, 'oidc-secret');
    writeFileSync(file, 'from-a-file\nignored\n');
    const fromFile = loadSettings({
      ...oidc,
      PWPUSH_OIDC_CLIENT_SECRET: undefined,
      PWPUSH_OIDC_CLIENT_SECRET_FILE: file,
      PWPUSH_OIDC_PROVIDER_NAME: 'Keycloak',
      PWPUSH_OIDC_ONLY: 'true',
      PWPUSH_OIDC_AUTO_CREATE: 'false',
      PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM: 'xms_edov',
    }).oidc!;
    expect(fromFile).toMatchObject({
      emailVerifiedClaim: 'xms_edov',
      clientSecret: 'from-a-file',
      providerName: 'Keycloak',
      only: true,
      autoCreate: false,
    });
  });

  it('refuses incomplete or unsafe provider settings, never echoing the secret', () => {
    expect(error({ ...base, PWPUSH_OIDC_ONLY: 'true' }).variable).toBe('PWPUSH_OIDC_ONLY');
    expect(error({ ...oidc, PWPUSH_OIDC_CLIENT_ID: '' }).variable).toBe('PWPUSH_OIDC_CLIENT_ID');
    expect(error({ ...oidc, PWPUSH_OIDC_CLIENT_SECRET: undefined }).variable).toBe('PWPUSH_OIDC_CLIENT_SECRET');
    const both = error({ ...oidc, PWPUSH_OIDC_CLIENT_SECRET_FILE: '/nonexistent' });
    expect(both.variable).toBe('PWPUSH_OIDC_CLIENT_SECRET');
    expect(both.message).not.toContain('client-secret-value');
    expect(error({ ...oidc, PWPUSH_OIDC_ISSUER: 'http://127.0.0.1:9000' }).variable).toBe('PWPUSH_OIDC_ISSUER');
    expect(
      loadSettings({ ...oidc, PWPUSH_OIDC_ISSUER: 'http://127.0.0.1:9000', PWPUSH_OIDC_ALLOW_HTTP: 'true' }).oidc!
        .issuer,
    ).toBe('http://127.0.0.1:9000/');
    const production = error({
      ...oidc,
      PWPUSH_ENV: 'production',
      PWPUSH_PUBLIC_BASE_URL: 'https://secrets.example.org',
      PWPUSH_OIDC_ALLOW_HTTP: 'true',
    });
    expect(production.variable).toBe('PWPUSH_OIDC_ALLOW_HTTP');
    expect(error({ ...oidc, PWPUSH_OIDC_ALLOWED_DOMAINS: 'example.org,not a domain' }).variable).toBe(
      'PWPUSH_OIDC_ALLOWED_DOMAINS',
    );
    for (const claim of ['email', 'sub', 'not a claim', 'x'.repeat(65), '1st'])
      expect(error({ ...oidc, PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM: claim }).variable).toBe(
        'PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM',
      );
    expect(error({ ...base, PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM: 'xms_edov' }).variable).toBe(
      'PWPUSH_OIDC_EMAIL_VERIFIED_CLAIM',
    );
  });
});
