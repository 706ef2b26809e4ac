/**
 * How long each layer waits, so that the database gives up before the HTTP layer does and a 503 can never hide a
 * commit (push-repository.ts: every write on behalf of a request changes nothing after the request's deadline).
 *
 *   0 s ─ request starts
 *   4 s ─ PostgreSQL cancels a statement still running (statement_timeout): nothing of it is committed
 *   8 s ─ the request's deadline: a write the database only gets to now is a no-op
 *  10 s ─ the client stops waiting for an answer to a statement (query_timeout); a write sent before 8 s is past its
 *         deadline by then, so whatever the database does with it later changes nothing
 *  20 s ─ last resort: the HTTP layer answers 503 for a request still unanswered (by then every write of it is a no-op)
 */
export const STATEMENT_TIMEOUT_MS = 4_000;
const REQUEST_DEADLINE_MS = 8_000;
export const QUERY_TIMEOUT_MS = 10_000;
export const SAFETY_NET_MS = 20_000;
/** A transaction left idle (a crashed holder) is ended by PostgreSQL after this long. */
export const IDLE_IN_TRANSACTION_MS = 10_000;
/** A statement waits at most this long for a row lock (the passphrase attempts' lock). */
export const LOCK_TIMEOUT_MS = 3_000;
/** Waiting for a pooled connection (nothing has been sent yet: a 503 is always safe). */
export const CONNECT_TIMEOUT_MS = 5_000;

/** The deadline of a request that starts now. */
export function deadlineFrom(start: number = Date.now()): Date {
  return new Date(start + REQUEST_DEADLINE_MS);
}

/**
 * The deadline is checked against the database's clock, the 503 is decided on this host's: a database clock behind
 * this one by more than QUERY_TIMEOUT_MS − REQUEST_DEADLINE_MS (2 s) could commit a write its client was told did
 * not happen. The server measures the difference at start-up and warns above this (keep clocks synchronized: NTP).
 */
export const CLOCK_SKEW_WARN_MS = 1_000;

/** How far the database's clock is ahead of this host's (ms; negative: behind), to within half a round trip. */
export async function databaseClockSkewMs(now: () => Promise<number>): Promise<number> {
  const before = Date.now();
  const database = await now();
  const after = Date.now();
  return Math.round(database - (before + after) / 2);
}
