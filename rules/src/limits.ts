/** The time windows and sizes of the push rules, and the arithmetic on them. */

export const DAY_MS = 24 * 60 * 60 * 1000;
/** The passphrase limit counts failed attempts within this window. */
export const ATTEMPT_WINDOW_MS = 60_000;
/** A read of an expired push is logged as `failed_view` at most once per push, client address and this window. */
export const FAILED_VIEW_DEDUPE_MS = 60_000;
/** Lifetime of a signed file download link; file bytes outlive a push's expiry by this much. */
export const LINK_LIFETIME_MS = 5 * 60_000;
/** Items per page of the lists and the audit log. */
export const PAGE_SIZE = 50;
/** The last page a list or audit log answers. */
export const MAX_PAGE = 200;

/**
 * Seconds until the next passphrase attempt is allowed, or null when one is allowed now. `failures` are the instants
 * of failed attempts on the push (any order); only those inside the window count.
 */
export function passphraseRetryAfter(failures: readonly Date[], now: Date, limit: number): number | null {
  const windowStart = now.getTime() - ATTEMPT_WINDOW_MS;
  const recent = failures
    .map((d) => d.getTime())
    .filter((t) => t > windowStart)
    .sort((a, b) => a - b);
  if (recent.length < limit) return null;
  // Free again once all but (limit - 1) of the counted failures have left the window.
  const freeAt = recent[recent.length - limit]! + ATTEMPT_WINDOW_MS;
  return Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000));
}
