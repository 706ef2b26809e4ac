/** The idempotency keys of creates (../idempotency.ts decides with them; a create marks its key done: create.ts). */
import { ApiError } from '@secret-push/rules';
import { sql, type Db } from '../../db/sql.js';
import { IDEMPOTENCY_KEYS, type IdempotencyKeyRow } from '../push-tables.js';

/** Ties a create to its idempotency key: the create's own statement marks the key done. */
export interface KeyRef {
  scope: string;
  keyDigest: string;
}

const K = IDEMPOTENCY_KEYS;

const S = {
  claimKey: sql<
    { scope: string; keyDigest: string; fingerprint: string; now: Date; expiresAt: Date; staleBefore: Date },
    { outcome: 'claimed' | 'existing' } & Record<string, unknown>
  >(
    `with claimed as (
       insert into idempotency_keys (${K.list}) values (:scope, :keyDigest, :fingerprint, 'in_flight', null, :now, :expiresAt)
       on conflict (scope, key_digest) do update
         set fingerprint = excluded.fingerprint, state = 'in_flight', push_id = null, created_at = excluded.created_at,
             expires_at = excluded.expires_at
         where idempotency_keys.expires_at <= excluded.created_at
            or (idempotency_keys.state = 'in_flight' and idempotency_keys.created_at < :staleBefore)
       returning ${K.list}
     )
     select 'claimed' as outcome, * from claimed
     union all
     select 'existing' as outcome, ${K.list} from idempotency_keys
     where scope = :scope and key_digest = :keyDigest and not exists (select 1 from claimed)`,
  ),
  releaseKey: sql<{ scope: string; keyDigest: string }>(
    "delete from idempotency_keys where scope = :scope and key_digest = :keyDigest and state = 'in_flight'",
  ),
};

/** The outcome of presenting an idempotency key. */
type KeyClaim = { outcome: 'claimed' } | { outcome: 'existing'; key: IdempotencyKeyRow };

/** Idempotency keys (idempotency.ts decides with them). */
export function keyOperations(db: Db) {
  return {
    /**
     * Presents an idempotency key: claimed (no live row had it, or its row had expired or was abandoned in flight
     * before `staleBefore`), or the live row that has it.
     */
    async claimKey(
      ref: KeyRef,
      fingerprint: string,
      now: Date,
      lifetimeMs: number,
      staleBefore: Date,
    ): Promise<KeyClaim> {
      const params = { ...ref, fingerprint, now, expiresAt: new Date(now.getTime() + lifetimeMs), staleBefore };
      // No row: another request inserted the key after this statement's snapshot was taken (the insert waited for
      // it, then yielded), so the statement cannot see it. A new statement can.
      for (let attempt = 0; attempt < 3; attempt++) {
        const row = (await db.query(S.claimKey, params))[0];
        if (row?.outcome === 'claimed') return { outcome: 'claimed' };
        if (row) return { outcome: 'existing', key: K.fromRow(row) };
      }
      throw new ApiError(
        'idempotency_key_in_use',
        'A request with this Idempotency-Key is still being processed; retry shortly.',
        {
          retryAfterSeconds: 1,
        },
      );
    },

    /** Lets a key go again after a create that failed (a corrected request may use it). */
    async releaseKey(ref: KeyRef): Promise<void> {
      await db.query(S.releaseKey, ref);
    },
  };
}
