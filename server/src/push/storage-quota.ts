/**
 * The storage quotas (issue 19), separate from the request limit: anonymous creators may store
 * `PWPUSH_ANONYMOUS_STORAGE_PER_HOUR` bytes of secrets per client address per clock hour, and each user's active
 * pushes and open requests may hold `PWPUSH_USER_STORAGE` bytes (issue 45). What counts is a push's payload and file
 * contents, and a request's attachments, as sent. The counting itself is SQL (push-repository.ts: atomic, in the
 * statement or transaction that stores the push or the request); this module says which quota governs a create, and
 * words its answers: the 429's message, `Retry-After`, and the IETF `RateLimit-Policy` / `RateLimit` fields
 * (draft-ietf-httpapi-ratelimit-headers, quota unit `content-bytes`). An answer to a request is counted against its
 * requester's quota, but told nothing of the requester's usage: its refusals are words of their own.
 */
import { ApiError, rateLimitFields, type LimitState } from '@secret-push/rules';
import { clientAddressKey } from '../client-address.js';
import type { Settings } from '../config/settings.js';
import type { AddressQuota } from './address-leases.js';
import { STORAGE_WINDOW_MS, storageWindowStart } from './push-repository.js';

export type StorageQuotaName = 'anonymous' | 'user';

/** Where a create stands against the quota that governs it, for its `RateLimit` fields. */
export interface StorageQuotaState {
  quota: StorageQuotaName;
  limit: number;
  remaining: number;
  /** Seconds until the quota's window starts again (anonymous), or until the refused push would fit (user). */
  resetSeconds?: number;
}

/** The policy names in `RateLimit-Policy` / `RateLimit`. */
const STORAGE_POLICY: Record<StorageQuotaName, string> = { anonymous: 'anonymous-storage', user: 'user-storage' };

/** The quota a create by this caller counts against; null when it is off. */
export function governingQuota(
  settings: Pick<Settings, 'anonymousStoragePerHour' | 'userStorageBytes'>,
  userId: string | null,
): StorageQuotaName | null {
  if (userId) return settings.userStorageBytes > 0 ? 'user' : null;
  return settings.anonymousStoragePerHour > 0 ? 'anonymous' : null;
}

/** The anonymous window a create at `now` from `ip` is counted in. */
export function addressQuota(settings: Pick<Settings, 'anonymousStoragePerHour'>, ip: string, now: Date): AddressQuota {
  return {
    scope: `addr:${clientAddressKey(ip)}`.slice(0, 80),
    windowStart: storageWindowStart(now),
    limit: settings.anonymousStoragePerHour,
  };
}

/** Seconds from `now` until the anonymous window `now` falls in is over (at least 1). */
export function windowResetSeconds(now: Date): number {
  return Math.max(1, Math.ceil((storageWindowStart(now).getTime() + STORAGE_WINDOW_MS - now.getTime()) / 1000));
}

/** A quota's state as the limit it is (the RateLimit fields are written from it). */
function storageLimit(state: StorageQuotaState): LimitState {
  return {
    policy: STORAGE_POLICY[state.quota],
    quota: state.limit,
    unit: 'content-bytes',
    ...(state.quota === 'anonymous' ? { windowSeconds: STORAGE_WINDOW_MS / 1000 } : {}),
    remaining: state.remaining,
    ...(state.resetSeconds !== undefined ? { resetSeconds: state.resetSeconds } : {}),
  };
}

/** The RateLimit fields of a create's quota state. */
export function storageFields(state: StorageQuotaState): ReturnType<typeof rateLimitFields> {
  return rateLimitFields(storageLimit(state));
}

/** Bytes in the unit people read (`512 B`, `3.5 KiB`, `100 MiB`, `1 GiB`). */
function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const text = unit === 0 || Number.isInteger(value) ? String(value) : value.toFixed(1).replace(/\.0$/, '');
  return `${text} ${units[unit]}`;
}

/** What a create stores: a push, or a request (its attachments; only users make requests). */
export type StoredThing = 'push' | 'request';

/** A push or request larger than the whole quota can never fit: 413, not a 429 whose Retry-After would not hold. */
export function largerThanQuota(
  name: StorageQuotaName,
  size: number,
  limit: number,
  thing: StoredThing = 'push',
): ApiError {
  const which =
    name === 'anonymous'
      ? `the storage quota of anonymous pushes (${formatBytes(limit)} per address per hour)`
      : `your storage quota (${formatBytes(limit)} of active pushes and open requests)`;
  return new ApiError('payload_too_large', `This ${thing} stores ${formatBytes(size)}, more than ${which}.`);
}

/** The 429 of a create over its quota: which quota, how much is used, when to retry; its RateLimit fields. */
export function quotaExceeded(
  name: StorageQuotaName,
  size: number,
  limit: number,
  used: number,
  retryAfterSeconds: number,
  thing: StoredThing = 'push',
): ApiError {
  const message =
    name === 'anonymous'
      ? `Storage quota exceeded: anonymous pushes from one address may store at most ${formatBytes(limit)} per hour; ` +
        `${formatBytes(used)} were stored this hour and this push needs ${formatBytes(size)}. Nothing was stored. ` +
        'Try again when the hour is over (Retry-After), or use an API token.'
      : thing === 'push'
        ? `Storage quota exceeded: your active pushes may hold at most ${formatBytes(limit)}; ` +
          `they hold ${formatBytes(used)} and this push needs ${formatBytes(size)} ` +
          "(your open requests' attachments count too). Nothing was stored. " +
          'Expire pushes or revoke requests you no longer need, or try again when enough have expired (Retry-After).'
        : `Storage quota exceeded: your active pushes and open requests may hold at most ${formatBytes(limit)}; ` +
          `they hold ${formatBytes(used)} and this request needs ${formatBytes(size)}. Nothing was stored. ` +
          'Revoke requests or expire pushes you no longer need, or try again when enough have expired (Retry-After).';
  const state: StorageQuotaState = {
    quota: name,
    limit,
    remaining: Math.max(0, limit - used),
    resetSeconds: retryAfterSeconds,
  };
  return new ApiError('storage_quota_exceeded', message, {
    retryAfterSeconds,
    limit: storageLimit(state),
    reason: name,
  });
}

/**
 * Retry-After of an answer that does not fit its requester's quota: a fixed hour, not the instant the requester's
 * pushes expire (which would tell a stranger about the requester's secrets).
 */
const ANSWER_RETRY_SECONDS = 3600;

/** An answer larger than its requester's whole quota (the quota is public: the version report gives it). */
export function answerLargerThanQuota(size: number, limit: number): ApiError {
  return new ApiError(
    'payload_too_large',
    `This answer stores ${formatBytes(size)}, more than the requester's storage quota (${formatBytes(limit)}) can ever hold. Nothing was stored.`,
  );
}

/**
 * An answer that does not fit its requester's quota now: 429 with the answer's own size only, never what the
 * requester holds or has left (no RateLimit item), and a fixed Retry-After.
 */
export function answerDoesNotFit(size: number): ApiError {
  return new ApiError(
    'storage_quota_exceeded',
    `This answer (${formatBytes(size)}) does not fit in the requester's storage quota right now. Nothing was stored. ` +
      'Let the requester know, or try again later (Retry-After).',
    { retryAfterSeconds: ANSWER_RETRY_SECONDS, reason: 'user' },
  );
}
