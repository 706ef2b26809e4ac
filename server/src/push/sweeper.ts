/**
 * The sweeper: erases the secrets of pushes past their time, deletes file bytes whose download links have lapsed,
 * forgets old passphrase and sign-in attempts and (when configured) purges old expired records. Every step is a set
 * of idempotent statements over rows picked with FOR UPDATE SKIP LOCKED, so any number of instances may sweep at
 * once. It reports counts only; nothing secret is ever logged.
 */
import { ATTEMPT_WINDOW_MS, DAY_MS, LINK_LIFETIME_MS } from '@secret-push/rules';
import type { Settings } from '../config/settings.js';
import type { PushRepository, WithinChange } from './push-repository.js';

export interface SweepResult {
  erasedPushes: number;
  erasedFiles: number;
  purgedPushes: number;
}

export interface SweepDeps {
  pushes: PushRepository;
  /** Pending requests past their time become expired (with their audit entries and events). */
  requests?: { sweep(now: Date): Promise<number> };
  /** Forgets sign-in attempts older than the given instant (the account area owns them). */
  forgetLoginAttempts(now: Date): Promise<void>;
  settings: Pick<Settings, 'purgeExpiredAfterDays'>;
  /** In the transaction of each batch, for every push it expired (their `push.expired` events). */
  expired?: WithinChange;
}

export async function sweep(
  { pushes, requests, forgetLoginAttempts, settings, expired }: SweepDeps,
  now: Date = new Date(),
): Promise<SweepResult> {
  // 1. Pushes past their time: mark expired (as of their expires_at) and erase payload, note and passphrase hash.
  const erasedPushes = await pushes.sweepPastTime(now, expired);
  // 2. File bytes of expired pushes whose links (issued at most LINK_LIFETIME_MS before expiry) have lapsed.
  const erasedFiles = await pushes.sweepLapsedFiles(new Date(now.getTime() - LINK_LIFETIME_MS));
  // 3. Passphrase and sign-in attempts older than their windows count for nothing any more.
  await pushes.forgetAttempts(new Date(now.getTime() - 2 * ATTEMPT_WINDOW_MS));
  await pushes.forgetKeys(now);
  await pushes.forgetStorageWindows(now);
  await forgetLoginAttempts(now);
  await requests?.sweep(now);
  // 4. Optional purge of old expired records (their audit entries and files go with them).
  const purgedPushes =
    settings.purgeExpiredAfterDays === null
      ? 0
      : await pushes.purgeExpired(new Date(now.getTime() - settings.purgeExpiredAfterDays * DAY_MS));
  return { erasedPushes, erasedFiles, purgedPushes };
}
