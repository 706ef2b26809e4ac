/**
 * The limits a request's create is counted against (issue 45): the requester's storage quota, shared with the
 * requester's pushes (`PWPUSH_USER_STORAGE`, worded by ../push/storage-quota.ts), and the requests a user may have
 * open at once (`PWPUSH_USER_OPEN_REQUESTS`). The counting is SQL (request-repository.ts `insertCounted`); this module
 * says which limits are on and words their answers: the 201's and the 429's RateLimit fields, and the refusals.
 */
import { ApiError, rateLimitFields, type LimitState } from '@secret-push/rules';
import type { Settings } from '../config/settings.js';
import { largerThanQuota, quotaExceeded, storageFields } from '../push/storage-quota.js';
import type { CountedCreate, CreateLimits } from './request-repository.js';

/** Retry-After when nothing expires by time to free a place or space (only while the user's requests change under it). */
const FALLBACK_RETRY_SECONDS = 3600;

/** Where a stored request left its requester in each limit that is on. */
export interface RequestLimitsState {
  bytes?: { limit: number; remaining: number };
  open?: { limit: number; remaining: number };
}

/** The limits that are on for a create by a user. */
export function createLimits(settings: Pick<Settings, 'userStorageBytes' | 'userOpenRequests'>): CreateLimits {
  return {
    bytes: settings.userStorageBytes > 0 ? settings.userStorageBytes : null,
    open: settings.userOpenRequests > 0 ? settings.userOpenRequests : null,
  };
}

/** A request larger than the whole storage quota never fits: 413, before anything is written. */
export function checkFits(limits: CreateLimits, storedBytes: number): void {
  if (limits.bytes !== null && storedBytes > limits.bytes)
    throw largerThanQuota('user', storedBytes, limits.bytes, 'request');
}

function openRequestsLimit(limit: number, remaining: number, resetSeconds?: number): LimitState {
  return {
    policy: 'open-requests',
    quota: limit,
    remaining,
    ...(resetSeconds !== undefined ? { resetSeconds } : {}),
  };
}

const secondsUntil = (at: Date | null, now: Date): number =>
  at ? Math.max(1, Math.ceil((at.getTime() - now.getTime()) / 1000)) : FALLBACK_RETRY_SECONDS;

/** Where a stored request left its requester (for the 201's RateLimit fields); throws the refusal of a refused one. */
export function countedOrRefused(
  counted: CountedCreate,
  limits: CreateLimits,
  storedBytes: number,
  now: Date,
): RequestLimitsState {
  if (counted.stored) {
    return {
      ...(limits.bytes !== null ? { bytes: { limit: limits.bytes, remaining: limits.bytes - counted.usedBytes } } : {}),
      ...(limits.open !== null ? { open: { limit: limits.open, remaining: limits.open - counted.open } } : {}),
    };
  }
  const retryAfter = secondsUntil(counted.freeAt, now);
  if (counted.refusedBy === 'bytes')
    throw quotaExceeded('user', storedBytes, limits.bytes!, counted.usedBytes, retryAfter, 'request');
  throw new ApiError(
    'too_many_open_requests',
    `Too many open requests: an account may have at most ${limits.open} open requests at once. Nothing was stored. ` +
      'Revoke one you no longer need, or try again when one is answered or expires (Retry-After).',
    { retryAfterSeconds: retryAfter, limit: openRequestsLimit(limits.open!, 0, retryAfter) },
  );
}

/** The 201's RateLimit fields: the storage quota's item, then the open requests'. */
export function requestLimitFields(state: RequestLimitsState): Record<string, string> {
  const fields = [
    ...(state.bytes
      ? [storageFields({ quota: 'user', limit: state.bytes.limit, remaining: state.bytes.remaining })]
      : []),
    ...(state.open ? [rateLimitFields(openRequestsLimit(state.open.limit, state.open.remaining))] : []),
  ];
  if (fields.length === 0) return {};
  return {
    'RateLimit-Policy': fields.map((f) => f['RateLimit-Policy']).join(', '),
    RateLimit: fields.map((f) => f.RateLimit).join(', '),
  };
}
