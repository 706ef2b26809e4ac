/**
 * The sweeper: erases the secrets of pushes past their time, deletes file bytes whose download links have lapsed,
 * forgets old passphrase attempts and (when configured) purges old expired records. Every step is a set of
 * idempotent statements over rows picked with FOR UPDATE SKIP LOCKED, so any number of instances may sweep at once.
 * It reports counts only; nothing secret is ever logged.
 */
import { LOGIN_WINDOW_MS } from './account-service.js';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import type { Settings } from './contract.js';
import { ATTEMPT_WINDOW_MS, FILE_GRACE_MS } from './push-service.js';

const BATCH = 500;

export interface SweepResult {
  erasedPushes: number;
  erasedFiles: number;
  purgedPushes: number;
}

export async function sweep(orm: MikroORM, settings: Settings, now: Date = new Date()): Promise<SweepResult> {
  const em = orm.em.fork() as EntityManager;
  let erasedPushes = 0;
  let erasedFiles = 0;
  let purgedPushes = 0;

  // 1. Pushes past their time: mark expired (as of their expires_at) and erase payload, note and passphrase hash.
  for (;;) {
    const rows = await em.execute<{ id: string }[]>(
      `update pushes set expired = true, expired_on = expires_at, updated_at = ?,
         payload_ciphertext = null, note_ciphertext = null, passphrase_hash = null
       where id in (
         select id from pushes where not expired and expires_at <= ?
         order by expires_at limit ${BATCH} for update skip locked)
       returning id`,
      [now, now],
    );
    erasedPushes += rows.length;
    if (rows.length < BATCH) break;
  }

  // 2. File bytes of expired pushes whose links (at most FILE_GRACE_MS old at expiry) have lapsed.
  const fileCutoff = new Date(now.getTime() - FILE_GRACE_MS);
  for (;;) {
    const rows = await em.execute<{ id: string }[]>(
      `delete from push_files where id in (
         select f.id from push_files f join pushes p on p.id = f.push_id
         where p.expired and p.expired_on <= ?
         limit ${BATCH} for update of f skip locked)
       returning id`,
      [fileCutoff],
    );
    erasedFiles += rows.length;
    if (rows.length < BATCH) break;
  }

  // 3. Passphrase and sign-in attempts older than their windows count for nothing any more.
  await em.execute('delete from passphrase_attempts where attempted_at < ?', [new Date(now.getTime() - 2 * ATTEMPT_WINDOW_MS)]);
  await em.execute('delete from login_attempts where attempted_at < ?', [new Date(now.getTime() - 2 * LOGIN_WINDOW_MS)]);

  // 4. Optional purge of old expired records (their audit entries and files go with them).
  if (settings.purgeExpiredAfterDays !== null) {
    const cutoff = new Date(now.getTime() - settings.purgeExpiredAfterDays * 24 * 60 * 60 * 1000);
    for (;;) {
      const rows = await em.execute<{ id: string }[]>(
        `delete from pushes where id in (
           select id from pushes where expired and expired_on <= ?
           limit ${BATCH} for update skip locked)
         returning id`,
        [cutoff],
      );
      purgedPushes += rows.length;
      if (rows.length < BATCH) break;
    }
  }
  return { erasedPushes, erasedFiles, purgedPushes };
}
