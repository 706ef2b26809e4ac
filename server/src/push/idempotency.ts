/**
 * Idempotent creates (the IETF httpapi Idempotency-Key draft, as payment APIs use it). The same key from the same
 * caller with the same body within 24 hours answers as the first request did (same status, same push, a header saying
 * it is a replay) and creates nothing; the same key with another body answers 422; the same key while the first
 * request is still in flight answers 409. Keys live in PostgreSQL, so this holds across instances; the key row keeps
 * the push's id, never a secret (a replay is answered from the push itself). A create that fails lets its key go, so
 * a corrected request can use it.
 */
import { createHash } from 'node:crypto';
import { ApiError } from '@secret-push/rules';
import { clientAddressKey } from '../client-address.js';
import { QUERY_TIMEOUT_MS } from '../db/deadlines.js';
import type { KeyRef, PushRepository } from './push-repository.js';

export const KEY_LIFETIME_MS = 24 * 60 * 60 * 1000;
/**
 * A key still in flight after this long belongs to a request that died or gave up: a new request may take it over.
 * The create that claimed it had its deadline at most REQUEST_DEADLINE_MS after the claim, and a write that reaches
 * the database after its deadline changes nothing (push-repository.ts); QUERY_TIMEOUT_MS leaves the clocks' margin.
 * By then the key is either done (the create committed: a replay) or free: the Retry-After of a 409 says when.
 */
const ABANDONED_AFTER_MS = QUERY_TIMEOUT_MS;
const KEY_FORMAT = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyRequest {
  /** The Idempotency-Key header as sent. */
  key: string;
  /** SHA-256 of the request body as read. */
  fingerprint: string;
}

export type KeyOutcome = { kind: 'fresh'; ref: KeyRef } | { kind: 'replay'; pushId: string };

/** Who a key belongs to: the user, or (anonymous callers) the client address (an IPv6 /64 counts as one). */
export function keyScope(userId: string | null, ip: string): string {
  return userId ? `user:${userId}` : `addr:${clientAddressKey(ip)}`.slice(0, 80);
}

/** Presents the key: fresh (go on and create), a replay of a finished create, or an error (400, 409, 422). */
export async function presentKey(
  repo: PushRepository,
  request: IdempotencyRequest,
  scope: string,
  now: Date,
): Promise<KeyOutcome> {
  if (!KEY_FORMAT.test(request.key)) {
    throw new ApiError(
      'invalid_parameter',
      'Invalid or missing parameter: Idempotency-Key (1 to 255 visible ASCII characters).',
    );
  }
  const ref = { scope, keyDigest: createHash('sha256').update(request.key).digest('hex') };
  const claim = await repo.claimKey(
    ref,
    request.fingerprint,
    now,
    KEY_LIFETIME_MS,
    new Date(now.getTime() - ABANDONED_AFTER_MS),
  );
  if (claim.outcome === 'claimed') return { kind: 'fresh', ref };
  const { key } = claim;
  if (key.fingerprint !== request.fingerprint) {
    throw new ApiError(
      'idempotency_key_reused',
      'This Idempotency-Key was used with another request body; use a new key for a new push.',
    );
  }
  if (key.state === 'in_flight' || key.pushId === null) {
    // True: by then the first request has finished (the key is done) or can no longer finish (the key is free).
    const retryAfter = Math.max(1, Math.ceil((key.createdAt.getTime() + ABANDONED_AFTER_MS - now.getTime()) / 1000));
    throw new ApiError(
      'idempotency_key_in_use',
      `A request with this Idempotency-Key is still being processed; retry in ${retryAfter} s.`,
      {
        retryAfterSeconds: retryAfter,
      },
    );
  }
  return { kind: 'replay', pushId: key.pushId };
}
