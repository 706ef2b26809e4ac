/**
 * Moves file bytes between PostgreSQL and the object store (`npm run files -- migrate --to s3|postgres`,
 * ../cli/files.ts), one file at a time, each committed on its own: stopped anywhere, it starts again where it was (the
 * files still on the other side), and servers keep serving meanwhile (a row is read from where it says its bytes are).
 *
 * Every file is verified by the SHA-256 of its plaintext: read from where it is, sealed and written to the other side,
 * read back from there and opened, hashed again; only when both hashes agree is the row switched (to s3: `content` is
 * cleared and `object_key` set, in one conditional UPDATE) or kept switched (to postgres: the UPDATE writing `content`
 * commits only after the row's new envelope was read back and matched). The other side's copy is deleted after the
 * commit. A file that does not verify, or whose bytes are missing, is counted and left where it was.
 */
import { createHash } from 'node:crypto';
import { sql, type Db } from '../db/sql.js';
import type { Keyring } from '../crypto/envelope.js';
import type { FileArea, FileObjects } from './file-objects.js';

export type MigrationTarget = 's3' | 'postgres';

export interface MigrationReport {
  moved: number;
  /** Files that did not verify, or whose bytes could not be found: left where they were. */
  failed: number;
}

interface AreaTable {
  area: FileArea;
  table: string;
}

const AREAS: AreaTable[] = [
  { area: 'push', table: 'push_files' },
  { area: 'request', table: 'request_files' },
];

const BATCH = 20;

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function statements(table: string) {
  return {
    inPostgres: sql<{ after: string; limit: number }, { id: string; content: Buffer }>(
      `select id, content from ${table} where content is not null and id > :after order by id limit :limit`,
    ),
    inStore: sql<{ after: string; limit: number }, { id: string; object_key: string }>(
      `select id, object_key from ${table} where object_key is not null and id > :after order by id limit :limit`,
    ),
    toStore: sql<{ id: string; key: string }, { id: string }>(
      `update ${table} set content = null, object_key = :key where id = :id and content is not null returning id`,
    ),
    toPostgres: sql<{ id: string; key: string; content: Buffer }, { content: Buffer }>(
      `update ${table} set content = :content, object_key = null where id = :id and object_key = :key returning content`,
    ),
  };
}

/** Moves every file of every area to `to`; `out` gets a line per area (counts only). */
export async function migrateFiles(
  db: Db,
  keyring: Keyring,
  files: FileObjects,
  to: MigrationTarget,
  out: (line: string) => void = () => undefined,
): Promise<MigrationReport> {
  const report: MigrationReport = { moved: 0, failed: 0 };
  for (const { area, table } of AREAS) {
    const before = { ...report };
    const aad = (id: string) => `${table}.content:${id}`;
    const S = statements(table);
    let after = '';
    for (;;) {
      const batch =
        to === 's3'
          ? await db.query(S.inPostgres, { after, limit: BATCH })
          : await db.query(S.inStore, { after, limit: BATCH });
      for (const row of batch) {
        const ok =
          to === 's3'
            ? await toStore(db, keyring, files, S, area, row as { id: string; content: Buffer }, aad(row.id))
            : await toPostgres(db, keyring, files, S, row as { id: string; object_key: string }, aad(row.id));
        if (ok) report.moved++;
        else report.failed++;
      }
      if (batch.length < BATCH) break;
      after = batch[batch.length - 1]!.id;
    }
    out(`${table}: ${report.moved - before.moved} moved to ${to}, ${report.failed - before.failed} failed`);
  }
  return report;
}

async function toStore(
  db: Db,
  keyring: Keyring,
  files: FileObjects,
  S: ReturnType<typeof statements>,
  area: FileArea,
  row: { id: string; content: Buffer },
  aad: string,
): Promise<boolean> {
  const plain = keyring.decrypt(row.content, aad);
  const key = files.keyFor(area, row.id);
  await files.storeBytes(key, aad, plain);
  const back = await files.read(key, aad);
  if (!back || sha256(back) !== sha256(plain)) {
    await files.remove([key]);
    return false;
  }
  const switched = await db.query(S.toStore, { id: row.id, key });
  // The file was deleted (or moved by another run) meanwhile: its object goes.
  if (switched.length === 0) await files.remove([key]);
  return switched.length > 0;
}

async function toPostgres(
  db: Db,
  keyring: Keyring,
  files: FileObjects,
  S: ReturnType<typeof statements>,
  row: { id: string; object_key: string },
  aad: string,
): Promise<boolean> {
  const plain = await files.read(row.object_key, aad);
  if (!plain) return false;
  const hash = sha256(plain);
  const switched = await db
    .transaction(async (tx) => {
      const [written] = await tx.query(S.toPostgres, {
        id: row.id,
        key: row.object_key,
        content: keyring.encrypt(plain, aad),
      });
      if (!written) return false;
      // Read back as stored, before the commit: a row that does not give the same plaintext is not switched.
      if (sha256(keyring.decrypt(Buffer.from(written.content), aad)) !== hash) throw new MigrationMismatch();
      return true;
    })
    .catch((error: unknown) => {
      if (error instanceof MigrationMismatch) return false;
      throw error;
    });
  if (switched) await files.remove([row.object_key]);
  return switched;
}

class MigrationMismatch extends Error {}
