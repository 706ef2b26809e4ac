/**
 * Every statement about pushes, their files, their audit entries, their passphrase attempts and the idempotency keys
 * of creates (push-tables.ts). The service above keeps the rules; this module keeps the SQL, its rows and their
 * mapping. Whatever SQL can guarantee lives here: a counting view is claimed by one conditional UPDATE (never
 * read-then-write) that also writes its audit entry and, on the last view, expires the push and erases its secrets;
 * a create is one statement with its audit entry, its files and its idempotency key; the passphrase limit is counted
 * in a table every instance shares. The hot paths are prepared once per connection.
 *
 * **Nothing changes after a request's deadline.** Every statement that writes on behalf of a request carries the
 * request's deadline and changes nothing once the database's clock has passed it (`clock_timestamp()`, read while
 * the statement runs). A statement the database only gets to late (it was stopped, or busy) is then a no-op, so an
 * answer of 503 (given only after the deadline) cannot hide a commit. What is left is the instant between a commit
 * and its reply: a database that stops exactly there leaves the outcome unknown, as with any database.
 *
 * Statements list their columns rather than `*`: a prepared `*` whose expansion changes (another instance migrating
 * a column in during a rolling deploy) fails with "cached plan must not change result type".
 */
import type { Db } from '../db/sql.js';
import { storageOperations } from './repository/counted-creates.js';
import { insertFor, insertOperations } from './repository/create.js';
import { expiryOperations } from './repository/expiry.js';
import { keyOperations } from './repository/idempotency-keys.js';
import { ownerListOperations } from './repository/owner-lists.js';
import { attemptOperations } from './repository/passphrase-attempts.js';
import { retrieveOperations, viewByTokenStatement } from './repository/retrieve.js';
import { sweepOperations } from './repository/sweeping.js';
import { workspacePushOperations } from './repository/workspace-lists.js';

// The repository's face to the other files and areas: they import these from here, not from ./repository/.
export { STORAGE_WINDOW_MS, storageWindowStart, userStorage } from './repository/counted-creates.js';
export type { CreateWrites, WithinCreate } from './repository/create.js';
export type { KeyRef } from './repository/idempotency-keys.js';
export { claimedPush, type FileMeta } from './repository/retrieve.js';
export type { AuditActor, ClaimWrites, PageOf, WithinChange } from './repository/statement-parts.js';

/**
 * The repository's statements live in ./repository/, one file per purpose: statement-parts.ts (the guard, the audit
 * columns, the readers every statement shares), create.ts, counted-creates.ts (the storage quotas), retrieve.ts (read,
 * view, claim, files), expiry.ts, owner-lists.ts (the audit log and the owner's lists), passphrase-attempts.ts,
 * idempotency-keys.ts, sweeping.ts, workspace-lists.ts (a workspace's lists). This file puts them together.
 */

/**
 * The statements of the bench's requests (an anonymous text push, then its retrieval), for the bench's same-SQL floor
 * (scripts/bench/bare-floor.ts), which sends them without the rest of the server: the very texts, so the floor cannot
 * drift from what the server sends.
 */
export const BENCH_STATEMENTS = {
  create: () => insertFor(0, undefined, 'address'),
  /** viewByTokenStatement's, for pushes nobody listens to. */
  viewByToken: viewByTokenStatement(null),
};

export type PushRepository = ReturnType<typeof createPushRepository>;

/**
 * `objectsGone`: told, after the commit, the object keys of file rows a statement deleted (an expiry by request, the
 * sweeper's lapsed files), whose objects it deletes (../files/). Absent: the files are all in PostgreSQL.
 */
export function createPushRepository(db: Db, objectsGone?: (keys: string[]) => void) {
  const retrieve = retrieveOperations(db);
  return {
    ...retrieve,
    ...insertOperations(db),
    ...expiryOperations(db, retrieve.findById, objectsGone),
    ...ownerListOperations(db),
    ...workspacePushOperations(db),
    ...attemptOperations(db),
    ...keyOperations(db),
    ...storageOperations(db),
    ...sweepOperations(db, objectsGone),
  };
}
