import { describe, expect, it } from 'vitest';
import { loadSettings, SECRET_SETTINGS } from '../config/settings.js';
import { settingsInForce } from './settings-in-force.js';

/** A value for every secret setting, each with a marker no page may show. */
const SECRETS: Record<keyof typeof SECRET_SETTINGS, string> = {
  PWPUSH_MASTER_KEY: `current:${'ab'.repeat(32)}`,
  PWPUSH_MASTER_KEY_PREVIOUS: `older:${'cd'.repeat(32)}`,
  PWPUSH_SIGNING_SECRET: 'signing-MARKER-0001-long-enough-to-be-a-secret',
  PWPUSH_SMTP_URL: 'smtp://mailer:smtp-MARKER-0002@127.0.0.1:2525',
  PWPUSH_OIDC_CLIENT_SECRET: 'oidc-MARKER-0003',
  PWPUSH_METRICS_TOKEN: 'metrics-MARKER-0004-token',
  DATABASE_URL: 'postgres://app:db-MARKER-0005@127.0.0.1:5432/app',
  PWPUSH_S3_ACCESS_KEY_ID: 's3id-MARKER-0006',
  PWPUSH_S3_SECRET_ACCESS_KEY: 's3secret-MARKER-0007',
};

describe('the settings in force (the admin console)', () => {
  it('shows every secret setting as set, and none of their values', () => {
    const settings = loadSettings({
      ...SECRETS,
      PWPUSH_ENV: 'test',
      PWPUSH_PUBLIC_BASE_URL: 'https://push.example.org',
      PWPUSH_OIDC_ISSUER: 'https://id.example.org',
      PWPUSH_OIDC_CLIENT_ID: 'client-1',
      PWPUSH_FILE_STORAGE: 's3://bucket/prefix/',
      PWPUSH_ADMIN_EMAILS: 'Root@Example.org',
      PWPUSH_METRICS: 'true',
    });
    // A URL's password is masked wherever it stands (no setting accepts one today: defence in depth).
    const rows = settingsInForce({ ...settings, publicBaseUrl: 'https://user:endpoint-MARKER-0008@push.example.org' });
    const text = JSON.stringify(rows);
    for (const marker of [...Object.values(SECRETS), 'endpoint-MARKER-0008', 'ab'.repeat(32), 'cd'.repeat(32)])
      expect([marker, text.includes(marker)]).toEqual([marker, false]);
    expect(text).not.toMatch(/MARKER/);
    const value = (path: string) => rows.find((r) => r.path === path);
    expect(value('masterKeys')).toEqual({ path: 'masterKeys', value: 'set (key ids: current, older)', secret: true });
    for (const path of ['signingSecret', 'mail.smtpUrl', 'oidc.clientSecret', 'metricsToken', 'databaseUrl'])
      expect(value(path)).toEqual({ path, value: 'set', secret: true });
    expect(value('fileStorage.credentials')?.value).toBe('set');
    expect(value('publicBaseUrl')?.value).toBe('https://user:****@push.example.org');
    expect(value('oidc.clientId')?.value).toBe('client-1');
    expect(value('adminEmails')?.value).toBe('root@example.org');
  });

  it('says "not set" of a secret that is not set', () => {
    const rows = settingsInForce(loadSettings({ PWPUSH_ENV: 'test', PWPUSH_MASTER_KEY: 'ab'.repeat(32) }));
    expect(rows.find((r) => r.path === 'metricsToken')).toEqual({
      path: 'metricsToken',
      value: 'not set',
      secret: true,
    });
    expect(rows.find((r) => r.path === 'databaseUrl')?.value).toBe('not set');
  });
});
