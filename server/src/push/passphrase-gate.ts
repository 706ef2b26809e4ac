/**
 * The per-push passphrase gate, shared by every instance through PostgreSQL. Only failures count: five wrong (or
 * missing) passphrases within a minute close the gate for the rest of that minute, for everyone, on every instance.
 * An attempt holds a place while its passphrase is checked (so that a burst of parallel guesses cannot all be checked
 * before the first failure is recorded); a correct one gives its place back and never counts. When every place is held
 * by attempts still being checked, a new attempt waits for a place instead of being refused: concurrent correct
 * attempts are never refused. Attempts of one process wait for a place in memory (no polling); attempts of other
 * processes that hold the places are waited for by asking PostgreSQL again.
 *
 * A passphrase this process is checking for a push right now is not checked again for the same push: an attempt with
 * the same passphrase waits for that check, and passes without a place when it found the passphrase correct (a
 * correct attempt never counts). Otherwise it takes its place as any other, so every wrong attempt is still checked,
 * counted and audited. Fifty recipients opening one link at once cost one scrypt, not fifty in waves of five. Only a
 * digest of the passphrase is kept, and only while its check runs.
 */
import { ApiError, ATTEMPT_WINDOW_MS, ERRORS, passphraseRetryAfter } from '@secret-push/rules';
import { createHash } from 'node:crypto';
import { verifyPassphrase } from '../crypto/passphrase.js';
import type { AuditActor, PushRepository, WithinChange } from './push-repository.js';
import type { PushRow } from './push-tables.js';

/** A place held longer than this belongs to a process that died mid-check: it no longer holds. */
const IN_FLIGHT_MS = 30_000;
/** How long an attempt waits for a place at most (the request's deadline bounds it first). */
const WAIT_FOR_PLACE_MS = 6_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Checks running in this process, by push and passphrase digest: whether the passphrase opens the push. */
const checking = new Map<string, Promise<boolean>>();

function checkKey(pushId: string, passphrase: string): string {
  return `${pushId}:${createHash('sha256').update(passphrase, 'utf8').digest('base64url')}`;
}

/** This process's attempts per push: at most `limit` at once ask PostgreSQL for a place; the others queue here. */
const local = new Map<string, { active: number; waiting: (() => void)[] }>();

async function takeLocalPlace(pushId: string, limit: number, waitUntil: number): Promise<() => void> {
  let entry = local.get(pushId);
  if (!entry) local.set(pushId, (entry = { active: 0, waiting: [] }));
  const slot = entry;
  if (slot.active >= limit) {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => {
          slot.waiting.splice(slot.waiting.indexOf(wake), 1);
          reject(tooMany(1));
        },
        Math.max(0, waitUntil - Date.now()),
      );
      const wake = () => {
        clearTimeout(timer);
        resolve();
      };
      slot.waiting.push(wake);
    });
  } else {
    slot.active += 1;
  }
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const next = slot.waiting.shift();
    if (next)
      next(); // the place passes on
    else if (--slot.active === 0) local.delete(pushId);
  };
}

function tooMany(retryAfterSeconds: number): ApiError {
  return new ApiError('too_many_attempts', 'Too many passphrase attempts for this push; try again later.', {
    retryAfterSeconds,
  });
}

export interface GateOptions {
  repo: PushRepository;
  limit: number;
  actor: AuditActor;
  /** The instant rules are decided at (tests move it). */
  now: Date;
  deadline: Date;
  /** In the transaction of a failure's `failed_passphrase` entry (its events). */
  within?: WithinChange;
}

/** Passes when `passphrase` opens the push; throws 401 passphrase_required / passphrase_incorrect, or 429. */
export async function checkPassphrase(row: PushRow, passphrase: string | undefined, o: GateOptions): Promise<void> {
  const key = passphrase ? checkKey(row.id, passphrase) : undefined;
  const running = key === undefined ? undefined : checking.get(key);
  if (running && (await running.catch(() => false))) return;
  await withPlace(row, o, (placeId) => decide(row, passphrase, placeId, o, key));
}

/**
 * The access-code gate of a push for specific people (access-codes.ts): the same places and the same count of
 * failures as the passphrase's (a wrong code is a failed attempt, logged `failed_passphrase`). A missing code is not
 * an attempt: 401 access_code_required at once.
 */
export async function checkAccessCode(
  row: PushRow,
  code: string | null,
  verify: (code: string) => Promise<boolean>,
  o: GateOptions,
): Promise<void> {
  if (code === null) throw new ApiError('access_code_required', ERRORS.access_code_required.message);
  await withPlace(row, o, async (placeId) => {
    let correct: boolean;
    try {
      correct = await verify(code);
    } catch (error) {
      await o.repo.releaseAttempt(placeId).catch(() => undefined);
      throw error;
    }
    if (correct) return o.repo.releaseAttempt(placeId);
    await o.repo.failAttempt(placeId, row, o.actor, o.now, o.deadline, o.within);
    throw new ApiError('access_code_incorrect', ERRORS.access_code_incorrect.message);
  });
}

/** Runs `check` holding one of the push's places (this process's, then PostgreSQL's); 429 while the gate is shut. */
async function withPlace(row: PushRow, o: GateOptions, check: (placeId: string) => Promise<void>): Promise<void> {
  const waitUntil = Math.min(Date.now() + WAIT_FOR_PLACE_MS, o.deadline.getTime() - 1_500);
  const release = await takeLocalPlace(row.id, o.limit, waitUntil);
  try {
    let pause = 10;
    for (;;) {
      const place = await o.repo.reserveAttempt(row.id, o.now, o.limit, ATTEMPT_WINDOW_MS, IN_FLIGHT_MS);
      if (place.state === 'blocked') throw tooMany(passphraseRetryAfter(place.failures, o.now, o.limit) ?? 1);
      if (place.state === 'reserved') return await check(place.id);
      // Every place is held by attempts other processes are checking (a check takes a scrypt, tens of milliseconds).
      if (Date.now() + pause > waitUntil) throw tooMany(1);
      await sleep(pause + Math.random() * pause);
      pause = Math.min(pause * 2, 100);
    }
  } finally {
    release();
  }
}

async function decide(
  row: PushRow,
  passphrase: string | undefined,
  attemptId: string,
  o: GateOptions,
  key: string | undefined,
): Promise<void> {
  const missing = passphrase === undefined || passphrase === '';
  let correct: boolean;
  try {
    correct = !missing && (await verifyShared(passphrase, row.passphraseHash!, key));
  } catch (error) {
    await o.repo.releaseAttempt(attemptId).catch(() => undefined);
    throw error;
  }
  if (correct) {
    await o.repo.releaseAttempt(attemptId);
    return;
  }
  await o.repo.failAttempt(attemptId, row, o.actor, o.now, o.deadline, o.within);
  if (missing)
    throw new ApiError('passphrase_required', 'This push needs a passphrase (send it in the X-Passphrase header).');
  throw new ApiError('passphrase_incorrect', 'That passphrase is incorrect.');
}

/** Verifies, and lets attempts with the same passphrase for the same push wait for this answer while it runs. */
async function verifyShared(passphrase: string, stored: string, key: string | undefined): Promise<boolean> {
  const check = verifyPassphrase(passphrase, stored);
  if (key === undefined || checking.has(key)) return check;
  checking.set(key, check);
  try {
    return await check;
  } finally {
    checking.delete(key);
  }
}
