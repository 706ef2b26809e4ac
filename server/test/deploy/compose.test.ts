/**
 * compose.yaml (issue 38), validated, not run: no Docker engine runs here and no container registry is reachable
 * (postgres:17, caddy and mailpit cannot be pulled), so the file is checked against the Compose Specification's JSON
 * schema (./schemas, with its source) and against what the app reads: every setting it passes is one the server
 * knows, the secrets are files, the app waits for a healthy database, and every `${VAR}` it uses is in .env.example.
 * deploy/compose-secrets.sh is run in a scratch copy to check the files it makes.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv } from 'ajv';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadSettings, repoRoot, unknownVariables } from '../../src/config/settings.js';

const read = (file: string) => readFileSync(path.join(repoRoot, file), 'utf8');
const text = read('compose.yaml');
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a Compose document, checked by the schema below
const compose = parse(text) as any;
const scratch = mkdtempSync(path.join(os.tmpdir(), 'sp-compose-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('compose.yaml', () => {
  it('validates against the Compose Specification', () => {
    const schema = JSON.parse(read('server/test/deploy/schemas/compose-spec.json')) as Record<string, unknown>;
    // draft-07 (Ajv's own; the file names it by an https URI Ajv does not list) with the later `deprecated`
    // annotation; formats are not asserted, as the spec's own tools do not assert them either.
    expect(schema.$schema).toBe('https://json-schema.org/draft-07/schema');
    const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
    const validate = ajv.compile({ ...schema, $schema: undefined });
    expect(validate(compose), JSON.stringify(validate.errors, null, 1)).toBe(true);
    // A file the schema refuses, so the check above is not vacuous.
    expect(
      validate({ ...compose, services: { app: { ...compose.services.app, restart: 'sometimes', portz: [] } } }),
    ).toBe(false);
  });

  it('runs the app and PostgreSQL 17 on named volumes, the app read-only and waiting for a healthy database', () => {
    const { app, db } = compose.services;
    expect(db.image).toBe('postgres:17');
    expect(db.healthcheck.test.join(' ')).toMatch(/pg_isready/);
    expect(app.depends_on).toEqual({ db: { condition: 'service_healthy' } });
    expect(app.volumes).toEqual(['app-data:/data']);
    expect(db.volumes[0]).toBe('db-data:/var/lib/postgresql/data');
    expect(Object.keys(compose.volumes)).toEqual(expect.arrayContaining(['app-data', 'db-data']));
    expect([app.read_only, app.tmpfs]).toEqual([true, ['/tmp']]);
    expect(app.build).toBe('.');
  });

  it('gives the app only settings the server knows, its secrets as files, and a working set with the defaults', () => {
    const { app, db } = compose.services;
    const env = app.environment as Record<string, string>;
    expect(unknownVariables(env)).toEqual([]);
    expect(env.PWPUSH_MASTER_KEY_FILE).toBe('/run/secrets/master_key');
    expect(env.DATABASE_URL_FILE).toBe('/run/secrets/database_url');
    expect(Object.keys(env).some((k) => /^(PWPUSH_MASTER_KEY|DATABASE_URL)$/.test(k))).toBe(false);
    expect(app.secrets).toEqual(['master_key', 'database_url']);
    expect(db.environment.POSTGRES_PASSWORD_FILE).toBe('/run/secrets/postgres_password');
    // The app's role is made by deploy/postgres-init.sh (not the image's superuser): its password is the app's URL's.
    expect(db.volumes).toContain('./deploy/postgres-init.sh:/docker-entrypoint-initdb.d/10-secret-push.sh:ro');
    expect(read('deploy/postgres-init.sh')).toMatch(/CREATE ROLE secret_push_app LOGIN PASSWORD :'app_password'/);
    for (const name of [...app.secrets, ...db.secrets]) expect(compose.secrets[name].file).toBe(`./secrets/${name}`);

    // The files deploy/compose-secrets.sh makes, read the way the app reads them (its settings, in production).
    mkdirSync(path.join(scratch, 'deploy'));
    cpSync(path.join(repoRoot, 'deploy/compose-secrets.sh'), path.join(scratch, 'deploy/compose-secrets.sh'));
    const first = execFileSync('sh', ['deploy/compose-secrets.sh'], { cwd: scratch, encoding: 'utf8' });
    expect(first).toMatch(/master_key: made/);
    const key = readFileSync(path.join(scratch, 'secrets/master_key'), 'utf8');
    expect(execFileSync('sh', ['deploy/compose-secrets.sh'], { cwd: scratch, encoding: 'utf8' })).toBe('');
    expect(readFileSync(path.join(scratch, 'secrets/master_key'), 'utf8')).toBe(key); // never replaced
    expect(statSync(path.join(scratch, 'secrets')).mode & 0o777).toBe(0o700);
    const password = readFileSync(path.join(scratch, 'secrets/app_db_password'), 'utf8').trim();
    expect(password).not.toBe(readFileSync(path.join(scratch, 'secrets/postgres_password'), 'utf8').trim());
    expect(readFileSync(path.join(scratch, 'secrets/database_url'), 'utf8')).toBe(
      `postgres://secret_push_app:${password}@db:5432/secret_push\n`,
    );
    const defaults = Object.fromEntries(
      Object.entries(env).map(([k, v]) => [k, v.replace(/\$\{[A-Z_]+:?[-?]([^}]*)\}/g, '$1')]),
    );
    const settings = loadSettings({
      ...defaults,
      PWPUSH_ENV: 'production',
      PWPUSH_PUBLIC_BASE_URL: 'https://secrets.example.org',
      PWPUSH_MASTER_KEY_FILE: path.join(scratch, 'secrets/master_key'),
      DATABASE_URL_FILE: path.join(scratch, 'secrets/database_url'),
    });
    expect(settings.databaseUrl).toBe(`postgres://secret_push_app:${password}@db:5432/secret_push`);
    expect(settings.masterKeys[0]!.key.toString('hex')).toBe(key.trim());
    expect(settings.mail.smtpUrl).toBeNull();
  });

  it('offers a mail catcher and a TLS front (Caddy, certificates for TLS_DOMAIN) as optional profiles', () => {
    const { mail, tls, app, db } = compose.services;
    expect([mail.profiles, tls.profiles]).toEqual([['mail'], ['tls']]);
    expect(app.profiles ?? db.profiles).toBeUndefined();
    expect(tls.image).toMatch(/^caddy:/);
    expect(tls.command).toMatch(/reverse-proxy --from \$\{TLS_DOMAIN[^}]*\} --to app:5100/);
  });

  it('reads every variable it uses from .env.example', () => {
    const used = new Set([...text.matchAll(/\$\{([A-Z_]+)/g)].map((m) => m[1]!));
    const example = read('.env.example');
    const defined = new Set([...example.matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1]!));
    for (const name of used) expect(defined, name).toContain(name);
    expect(unknownVariables(Object.fromEntries([...defined].map((n) => [n, 'x'])))).toEqual([]);
  });
});
