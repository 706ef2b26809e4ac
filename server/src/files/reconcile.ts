/**
 * The sweeper's reconcile of the object store with the rows (PWPUSH_FILE_STORAGE=s3://…): it walks the store's listing
 * of this instance's folders (`<prefix>push-files/`, `<prefix>request-files/`) and the rows that name objects, both
 * in binary key order, side by side (a merge: memory stays one page of each, however many files there are), and finds
 *
 * - an object without a row: a create that stored its objects and then did not commit (refused, failed, its process
 *   killed), or a delete whose objects could not be deleted then. Removed once older than ORPHAN_GRACE_MS (a create
 *   stores its objects before its row commits, within seconds).
 * - a row whose object is gone (deleted outside this server, or a bucket restored from an older backup): the store is
 *   asked again for that one object, and the row is deleted only when the store says it is not there; its push no
 *   longer lists the file, which could never be served. A listing with no object at all while rows name some is taken
 *   for a wrong bucket or prefix: nothing is deleted then, and a warning says so.
 *
 * Any number of instances may reconcile at once: every step is idempotent. Counts go to the metrics and the log; keys
 * are random ids, never a secret.
 */
import { sql, type Db } from '../db/sql.js';
import type { FileObjects } from './file-objects.js';
import type { ListedObject } from './object-store.js';

/** An object without a row is removed only once it is older than this (its create had this long to commit). */
const ORPHAN_GRACE_MS = 60 * 60 * 1000;
/** How often a server's sweeper reconciles (it lists every object of the prefix). */
export const RECONCILE_EVERY_MS = 15 * 60 * 1000;

const PAGE = 1000;
/** Rows without an object handled in one run (the next run takes the rest). */
const MAX_MISSING = 10_000;

export interface ReconcileResult {
  /** Objects without a row, found / removed (the others are younger than the grace period). */
  objectsWithoutRow: number;
  objectsRemoved: number;
  /** Rows whose object is gone, found / deleted (the others were there when asked again). */
  rowsWithoutObject: number;
  rowsDeleted: number;
}

interface KeyRow {
  object_key: string;
  area: 'push' | 'request';
}

const S = {
  rowsAfter: sql<{ after: string; prefix: string; limit: number }, KeyRow>(
    `select object_key, area from (
       select object_key, 'push' as area from push_files
       where object_key is not null and object_key collate "C" > :after and starts_with(object_key, :prefix)
       union all
       select object_key, 'request' as area from request_files
       where object_key is not null and object_key collate "C" > :after and starts_with(object_key, :prefix)
     ) k order by object_key collate "C" limit :limit`,
  ),
  dropPushFile: sql<{ key: string }>('delete from push_files where object_key = :key'),
  dropRequestFile: sql<{ key: string }>('delete from request_files where object_key = :key'),
};

/** Binary order of keys (the store's; `collate "C"` in PostgreSQL). */
const order = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** The store's listing of our folders, one object at a time, a page at a time. */
async function* listed(objects: FileObjects): AsyncGenerator<ListedObject> {
  const ours = ['push', 'request'].map((area) => objects.keyFor(area as 'push' | 'request', ''));
  let next: string | null = null;
  do {
    const page = await objects.store.list(next);
    for (const object of page.objects) if (ours.some((folder) => object.key.startsWith(folder))) yield object;
    next = page.next;
  } while (next !== null);
}

/** The rows naming objects under the prefix, in binary key order, a page at a time. */
async function* rows(db: Db, prefix: string): AsyncGenerator<KeyRow> {
  let after = '';
  for (;;) {
    const page = await db.query(S.rowsAfter, { after, prefix, limit: PAGE });
    yield* page;
    if (page.length < PAGE) return;
    after = page[page.length - 1]!.object_key;
  }
}

export async function reconcileFiles(
  db: Db,
  objects: FileObjects,
  now: Date,
  warn: (obj: object, msg: string) => void = () => undefined,
): Promise<ReconcileResult> {
  const result: ReconcileResult = { objectsWithoutRow: 0, objectsRemoved: 0, rowsWithoutObject: 0, rowsDeleted: 0 };
  const doomed: string[] = [];
  const missing: KeyRow[] = [];
  let seenObjects = 0;
  const objectsIt = listed(objects);
  const rowsIt = rows(db, objects.store.prefix);
  let object = (await objectsIt.next()).value as ListedObject | undefined;
  let row = (await rowsIt.next()).value as KeyRow | undefined;
  while (object || row) {
    const cmp = object && row ? order(object.key, row.object_key) : object ? -1 : 1;
    if (cmp < 0) {
      result.objectsWithoutRow++;
      if (now.getTime() - object!.lastModified.getTime() > ORPHAN_GRACE_MS) doomed.push(object!.key);
    } else if (cmp > 0) {
      result.rowsWithoutObject++;
      if (missing.length < MAX_MISSING) missing.push(row!);
    }
    if (cmp <= 0) {
      seenObjects++;
      object = (await objectsIt.next()).value as ListedObject | undefined;
    }
    if (cmp >= 0) row = (await rowsIt.next()).value as KeyRow | undefined;
    if (doomed.length >= PAGE) {
      await objects.store.delete(doomed.splice(0));
      result.objectsRemoved += PAGE;
    }
  }
  if (doomed.length > 0) {
    result.objectsRemoved += doomed.length;
    await objects.store.delete(doomed);
  }
  if (seenObjects === 0 && missing.length > 0) {
    warn(
      { rows_without_object: missing.length },
      'the file store lists no object of this instance while rows name some: is PWPUSH_FILE_STORAGE the right bucket and prefix? No row was deleted',
    );
    return result;
  }
  for (const lost of missing) {
    // Asked again, alone: a create that committed after the listing was read has its object by now.
    if (await objects.store.exists(lost.object_key)) continue;
    await db.query(lost.area === 'push' ? S.dropPushFile : S.dropRequestFile, { key: lost.object_key });
    result.rowsDeleted++;
  }
  return result;
}
