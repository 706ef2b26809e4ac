/**
 * Issue 19, the least-privilege database:
 *
 * - during a first start of the embedded PostgreSQL no file under the data dir or the system's temporary folder is
 *   readable by another user (the superuser's password goes to initdb in a private 0700 folder, in a 0600 file),
 *   checked by polling both while the start runs, and by reading the password file as `nobody`;
 * - the server's connection is the application role, which is not a superuser and cannot run programs;
 * - a data dir made before the role existed (everything owned by `postgres`) is handed over on start, pushes kept;
 * - with DATABASE_URL, the grants docs/operations.md lists are enough for migrations, a create and a retrieval, and a
 *   superuser role is warned about (no URL or password in the warning).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  type Stats,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createCore } from '../../src/core.js';
import { APP_ROLE, INITDB_FOLDER_PREFIX, startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrateDatabase } from '../../src/db/orm.js';
import { ctx } from '../domain/helpers.js';
import { adminUrl, makeSettings } from '../support/db.js';

const dirs: string[] = [];
function tempDataDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sp-privileges-'));
  chmodSync(dir, 0o755);
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, database: string, user?: { name: string; password: string }): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  if (user) {
    u.username = user.name;
    u.password = encodeURIComponent(user.password);
  }
  return u.toString();
}

/** Every path under `root` with its stat (entries vanishing meanwhile are skipped). */
function walk(root: string): { file: string; st: Stats }[] {
  const found: { file: string; st: Stats }[] = [];
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return found;
  }
  for (const name of names) {
    const file = path.join(root, name);
    let st: Stats;
    try {
      st = statSync(file);
    } catch {
      continue;
    }
    found.push({ file, st });
    if (st.isDirectory()) found.push(...walk(file));
  }
  return found;
}

const NOBODY = 65534;

describe('the embedded PostgreSQL', () => {
  it('never leaves the superuser password readable by another user during a first start', async () => {
    const dataDir = tempDataDir();
    const tmp = os.tmpdir();
    const leakedBefore = new Set(readdirSync(tmp).filter((n) => n.startsWith('pg-password-')));
    const exposed = new Set<string>();
    const seen: { folder?: number; pwfile?: number; readByNobody?: number | null } = {};
    let polls = 0;
    let running = true;
    const poll = async () => {
      while (running) {
        polls += 1;
        for (const { file, st } of walk(dataDir)) {
          const rel = path.relative(dataDir, file);
          // A regular file must be private to its owner; a folder may be entered (o+x) by design, never listed.
          if (st.isFile() && (st.mode & 0o077) !== 0) exposed.add(`${rel} ${(st.mode & 0o777).toString(8)}`);
          if (st.isDirectory() && rel.startsWith(INITDB_FOLDER_PREFIX)) {
            seen.folder = st.mode & 0o777;
            if ((st.mode & 0o077) !== 0) exposed.add(`${rel} ${(st.mode & 0o777).toString(8)}`);
          }
          if (st.isFile() && path.basename(file) === 'pwfile') {
            seen.pwfile = st.mode & 0o777;
            // Another user tries to read it (we are root: spawn `cat` as nobody).
            if (seen.readByNobody === undefined && process.getuid?.() === 0) {
              seen.readByNobody = spawnSync('cat', [file], { uid: NOBODY, gid: NOBODY, stdio: 'ignore' }).status;
            }
          }
        }
        for (const name of readdirSync(tmp)) {
          if (name.startsWith('pg-password-') && !leakedBefore.has(name)) exposed.add(`${tmp}/${name}`);
        }
        await new Promise((r) => setImmediate(r));
      }
    };
    const polling = poll();
    const db = await startEmbeddedPostgres({ dataDir });
    running = false;
    await polling;
    try {
      expect([...exposed]).toEqual([]);
      // The poll did see the password file and its folder (so the check above is not vacuous).
      expect(polls).toBeGreaterThan(10);
      expect(seen.folder).toBe(0o700);
      expect(seen.pwfile).toBe(0o600);
      if (process.getuid?.() === 0) expect(seen.readByNobody).not.toBe(0);
      // Gone after initdb; the state file (both passwords) stays 0600.
      expect(readdirSync(dataDir).filter((n) => n.startsWith(INITDB_FOLDER_PREFIX))).toEqual([]);
      expect(statSync(path.join(dataDir, 'postgres.json')).mode & 0o777).toBe(0o600);
      expect(statSync(path.join(dataDir, 'postgres')).mode & 0o077).toBe(0);
    } finally {
      await db.stop();
    }
    expect(statSync(path.join(dataDir, 'postgres.json')).mode & 0o777).toBe(0o600);
  });

  it('connects the server as an application role that owns its database and is not a superuser', async () => {
    const dataDir = tempDataDir();
    const db = await startEmbeddedPostgres({ dataDir });
    try {
      expect(new URL(db.url).username).toBe(APP_ROLE);
      const core = await createCore(makeSettings({ databaseUrl: db.url }));
      const made = await core.pushes.create({ payload: 'owned by the app' }, ctx());
      expect((await core.pushes.retrieve(made.url_token, undefined, ctx())).payload).toBe('owned by the app');
      await core.close();

      await withClient(db.url, async (c) => {
        const role = await c.query(
          `SELECT rolsuper, rolcreatedb, rolcreaterole, rolreplication, rolbypassrls,
                  pg_has_role(current_user, 'pg_execute_server_program', 'MEMBER') AS programs,
                  pg_has_role(current_user, 'pg_read_server_files', 'MEMBER') AS reads,
                  pg_has_role(current_user, 'pg_write_server_files', 'MEMBER') AS writes
             FROM pg_roles WHERE rolname = current_user`,
        );
        expect(role.rows).toEqual([
          {
            rolsuper: false,
            rolcreatedb: false,
            rolcreaterole: false,
            rolreplication: false,
            rolbypassrls: false,
            programs: false,
            reads: false,
            writes: false,
          },
        ]);
        // What a superuser could do through an injected statement is refused.
        await expect(c.query("COPY pushes FROM PROGRAM 'id'")).rejects.toMatchObject({ code: '42501' });
        await expect(c.query("SELECT pg_read_file('/etc/passwd')")).rejects.toMatchObject({ code: '42501' });
        await expect(c.query('CREATE ROLE intruder SUPERUSER')).rejects.toMatchObject({ code: '42501' });
        // Migrations ran as the owner: it owns the schema and every table in it.
        const owners = await c.query<{ owner: string }>(
          `SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public'
           UNION SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = 'public'
           UNION SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()`,
        );
        expect(owners.rows).toEqual([{ owner: APP_ROLE }]);
      });
    } finally {
      await db.stop();
    }
  });

  it('hands a data dir made before the application role over to it on start, pushes kept', async () => {
    const dataDir = tempDataDir();
    // Make an old-style data dir: the database, its schema and tables owned by postgres, the server connected as
    // postgres, and a state file holding only the superuser's password.
    const made = await startEmbeddedPostgres({ dataDir, database: 'legacy' });
    const superLegacy = withDatabase(made.adminUrl, 'legacy');
    await withClient(made.adminUrl, async (c) => {
      await c.query('ALTER DATABASE legacy OWNER TO postgres');
    });
    await withClient(superLegacy, async (c) => {
      await c.query('ALTER SCHEMA public OWNER TO pg_database_owner');
      await c.query(`DROP OWNED BY ${APP_ROLE}`);
    });
    await withClient(made.adminUrl, (c) => c.query(`DROP ROLE ${APP_ROLE}`));
    await migrateDatabase(superLegacy);
    const old = await createCore(makeSettings({ databaseUrl: superLegacy }));
    const pushes = [];
    for (let i = 0; i < 3; i++)
      pushes.push(await old.pushes.create({ payload: `legacy secret ${i}`, expire_after_views: 2 }, ctx()));
    await old.close();
    await withClient(superLegacy, async (c) => {
      const owners = await c.query(
        `SELECT DISTINCT pg_get_userbyid(relowner) AS owner FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public'`,
      );
      expect(owners.rows).toEqual([{ owner: 'postgres' }]);
    });
    await made.stop();
    const stateFile = path.join(dataDir, 'postgres.json');
    const { password } = JSON.parse(readFileSync(stateFile, 'utf8')) as { password: string };
    writeFileSync(stateFile, JSON.stringify({ password }), { mode: 0o600 });

    const db = await startEmbeddedPostgres({ dataDir, database: 'legacy' });
    try {
      expect(new URL(db.url).username).toBe(APP_ROLE);
      expect(statSync(stateFile).mode & 0o777).toBe(0o600);
      const core = await createCore(makeSettings({ databaseUrl: db.url }));
      try {
        for (const [i, p] of pushes.entries()) {
          expect((await core.pushes.retrieve(p.url_token, undefined, ctx())).payload).toBe(`legacy secret ${i}`);
        }
        // Writes work too (an update of a handed-over table, an insert with its trigger).
        await core.pushes.expire(pushes[0]!.url_token, ctx());
        await core.pushes.create({ payload: 'new one' }, ctx());
      } finally {
        await core.close();
      }
      await withClient(db.url, async (c) => {
        expect((await c.query('SELECT rolsuper FROM pg_roles WHERE rolname = current_user')).rows).toEqual([
          { rolsuper: false },
        ]);
        const notOurs = await c.query(
          `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE n.nspname = 'public' AND pg_get_userbyid(c.relowner) <> current_user
           UNION ALL SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
            WHERE n.nspname = 'public' AND pg_get_userbyid(p.proowner) <> current_user`,
        );
        expect(notOurs.rows).toEqual([]);
        expect((await c.query('SELECT count(*)::int AS n FROM pushes')).rows).toEqual([{ n: 4 }]);
      });
    } finally {
      await db.stop();
    }
  });
});

describe('DATABASE_URL', () => {
  it('works with exactly the grants docs/operations.md lists, and warns (without the URL or password) when the role is a superuser', async () => {
    const suffix = randomBytes(4).toString('hex');
    const role = `sp_grants_${suffix}`;
    const database = `sp_grants_${suffix}`;
    const password = randomBytes(18).toString('base64url');
    // The recipe of docs/operations.md ("The database role"), as an administrator:
    await withClient(adminUrl(), async (c) => {
      await c.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
      await c.query(`CREATE DATABASE ${database}`);
      await c.query(`REVOKE ALL ON DATABASE ${database} FROM PUBLIC`);
      await c.query(`GRANT CONNECT ON DATABASE ${database} TO ${role}`);
    });
    await withClient(withDatabase(adminUrl(), database), async (c) => {
      await c.query(`REVOKE ALL ON SCHEMA public FROM PUBLIC`);
      await c.query(`GRANT USAGE, CREATE ON SCHEMA public TO ${role}`);
      await c.query(`CREATE SCHEMA pgboss AUTHORIZATION ${role}`);
    });
    const url = withDatabase(adminUrl(), database, { name: role, password });
    const warnings: string[] = [];
    const logger = {
      info: () => {},
      warn: (obj: object, msg: string) => warnings.push(`${msg} ${JSON.stringify(obj)}`),
      error: () => {},
    };
    try {
      const core = await createCore(makeSettings({ databaseUrl: url }), { logger });
      try {
        const made = await core.pushes.create({ payload: 'least privilege' }, ctx());
        expect((await core.pushes.retrieve(made.url_token, undefined, ctx())).payload).toBe('least privilege');
        const user = await core.users.createUser(`grants-${suffix}@example.com`);
        expect(await core.users.authenticate(user.token)).toMatchObject({ email: `grants-${suffix}@example.com` });
        expect(await core.sweep()).toMatchObject({ erasedPushes: expect.any(Number) });
      } finally {
        await core.close();
      }
      expect(warnings.filter((w) => /superuser/.test(w))).toEqual([]);

      // The test cluster's admin is a superuser: the same start warns, naming no secret.
      const superCore = await createCore(makeSettings({ databaseUrl: withDatabase(adminUrl(), database) }), { logger });
      await superCore.close();
      const warning = warnings.find((w) => /superuser/.test(w));
      expect(warning).toBeDefined();
      const adminPassword = decodeURIComponent(new URL(adminUrl()).password);
      expect(warning).not.toContain(adminPassword);
      expect(warning).not.toMatch(/postgres(ql)?:\/\//);
    } finally {
      await withClient(adminUrl(), async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await c.query(`DROP ROLE IF EXISTS ${role}`);
      });
    }
  });
});
