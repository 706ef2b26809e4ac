/**
 * A push read and viewed: by token or id, a recipient's view in one statement (viewByToken), the claim of a view
 * (alone, in the transaction of its events, or with their writes in its statement), the audit entries a retrieval
 * writes (owner_view, failed_view), and a push's files.
 */
import { sql, type Db, type Statement } from '../../db/sql.js';
import { type AuditKind, PUSH_FILES, type PushFileRow, PUSHES, type PushRow } from '../push-tables.js';
import {
  AUDIT_COLUMNS,
  type AuditActor,
  auditParams,
  type AuditParams,
  changed,
  checkInTime,
  type ClaimWrites,
  firstPushOf,
  GUARD,
  type Guarded,
  guardedPush,
  IN_TIME,
  type InTime,
  outboxAudit,
  PUSH_KEPT,
  tooLate,
  type WithinChange,
  writesKey,
  writesResultOf,
} from './statement-parts.js';

const P = PUSHES;
const F = PUSH_FILES;

/** A file without its bytes (where they are: `objectKey`, null when they are in `content`). */
export type FileMeta = Pick<PushFileRow, 'id' | 'filenameCiphertext' | 'contentType' | 'size' | 'objectKey'>;

/**
 * The SET clause of a won view, on the pushes row named `row` (`pushes` or an alias): one more view, and on the last
 * one the push expires and its secrets are erased (file bytes stay until the links issued lapse).
 */
const VIEW_SET = (row: string) => {
  const last = `${row}.views_used + 1 >= ${row}.expire_after_views`;
  return `views_used = ${row}.views_used + 1, updated_at = :now,
         expired = ${last},
         expired_on = case when ${last} then :now else ${row}.expired_on end,
         payload_ciphertext = case when ${last} then null else ${row}.payload_ciphertext end,
         note_ciphertext = case when ${last} then null else ${row}.note_ciphertext end,
         passphrase_hash = case when ${last} then null else ${row}.passphrase_hash end`;
};
/**
 * Nobody listens to the events of the owner's pushes (webhooks, read receipts: `event_owners`), nor, for a push of a
 * workspace, to the workspace's (its enabled webhooks, by `webhooks_workspace_idx`). The one-statement view claims
 * only then; a listened-to push's view is claimed by `claimView` in the transaction that queues its events. An
 * anonymous push never has listeners.
 */
const NOBODY_LISTENS = `(cur.user_id is null or not exists (select 1 from event_owners e where e.user_id = cur.user_id))
  and (cur.workspace_id is null
    or not exists (select 1 from webhooks w where w.workspace_id = cur.workspace_id and w.enabled))`;
/**
 * The key id of an envelope in its base64 text form (../crypto/envelope.ts: version, id length, id, …), read from
 * its first 344 characters (258 bytes: room for the longest id), so a view is claimed only when it can be opened.
 */
const ENVELOPE_KEY_ID = (column: string) =>
  `convert_from(substring(decode(left(${column}, 344), 'base64') from 3 for get_byte(decode(left(${column}, 4), 'base64'), 1)), 'UTF8')`;

/**
 * The push as a claim of a view left it, from the row read before: only the counter, the time of change and (on the
 * last view) the expiry and the erased secrets move (nothing else of a push changes while it can be viewed).
 */
export function claimedPush(row: PushRow, viewsUsed: number, updatedAt: Date, now: Date): PushRow {
  const won: PushRow = { ...row, viewsUsed, updatedAt };
  if (viewsUsed >= row.expireAfterViews) {
    Object.assign(won, {
      expired: true,
      expiredOn: now,
      payloadCiphertext: null,
      noteCiphertext: null,
      passphraseHash: null,
    });
  }
  return won;
}

/**
 * claimView's statements with more CTEs (ClaimWrites), by their text (a writes' texts are constants, whose hash a
 * string keeps: no key is built per call), and the claim only from a given views_used.
 */
const claimsWith = new Map<string, Map<string, Statement<Record<string, unknown>, InTime & Record<string, unknown>>>>();

function claimViewWith(more: ClaimWrites): Statement<Record<string, unknown>, InTime & Record<string, unknown>> {
  let byResult = claimsWith.get(more.ctes);
  if (!byResult) claimsWith.set(more.ctes, (byResult = new Map()));
  let statement = byResult.get(more.result ?? '');
  if (!statement) {
    statement = sql(
      `with ${GUARD}, won as (
         update pushes set ${VIEW_SET('pushes')}
         where id = :id and views_used = :viewsUsedBefore
           and not expired and views_used < expire_after_views and expires_at > :now and ${IN_TIME}
         returning ${P.list}
       ), viewed as (
         insert into audit_entries (${AUDIT_COLUMNS})
         select id, 'view', :ip, :userAgent, :referrer, :userId, :now from won
       ), ${more.ctes}
       select guard.in_time, ${writesResultOf(more, 'viewed')}won.* from guard left join won on true`,
      { prepare: true },
    );
    byResult.set(more.result ?? '', statement);
  }
  return statement;
}

type ViewByToken = Statement<
  { urlToken: string; keyIds: string[]; plaintextOnly: boolean } & AuditParams & Guarded & Record<string, unknown>,
  InTime & { won_views_used: number | null; won_updated_at: Date | null } & Record<string, unknown>
>;

/**
 * A recipient's view in one statement: the push by its token (as it was read), and the claim of a view when the
 * push needs nothing more than a claim (a text, URL or QR push without a passphrase, not the caller's own, whose
 * payload was sealed under a key this process holds, and not end-to-end encrypted when a plaintext is required). The
 * claim is claimView's, with its `view` audit entry; `won_views_used` is set when it won. Otherwise the row is what
 * the service decides with (expired, passphrase, owner, files), as findByToken's.
 *
 * Without `more`, only pushes nobody listens to are claimed (NOBODY_LISTENS); with it (a view's events: its audit
 * entry marked for the webhooks' outbox, webhooks/push-events.ts and outbox.ts), every push is, and `writes_result`
 * reports whether the entry was marked. One statement per `more` (writesKey).
 */
const viewsWith = new Map<string, ViewByToken>();

export function viewByTokenStatement(more: ClaimWrites | null): ViewByToken {
  let statement = more ? viewsWith.get(writesKey(more)) : undefined;
  if (statement) return statement;
  const outbox = outboxAudit(more, 'cur.user_id', 'cur.workspace_id', 'won.views_used');
  statement = sql(
    `with ${GUARD}, cur as (
       select ${P.list} from pushes where url_token = :urlToken
     ), won as (
       update pushes p set ${VIEW_SET('p')}
       from cur
       where p.id = cur.id and cur.kind <> 'file' and cur.passphrase_hash is null
         and cardinality(cur.allowed_networks) = 0 and cardinality(cur.recipient_emails) = 0
         and (cur.user_id is null or :userId::uuid is null or cur.user_id <> :userId::uuid)
         and (cur.client_encryption is null or not :plaintextOnly::boolean)
         and (cur.payload_ciphertext is null or ${ENVELOPE_KEY_ID('cur.payload_ciphertext')} = any(:keyIds::text[]))
         and ${more ? 'true' : NOBODY_LISTENS}
         and not p.expired and p.views_used < p.expire_after_views and p.expires_at > :now and ${IN_TIME}
       returning p.id, p.views_used, p.updated_at, p.expired
     ), viewed as (
       insert into audit_entries (${AUDIT_COLUMNS}${outbox.columns})
       select won.id, 'view', :ip, :userAgent, :referrer, :userId, :now${outbox.values}
       from won${more?.outbox ? ' join cur on cur.id = won.id' : ''}${outbox.returning}
     )${more?.ctes ? `, ${more.ctes}` : ''}
     select guard.in_time, ${writesResultOf(more, 'viewed')}won.views_used as won_views_used, won.updated_at as won_updated_at, cur.*
     from guard left join cur on true left join won on true`,
    { prepare: true },
  ) as ViewByToken;
  if (more) viewsWith.set(writesKey(more), statement);
  return statement;
}

const S = {
  findByToken: sql<{ urlToken: string }>(`select ${P.list} from pushes where url_token = :urlToken`, { prepare: true }),
  findById: sql<{ id: string }>(`select ${P.list} from pushes where id = :id`),
  /**
   * The claim of a view: succeeds for at most `expire_after_views` callers, on any instance, writes the `view` audit
   * entry and, on the last view, expires the push and erases its secrets (file bytes stay until the links issued
   * lapse), as one statement.
   */
  claimView: sql<{ id: string } & AuditParams & Guarded, InTime & Record<string, unknown>>(
    `with ${GUARD}, won as (
       update pushes set ${VIEW_SET('pushes')}
       where id = :id and not expired and views_used < expire_after_views and expires_at > :now and ${IN_TIME}
       returning ${P.list}
     ), viewed as (
       insert into audit_entries (${AUDIT_COLUMNS})
       select id, 'view', :ip, :userAgent, :referrer, :userId, :now from won
     )
     select guard.in_time, won.* from guard left join won on true`,
    { prepare: true },
  ),
  insertAudit: sql<{ pushId: string; kind: AuditKind } & AuditParams & Guarded, InTime>(
    `with ${GUARD}, ${PUSH_KEPT}, logged as (
       insert into audit_entries (${AUDIT_COLUMNS})
       select kept.id, :kind, :ip, :userAgent, :referrer, :userId, :now from kept where ${IN_TIME}
     )
     select in_time from guard`,
  ),
  /** At most one `failed_view` per push, client address and window. */
  insertFailedView: sql<{ pushId: string; since: Date } & AuditParams & Guarded, InTime>(
    `with ${GUARD}, ${PUSH_KEPT}, logged as (
       insert into audit_entries (${AUDIT_COLUMNS})
       select kept.id, 'failed_view', :ip, :userAgent, :referrer, :userId, :now from kept
       where ${IN_TIME} and not exists (
         select 1 from audit_entries where push_id = :pushId and kind = 'failed_view' and ip = :ip and created_at > :since)
     )
     select in_time from guard`,
  ),
  filesOf: sql<{ pushId: string }>(
    'select id, filename_ciphertext, content_type, size, object_key from push_files where push_id = :pushId order by position',
  ),
  fileOf: sql<{ pushId: string; fileId: string }>(
    `select ${F.list} from push_files where id = :fileId and push_id = :pushId`,
  ),
};

/** A push read, viewed and claimed, the audit entries of a retrieval, and its files. */
export function retrieveOperations(db: Db) {
  async function findById(id: string): Promise<PushRow | null> {
    return firstPushOf(db.query(S.findById, { id }));
  }

  return {
    async findByToken(urlToken: string): Promise<PushRow | null> {
      return firstPushOf(db.query(S.findByToken, { urlToken }));
    },

    findById,

    /**
     * The row of `urlToken` (null: no such push) and, when the view was claimed with it, the row after the claim.
     * `writes`: the view's events, written by the same statement (then a listened-to owner's push is claimed too).
     */
    async viewByToken(
      urlToken: string,
      by: AuditActor,
      now: Date,
      deadline: Date,
      opts: { keyIds: string[]; plaintextOnly: boolean; writes: ClaimWrites | null },
    ): Promise<{ row: PushRow; won: PushRow | null } | null> {
      const { keyIds, plaintextOnly, writes } = opts;
      const [raw] = await db.query(viewByTokenStatement(writes), {
        ...writes?.params,
        urlToken,
        ...auditParams(by, now),
        deadline,
        keyIds,
        plaintextOnly,
      });
      if (!raw?.in_time) throw tooLate();
      if (raw.id === null || raw.id === undefined) return null;
      const row = P.fromRow(raw);
      if (raw.won_views_used === null || raw.won_views_used === undefined) return { row, won: null };
      writes?.written(db, raw.writes_result);
      return { row, won: claimedPush(row, raw.won_views_used, new Date(raw.won_updated_at!), now) };
    },
    /** Claims a view; null when none is left (or the time ran out). `within`: in the claim's transaction. */
    async claimView(
      id: string,
      by: AuditActor,
      now: Date,
      deadline: Date,
      within?: WithinChange,
    ): Promise<PushRow | null> {
      return changed(db, S.claimView, { id, ...auditParams(by, now), deadline }, within, guardedPush);
    },

    /**
     * Claims a view in one statement with more writes (`writes`: a view's events), only when the push's views_used is
     * still `viewsUsedBefore` (the count the writes were made for); null when it did not claim (a view taken
     * meanwhile, none left, past its time), and then nothing was written.
     */
    async claimViewWith(
      id: string,
      by: AuditActor,
      now: Date,
      deadline: Date,
      viewsUsedBefore: number,
      writes: ClaimWrites,
    ): Promise<PushRow | null> {
      const params = { ...writes.params, id, viewsUsedBefore, ...auditParams(by, now), deadline };
      const rows = await db.query(claimViewWith(writes), params);
      const row = guardedPush(rows);
      if (row) writes.written(db, rows[0]?.writes_result);
      return row;
    },

    async recordAudit(pushId: string, kind: AuditKind, by: AuditActor, now: Date, deadline: Date): Promise<void> {
      checkInTime(await db.query(S.insertAudit, { pushId, kind, ...auditParams(by, now), deadline }));
    },

    async recordFailedView(pushId: string, by: AuditActor, now: Date, dedupeMs: number, deadline: Date): Promise<void> {
      const since = new Date(now.getTime() - dedupeMs);
      checkInTime(await db.query(S.insertFailedView, { pushId, since, ...auditParams(by, now), deadline }));
    },

    ...fileOperations(db),
  };
}

/** A push's files: without their bytes (links), or one with them (a download). */
function fileOperations(db: Db) {
  return {
    filesOf: async (pushId: string): Promise<FileMeta[]> =>
      (await db.query(S.filesOf, { pushId })).map((r) => ({
        id: F.columns.id.parse(r.id),
        filenameCiphertext: F.columns.filenameCiphertext.parse(r.filename_ciphertext),
        contentType: F.columns.contentType.parse(r.content_type),
        size: F.columns.size.parse(r.size),
        objectKey: F.columns.objectKey.parse(r.object_key),
      })),

    async fileOf(pushId: string, fileId: string): Promise<PushFileRow | null> {
      const [row] = await db.query(S.fileOf, { pushId, fileId });
      return row ? F.fromRow(row) : null;
    },
  };
}
