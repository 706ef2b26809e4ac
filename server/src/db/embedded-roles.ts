/**
 * The application role on the embedded cluster: the role the server connects as (`secret_push_app`, no superuser),
 * the database it owns and every object in it handed over to it, and the URLs of the role and of the superuser.
 */
import pg from 'pg';
import { QUEUE_SCHEMA } from '../jobs/queue.js';
import { type StateFile, USER } from './embedded-cluster.js';

/** The role the server connects as: owns the application database and its objects, nothing more. */
export const APP_ROLE = 'secret_push_app';

/**
 * As the superuser: the application role (made, or its password and attributes set again), the database it owns
 * (made, or handed over), and in that database the schemas `public` and `pgboss` (the job queue's) and every object
 * in them handed over to the role.
 * Idempotent; runs under the start lock.
 */
/** The schemas whose objects the application role owns: ours, and the job queue's (server/src/jobs/queue.ts). */
const HANDED_SCHEMAS = ['public', QUEUE_SCHEMA];

export async function ensureApplication(
  port: number,
  state: Required<Pick<StateFile, 'password' | 'appPassword'>>,
  database: string,
): Promise<void> {
  const admin = new pg.Client({ host: '127.0.0.1', port, user: USER, password: state.password, database: 'postgres' });
  await admin.connect();
  const role = admin.escapeIdentifier(APP_ROLE);
  try {
    const attributes = `LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS NOINHERIT PASSWORD ${admin.escapeLiteral(state.appPassword)}`;
    const exists = await admin.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [APP_ROLE]);
    await admin.query(`${exists.rowCount === 0 ? 'CREATE' : 'ALTER'} ROLE ${role} WITH ${attributes}`);
    // Nothing granted to it through another role (pg_execute_server_program, pg_read_server_files, …).
    const memberships = await admin.query<{ name: string }>(
      'SELECT r.rolname AS name FROM pg_auth_members m JOIN pg_roles r ON r.oid = m.roleid JOIN pg_roles u ON u.oid = m.member WHERE u.rolname = $1',
      [APP_ROLE],
    );
    for (const { name } of memberships.rows) await admin.query(`REVOKE ${admin.escapeIdentifier(name)} FROM ${role}`);

    const found = await admin.query<{ owner: string }>(
      'SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1',
      [database],
    );
    const db = admin.escapeIdentifier(database);
    if (found.rowCount === 0) await admin.query(`CREATE DATABASE ${db} OWNER ${role}`);
    else if (found.rows[0]!.owner !== APP_ROLE) await admin.query(`ALTER DATABASE ${db} OWNER TO ${role}`);
  } finally {
    await admin.end();
  }

  const inDb = new pg.Client({ host: '127.0.0.1', port, user: USER, password: state.password, database });
  await inDb.connect();
  try {
    await inDb.query('BEGIN');
    await inDb.query(`ALTER SCHEMA public OWNER TO ${role}`);
    // The job queue's schema too, when the superuser made it (a server that connected as postgres).
    const queueSchema = await inDb.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [QUEUE_SCHEMA]);
    if (queueSchema.rowCount) await inDb.query(`ALTER SCHEMA ${inDb.escapeIdentifier(QUEUE_SCHEMA)} OWNER TO ${role}`);
    // Tables (with their indexes, triggers and column sequences), views, then what is left: sequences, functions, types.
    const relations = await inDb.query<{ kind: string; name: string }>(
      `SELECT c.relkind AS kind, format('%I.%I', n.nspname, c.relname) AS name
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ANY($2) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND pg_get_userbyid(c.relowner) <> $1`,
      [APP_ROLE, HANDED_SCHEMAS],
    );
    const keyword: Record<string, string> = {
      r: 'TABLE',
      p: 'TABLE',
      v: 'VIEW',
      m: 'MATERIALIZED VIEW',
      f: 'FOREIGN TABLE',
    };
    for (const { kind, name } of relations.rows) await inDb.query(`ALTER ${keyword[kind]} ${name} OWNER TO ${role}`);
    const sequences = await inDb.query<{ name: string }>(
      `SELECT format('%I.%I', n.nspname, c.relname) AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = ANY($2) AND c.relkind = 'S' AND pg_get_userbyid(c.relowner) <> $1`,
      [APP_ROLE, HANDED_SCHEMAS],
    );
    for (const { name } of sequences.rows) await inDb.query(`ALTER SEQUENCE ${name} OWNER TO ${role}`);
    const functions = await inDb.query<{ name: string; kind: string }>(
      `SELECT p.oid::regprocedure::text AS name, p.prokind AS kind FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = ANY($2) AND pg_get_userbyid(p.proowner) <> $1`,
      [APP_ROLE, HANDED_SCHEMAS],
    );
    for (const { name, kind } of functions.rows) {
      await inDb.query(
        `ALTER ${kind === 'p' ? 'PROCEDURE' : kind === 'a' ? 'AGGREGATE' : 'FUNCTION'} ${name} OWNER TO ${role}`,
      );
    }
    // Enums, domains, ranges and free-standing composite types (a table's row type follows its table).
    const types = await inDb.query<{ name: string }>(
      `SELECT format('%I.%I', n.nspname, t.typname) AS name FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
        WHERE n.nspname = ANY($2) AND pg_get_userbyid(t.typowner) <> $1 AND t.typelem = 0
          AND (t.typtype IN ('e', 'd', 'r') OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c'))`,
      [APP_ROLE, HANDED_SCHEMAS],
    );
    for (const { name } of types.rows) await inDb.query(`ALTER TYPE ${name} OWNER TO ${role}`);
    await inDb.query('COMMIT');
  } catch (err) {
    await inDb.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await inDb.end();
  }
}

export async function canConnect(port: number, password: string): Promise<boolean> {
  const client = new pg.Client({
    host: '127.0.0.1',
    port,
    user: USER,
    password,
    database: 'postgres',
    connectionTimeoutMillis: 3000,
  });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function urlFor(user: string, port: number, password: string, database: string): string {
  return `postgres://${user}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}
