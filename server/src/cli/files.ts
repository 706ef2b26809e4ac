/**
 * `npm run files -- migrate --to s3|postgres`: moves file bytes between PostgreSQL and the object store of
 * PWPUSH_FILE_STORAGE (../files/migrate.ts), on the same settings and data dir as the server. Both directions need the
 * store's settings (PWPUSH_FILE_STORAGE=s3://…, PWPUSH_S3_*): to go back to PostgreSQL, run it with them before (and
 * once more after) switching the servers to `postgres` (docs/object-storage.md). Resumable: run it again after a stop.
 * Prints counts only.
 */
import { ApiError } from '@secret-push/rules';
import { loadSettings, SettingsError, type Settings } from '../config/settings.js';
import { createKeyring } from '../crypto/envelope.js';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../db/embedded.js';
import { migrateDatabase, nativePool, openOrm } from '../db/orm.js';
import { poolDb } from '../db/sql.js';
import { FileObjects } from '../files/file-objects.js';
import { migrateFiles, type MigrationTarget } from '../files/migrate.js';
import { openObjectStore } from '../files/object-store.js';
import { runWhenMain } from './run-main.js';

const USAGE = `usage: npm run files -- migrate --to s3
       npm run files -- migrate --to postgres

  migrate --to s3        move every file's bytes from PostgreSQL to the object store of PWPUSH_FILE_STORAGE
  migrate --to postgres  move them back into PostgreSQL (PWPUSH_FILE_STORAGE must still name the store)

Each file is moved and committed on its own, verified by the SHA-256 of its plaintext read back from its new place;
run it again to finish after a stop. Servers keep serving meanwhile.`;

export async function runFilesCli(
  argv: string[],
  out: (line: string) => void,
  err: (line: string) => void,
  env = process.env,
): Promise<number> {
  if (argv.includes('-h') || argv.includes('--help')) {
    out(USAGE);
    return 0;
  }
  const [command, flag, to, ...rest] = argv;
  if (command !== 'migrate' || flag !== '--to' || (to !== 's3' && to !== 'postgres') || rest.length > 0) {
    err(USAGE);
    return 2;
  }
  let settings: Settings;
  try {
    settings = loadSettings(env);
  } catch (e) {
    if (e instanceof SettingsError) {
      err(`configuration error: ${e.message}`);
      return 1;
    }
    throw e;
  }
  const storage = settings.fileStorage;
  if (storage.kind !== 's3') {
    err(
      'configuration error: set PWPUSH_FILE_STORAGE=s3://bucket/prefix (and PWPUSH_S3_*) to the store to move files to or from',
    );
    return 1;
  }
  let embedded: EmbeddedDatabase | null = null;
  try {
    if (!settings.databaseUrl) {
      embedded = await startEmbeddedPostgres({ dataDir: settings.dataDir });
      settings = { ...settings, databaseUrl: embedded.url };
    }
    await migrateDatabase(settings.databaseUrl!);
    const orm = await openOrm(settings.databaseUrl!, { poolMax: 2 });
    const store = await openObjectStore(storage);
    try {
      const keyring = createKeyring(settings.masterKeys);
      const files = new FileObjects(store, keyring);
      const report = await migrateFiles(poolDb(await nativePool(orm)), keyring, files, to as MigrationTarget, out);
      out(`${report.moved} file(s) moved to ${to} (${store.location}), ${report.failed} failed`);
      return report.failed > 0 ? 1 : 0;
    } finally {
      store.close();
      await orm.close(true);
    }
  } catch (e) {
    err(`error: ${e instanceof ApiError || e instanceof Error ? e.message : String(e)}`);
    return 1;
  } finally {
    await embedded?.stop().catch(() => undefined);
  }
}

runWhenMain(import.meta.url, 'files.ts', runFilesCli);
