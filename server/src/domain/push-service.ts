/**
 * PushService: the rules of api-decisions.md on top of PostgreSQL. Whatever SQL can guarantee lives in SQL:
 * a counting view is claimed by one conditional UPDATE (never read-then-write), the expiry that follows it happens
 * in the same statement (in the same transaction for file pushes), and the passphrase limit is counted in a table
 * every instance shares. The hot paths (create, a view) are one statement each, audit entry included.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Keyring } from '../crypto/envelope.js';
import { nativePool } from '../db/orm.js';
import { hashPassphrase, verifyPassphrase } from '../crypto/passphrase.js';
import { newFileId, newUrlToken, signDownloadToken, verifyDownloadToken } from '../crypto/tokens.js';
import {
  DomainError,
  type AuditEntry,
  type Page,
  type Push,
  type PushInput,
  type PushOwner,
  type PushRetrieval,
  type PushService,
  type RequestContext,
  type Settings,
} from './contract.js';
import { validatePushInput, wantsFiles } from './push-input.js';
import { iso, isExpired, isPastTime, jsonUrl, pushRecord, toDate, trimBase, type PushRow } from './records.js';

export const PAGE_SIZE = 50;
export const ATTEMPT_WINDOW_MS = 60_000;
/** How long file bytes outlive the push's expiry: the lifetime of the download links issued before it. */
export const FILE_GRACE_MS = 5 * 60_000;
const FIELD_MAX = 255;

type AuditKind = AuditEntry['kind'];

/** A view won by a retrieval: the row as the claim left it (before a last-view expiry), the payload, the files. */
interface Claim {
  row: PushRow;
  payload: string;
  files: PushRetrieval['files'];
}

interface FileRow {
  id: string;
  filename_ciphertext: string;
  content_type: string;
  size: number;
}

const aad = {
  payload: (pushId: string) => `pushes.payload:${pushId}`,
  name: (pushId: string) => `pushes.name:${pushId}`,
  note: (pushId: string) => `pushes.note:${pushId}`,
  filename: (fileId: string) => `push_files.filename:${fileId}`,
  content: (fileId: string) => `push_files.content:${fileId}`,
};

/** `?` placeholders (MikroORM's `execute`) as `$1, $2, …` (pg's bind parameters); the SQL here has no `?` in literals. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** A statement pg prepares once per connection (named by its text, so every service instance agrees on the name). */
interface Prepared {
  name: string;
  text: string;
}

function prepared(sql: string): Prepared {
  return { name: `sp_${createHash('sha256').update(sql).digest('hex').slice(0, 24)}`, text: numbered(sql) };
}

/**
 * The columns of PushRow. The prepared statements list them rather than `*`: a prepared `*` whose expansion changes
 * (another instance migrating a column in during a rolling deploy) fails with "cached plan must not change result
 * type" until the connection is replaced.
 */
const PUSH_COLUMNS = `id, url_token, kind, user_id, payload_ciphertext, name_ciphertext, note_ciphertext, passphrase_hash,
  passphrase_protected, expire_after_days, expire_after_views, views_used, deletable_by_viewer, retrieval_step, expired,
  expired_on, deleted, created_at, updated_at, expires_at`;

const INSERT_PUSH_WITH_AUDIT = `with push as (
    insert into pushes (${PUSH_COLUMNS})
    values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, false, null, false, ?, ?, ?) returning ${PUSH_COLUMNS}
  ), creation as (
    insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at)
    select id, 'creation', ?, ?, ?, ?, ? from push
  )
  select * from push`;

/**
 * The claim of a push without files: succeeds for at most `expire_after_views` callers, on any instance, writes the
 * `view` audit entry and, on the last view, expires the push and erases its secrets, as one statement.
 */
const CLAIM_VIEW = prepared(`with won as (
    update pushes set views_used = views_used + 1, updated_at = ?,
      expired = views_used + 1 >= expire_after_views,
      expired_on = case when views_used + 1 >= expire_after_views then ? else expired_on end,
      payload_ciphertext = case when views_used + 1 >= expire_after_views then null else payload_ciphertext end,
      note_ciphertext = case when views_used + 1 >= expire_after_views then null else note_ciphertext end,
      passphrase_hash = case when views_used + 1 >= expire_after_views then null else passphrase_hash end
    where id = ? and not expired and views_used < expire_after_views and expires_at > ?
    returning ${PUSH_COLUMNS}
  ), viewed as (
    insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at)
    select id, 'view', ?, ?, ?, ?, ? from won
  )
  select * from won`);

const INSERT_PUSH_WITH_AUDIT_PREPARED = prepared(INSERT_PUSH_WITH_AUDIT);
const FIND_PUSH = prepared(`select ${PUSH_COLUMNS} from pushes where url_token = ?`);

function cut(value: string | undefined | null): string {
  if (!value) return '';
  return value.length > FIELD_MAX ? value.slice(0, FIELD_MAX) : value;
}

function checkPage(page: number): void {
  if (!Number.isInteger(page) || page < 1 || page > 200) {
    throw new DomainError('validation_failed', 'page must be an integer from 1 to 200', {
      fields: { page: ['must be an integer from 1 to 200'] },
    });
  }
}

function notFound(): DomainError {
  return new DomainError('not_found', 'No push has this token.');
}

function authRequired(message = 'This needs an API token.'): DomainError {
  return new DomainError('authentication_required', message);
}

export interface PushServiceDeps {
  orm: MikroORM;
  settings: Settings;
  keyring: Keyring;
}

export function createPushService({ orm, settings, keyring }: PushServiceDeps): PushService {
  const em = (): EntityManager => orm.em.fork() as EntityManager;
  /**
   * The statements of the hot paths (find by token, create, claim a view) go to MikroORM's own pg pool as named
   * prepared statements: `em.fork()` + `em.execute()` (which formats every value into the SQL text and runs it through
   * Kysely) cost the server about a tenth of a request's CPU, and PostgreSQL parses and plans a prepared statement once
   * per connection instead of on every call. Everything else stays on the ORM.
   */
  const hot = async <T>(statement: Prepared, values: unknown[]): Promise<T[]> =>
    (await (await nativePool(orm)).query({ ...statement, values })).rows as T[];
  const baseOf = (ctx: RequestContext) => trimBase(settings.publicBaseUrl ?? ctx.baseUrl);
  const nowOf = (ctx: RequestContext) => ctx.now ?? new Date();
  /** With anonymous access off, every push operation needs a token (the HTTP layer checks it too). */
  const requireUserUnlessAnonymousAllowed = (ctx: RequestContext) => {
    if (!settings.allowAnonymous && !ctx.actor.userId) throw authRequired('This instance does not allow anonymous access.');
  };

  async function findPush(urlToken: string): Promise<PushRow | null> {
    if (typeof urlToken !== 'string' || urlToken.length === 0 || urlToken.length > 128) return null;
    const rows = await hot<PushRow>(FIND_PUSH, [urlToken]);
    return rows[0] ?? null;
  }

  /** ip, user_agent, referrer, user_id, created_at of an audit entry. */
  function auditValues(ctx: RequestContext, now: Date): [string, string, string, string | null, Date] {
    return [cut(ctx.actor.ip), cut(ctx.actor.userAgent), cut(ctx.actor.referrer), ctx.actor.userId, now];
  }

  async function audit(m: EntityManager, pushId: string, kind: AuditKind, ctx: RequestContext, now: Date): Promise<void> {
    await m.execute(
      'insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at) values (?, ?, ?, ?, ?, ?, ?)',
      [pushId, kind, ...auditValues(ctx, now)],
    );
  }

  /**
   * A read of an expired push is logged as `failed_view`, at most once per push, client address and minute: the owner
   * still sees who tried and when, but anyone holding an old link cannot grow the audit log without bound.
   */
  async function auditFailedView(m: EntityManager, pushId: string, ctx: RequestContext, now: Date): Promise<void> {
    const values = auditValues(ctx, now);
    await m.execute(
      `insert into audit_entries (push_id, kind, ip, user_agent, referrer, user_id, created_at)
       select ?, 'failed_view', ?, ?, ?, ?, ?
       where not exists (
         select 1 from audit_entries
         where push_id = ? and kind = 'failed_view' and ip = ? and created_at > ?)`,
      [pushId, ...values, pushId, values[0], new Date(now.getTime() - 60_000)],
    );
  }

  /** Marks a push past its time as expired and erases its secrets (idempotent; the sweeper does the same). */
  async function expireByTime(m: EntityManager, row: PushRow, now: Date): Promise<PushRow> {
    const rows = await m.execute<PushRow[]>(
      `update pushes set expired = true, expired_on = expires_at, updated_at = ?,
         payload_ciphertext = null, note_ciphertext = null, passphrase_hash = null
       where id = ? and not expired and expires_at <= ? returning *`,
      [now, row.id, now],
    );
    if (rows[0]) return rows[0];
    return (await m.execute<PushRow[]>('select * from pushes where id = ?', [row.id]))[0] ?? row;
  }

  function decryptOptional(ciphertext: string | null, context: string): string {
    return ciphertext ? keyring.decryptText(ciphertext, context) : '';
  }

  function ownerRecord(row: PushRow, now: Date, base: string): PushOwner {
    const record = pushRecord(row, now, base);
    return {
      ...record,
      name: decryptOptional(row.name_ciphertext, aad.name(row.id)),
      // The note is erased at expiry; a push past its time that no sweep reached yet must not show it either.
      note: record.expired ? '' : decryptOptional(row.note_ciphertext, aad.note(row.id)),
    };
  }

  function expiredRetrieval(row: PushRow, now: Date, base: string): PushRetrieval {
    return { ...pushRecord(row, now, base), payload: null, files: [] };
  }

  function fileLinks(files: FileRow[], urlToken: string, base: string, now: Date): PushRetrieval['files'] {
    return files.map((f) => ({
      id: f.id,
      filename: keyring.decryptText(f.filename_ciphertext, aad.filename(f.id)),
      content_type: f.content_type,
      size: Number(f.size),
      url: `${jsonUrl(base, urlToken)}/files/${f.id}?token=${signDownloadToken(settings.signingSecret, urlToken, f.id, now)}`,
    }));
  }

  async function listFiles(m: EntityManager, pushId: string): Promise<FileRow[]> {
    return m.execute<FileRow[]>(
      'select id, filename_ciphertext, content_type, size from push_files where push_id = ? order by position',
      [pushId],
    );
  }

  /**
   * The per-push passphrase limit, shared by every instance. Each attempt first reserves a row and then counts the
   * rows of the last minute (its own included), so concurrent attempts can never all slip under the limit; a
   * rejected attempt removes its row, a correct one too, so only failures stay counted.
   */
  async function checkPassphrase(m: EntityManager, row: PushRow, passphrase: string | undefined, ctx: RequestContext, now: Date): Promise<void> {
    const limit = settings.passphraseAttemptsPerMinute;
    const windowStart = new Date(now.getTime() - ATTEMPT_WINDOW_MS);
    const [reserved] = await m.execute<{ id: string }[]>(
      'insert into passphrase_attempts (push_id, attempted_at) values (?, ?) returning id',
      [row.id, now],
    );
    const release = () => m.execute('delete from passphrase_attempts where id = ?', [reserved!.id]);
    const recent = await m.execute<{ id: string; attempted_at: string }[]>(
      'select id, attempted_at from passphrase_attempts where push_id = ? and attempted_at > ? order by attempted_at, id',
      [row.id, windowStart],
    );
    if (recent.length > limit) {
      await release();
      const others = recent.filter((r) => String(r.id) !== String(reserved!.id));
      // The next attempt passes once all but (limit - 1) of the others have left the window.
      const pivot = others[others.length - limit];
      const freeAt = pivot ? toDate(pivot.attempted_at).getTime() + ATTEMPT_WINDOW_MS : now.getTime() + 1000;
      const retryAfterSeconds = Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000));
      throw new DomainError('too_many_attempts', 'Too many passphrase attempts for this push; try again later.', {
        retryAfterSeconds,
      });
    }
    if (passphrase === undefined || passphrase === '') {
      await audit(m, row.id, 'failed_passphrase', ctx, now);
      throw new DomainError('passphrase_required', 'This push needs a passphrase (send it in the X-Passphrase header).');
    }
    const ok = await verifyPassphrase(passphrase, row.passphrase_hash!);
    if (!ok) {
      await audit(m, row.id, 'failed_passphrase', ctx, now);
      throw new DomainError('passphrase_incorrect', 'That passphrase is incorrect.');
    }
    await release();
  }

  /**
   * The push and its `creation` audit entry in one statement (a data-modifying CTE is atomic on its own, so the
   * common case costs one round trip instead of begin/insert/insert/commit). File rows follow in the same
   * transaction when there are any.
   */
  async function insertPush(v: ReturnType<typeof validatePushInput>, passphraseHash: string | null, ctx: RequestContext, now: Date): Promise<PushRow> {
    const id = randomUUID();
    const expiresAt = new Date(now.getTime() + v.expireAfterDays * 24 * 60 * 60 * 1000);
    /** In the files' transaction (`tem`), or else on its own. */
    const insertWithAudit = async (tem: EntityManager | null, urlToken: string): Promise<PushRow> => {
      const params = [
          id,
          urlToken,
          v.kind,
          ctx.actor.userId,
          v.payload === '' ? null : keyring.encryptText(v.payload, aad.payload(id)),
          v.name === '' ? null : keyring.encryptText(v.name, aad.name(id)),
          v.note === '' ? null : keyring.encryptText(v.note, aad.note(id)),
          passphraseHash,
          passphraseHash !== null,
          v.expireAfterDays,
          v.expireAfterViews,
          v.deletableByViewer,
          v.retrievalStep,
          now,
          now,
          expiresAt,
        ...auditValues(ctx, now),
      ];
      const [row] = tem ? await tem.execute<PushRow[]>(INSERT_PUSH_WITH_AUDIT, params) : await hot<PushRow>(INSERT_PUSH_WITH_AUDIT_PREPARED, params);
      return row!;
    };
    for (let attempt = 0; ; attempt += 1) {
      const urlToken = newUrlToken();
      try {
        if (v.files.length === 0) return await insertWithAudit(null, urlToken);
        return await em().transactional(async (tem) => {
          const row = await insertWithAudit(tem, urlToken);
          for (const [position, file] of v.files.entries()) {
            const fileId = newFileId();
            await tem.execute(
              `insert into push_files (id, push_id, position, filename_ciphertext, content_type, size, content, created_at)
               values (?, ?, ?, ?, ?, ?, ?, ?)`,
              [
                fileId,
                id,
                position,
                keyring.encryptText(file.filename, aad.filename(fileId)),
                file.contentType,
                file.bytes.length,
                keyring.encrypt(file.bytes, aad.content(fileId)),
                now,
              ],
            );
          }
          return row;
        });
      } catch (err) {
        // 23505 on url_token: a collision of 120 random bits; try another token.
        const code = (err as { code?: string }).code ?? ((err as { cause?: { code?: string } }).cause?.code);
        if (code === '23505' && attempt < 3 && /url_token/.test(String((err as Error).message))) continue;
        throw err;
      }
    }
  }

  /** The claim of a push without files (CLAIM_VIEW): one round trip, atomic as a single statement. */
  async function claimView(row: PushRow, ctx: RequestContext, now: Date): Promise<Claim | null> {
    // Decrypt first: if a key is missing, nothing is claimed and no view is burned. The ciphertext read with the row
    // is the one the claim sees: it only ever changes to null, together with `expired`, which the claim excludes.
    const payload = decryptOptional(row.payload_ciphertext, aad.payload(row.id));
    const [won] = await hot<PushRow>(CLAIM_VIEW, [now, now, row.id, now, ...auditValues(ctx, now)]);
    if (!won) return null;
    // The view that uses the last one answers as the claim found the push: not expired, no view remaining.
    return { row: won.expired ? { ...won, expired: false, expired_on: null } : won, payload, files: [] };
  }

  /** The claim of a file push: the same rules in a transaction that also lists the files for their links. */
  async function claimWithFiles(m: EntityManager, row: PushRow, ctx: RequestContext, now: Date, base: string): Promise<Claim | null> {
    return m.transactional(async (tem) => {
      const [won] = await tem.execute<PushRow[]>(
        `update pushes set views_used = views_used + 1, updated_at = ?
         where id = ? and not expired and views_used < expire_after_views and expires_at > ?
         returning *`,
        [now, row.id, now],
      );
      if (!won) return null;
      await audit(tem, won.id, 'view', ctx, now);
      // Decrypt before committing: if a key is missing, the claim rolls back instead of burning a view.
      const payload = decryptOptional(won.payload_ciphertext, aad.payload(won.id));
      const files = fileLinks(await listFiles(tem, won.id), won.url_token, base, now);
      if (won.views_used >= won.expire_after_views) {
        // The last view: expire and erase in the same transaction. File bytes stay until the links lapse.
        await tem.execute(
          `update pushes set expired = true, expired_on = ?, updated_at = ?,
             payload_ciphertext = null, note_ciphertext = null, passphrase_hash = null
           where id = ?`,
          [now, now, won.id],
        );
      }
      return { row: won, payload, files };
    });
  }

  return {
    async create(input: PushInput, ctx: RequestContext): Promise<PushOwner> {
      const now = nowOf(ctx);
      const userId = ctx.actor.userId;
      if (!userId && !settings.allowAnonymous) throw authRequired('This instance does not allow anonymous pushes.');
      if (!userId && settings.filesRequireAuth && wantsFiles(input ?? {})) {
        throw authRequired('File pushes need an API token on this instance.');
      }
      const valid = validatePushInput(input, settings, { schemaChecked: ctx.inputValidatedBySchema === true });
      const passphraseHash = valid.passphrase !== null ? await hashPassphrase(valid.passphrase) : null;
      const row = await insertPush(valid, passphraseHash, ctx, now);
      return { ...pushRecord(row, now, baseOf(ctx)), name: valid.name, note: valid.note };
    },

    async retrieve(urlToken: string, passphrase: string | undefined, ctx: RequestContext): Promise<PushRetrieval> {
      requireUserUnlessAnonymousAllowed(ctx);
      const now = nowOf(ctx);
      const base = baseOf(ctx);
      // Forked only off the common path (expired, passphrase, owner, files, a lost race).
      let fork: EntityManager | undefined;
      const m = () => (fork ??= em());
      let row = await findPush(urlToken);
      if (!row) throw notFound();

      if (isExpired(row, now)) {
        if (!row.expired) row = await expireByTime(m(), row, now);
        await auditFailedView(m(), row.id, ctx, now);
        return expiredRetrieval(row, now, base);
      }

      if (row.passphrase_hash) await checkPassphrase(m(), row, passphrase, ctx, now);

      if (ctx.actor.userId !== null && ctx.actor.userId === row.user_id) {
        // The owner's own look does not count; it is served from the row as read, which was active.
        await audit(m(), row.id, 'owner_view', ctx, now);
        const files = row.kind === 'file' ? fileLinks(await listFiles(m(), row.id), row.url_token, base, now) : [];
        return {
          ...pushRecord(row, now, base),
          payload: decryptOptional(row.payload_ciphertext, aad.payload(row.id)),
          files,
        };
      }

      const claimed = row.kind === 'file' ? await claimWithFiles(m(), row, ctx, now, base) : await claimView(row, ctx, now);

      if (!claimed) {
        // Someone else took the last view (or the time ran out) between our read and our claim.
        const current = (await m().execute<PushRow[]>('select * from pushes where id = ?', [row.id]))[0] ?? row;
        const settled = !current.expired && isPastTime(current, now) ? await expireByTime(m(), current, now) : current;
        await auditFailedView(m(), settled.id, ctx, now);
        return expiredRetrieval(settled, now, base);
      }

      return { ...pushRecord(claimed.row, now, base), payload: claimed.payload, files: claimed.files };
    },

    async preview(urlToken: string, ctx: RequestContext): Promise<{ url: string }> {
      requireUserUnlessAnonymousAllowed(ctx);
      const row = await findPush(urlToken);
      if (!row) throw notFound();
      return { url: pushRecord(row, nowOf(ctx), baseOf(ctx)).html_url };
    },

    async expire(urlToken: string, ctx: RequestContext): Promise<Push> {
      requireUserUnlessAnonymousAllowed(ctx);
      const now = nowOf(ctx);
      const base = baseOf(ctx);
      const m = em();
      const row = await findPush(urlToken);
      if (!row) throw notFound();
      const userId = ctx.actor.userId;
      const isOwner = userId !== null && userId === row.user_id;
      if (!isOwner && !row.deletable_by_viewer) {
        if (!userId) throw authRequired('Only the owner may expire this push; send their API token.');
        throw new DomainError('forbidden', 'This push is not deletable by viewers and does not belong to you.');
      }
      if (isExpired(row, now)) {
        const settled = row.expired ? row : await expireByTime(m, row, now);
        return pushRecord(settled, now, base);
      }
      const done = await m.transactional(async (tem) => {
        const [updated] = await tem.execute<PushRow[]>(
          `update pushes set expired = true, deleted = true, expired_on = ?, updated_at = ?,
             payload_ciphertext = null, note_ciphertext = null, passphrase_hash = null
           where id = ? and not expired and expires_at > ? returning *`,
          [now, now, row.id, now],
        );
        if (!updated) return null;
        await tem.execute('delete from push_files where push_id = ?', [row.id]);
        await audit(tem, row.id, 'expire', ctx, now);
        return updated;
      });
      if (done) return pushRecord(done, now, base);
      // Expired concurrently (or just ran out of time): unchanged, no audit.
      const current = (await m.execute<PushRow[]>('select * from pushes where id = ?', [row.id]))[0] ?? row;
      const settled = !current.expired && isPastTime(current, now) ? await expireByTime(m, current, now) : current;
      return pushRecord(settled, now, base);
    },

    async audit(urlToken: string, page: number, ctx: RequestContext): Promise<Page<AuditEntry>> {
      const userId = ctx.actor.userId;
      if (!userId) throw authRequired('The audit log needs the owner\'s API token.');
      checkPage(page);
      const m = em();
      const row = await findPush(urlToken);
      if (!row) throw notFound();
      if (row.user_id !== userId) throw new DomainError('forbidden', 'That push does not belong to you.');
      const [{ total }] = (await m.execute<{ total: string }[]>(
        'select count(*) as total from audit_entries where push_id = ?',
        [row.id],
      )) as [{ total: string }];
      const rows = await m.execute<{ kind: AuditKind; ip: string; user_agent: string; referrer: string; created_at: string }[]>(
        `select kind, ip, user_agent, referrer, created_at from audit_entries where push_id = ?
         order by created_at, id limit ? offset ?`,
        [row.id, PAGE_SIZE, (page - 1) * PAGE_SIZE],
      );
      return {
        items: rows.map((r) => ({ kind: r.kind, ip: r.ip, user_agent: r.user_agent, referrer: r.referrer, created_at: iso(r.created_at) })),
        total: Number(total),
        page,
        perPage: PAGE_SIZE,
      };
    },

    async list(state: 'active' | 'expired', page: number, ctx: RequestContext): Promise<Page<PushOwner>> {
      const userId = ctx.actor.userId;
      if (!userId) throw authRequired('Listing pushes needs an API token.');
      checkPage(page);
      const now = nowOf(ctx);
      const base = baseOf(ctx);
      const m = em();
      const where =
        state === 'active'
          ? 'user_id = ? and not expired and expires_at > ?'
          : 'user_id = ? and (expired or expires_at <= ?)';
      const [{ total }] = (await m.execute<{ total: string }[]>(`select count(*) as total from pushes where ${where}`, [userId, now])) as [
        { total: string },
      ];
      const rows = await m.execute<PushRow[]>(
        `select * from pushes where ${where} order by created_at desc, id desc limit ? offset ?`,
        [userId, now, PAGE_SIZE, (page - 1) * PAGE_SIZE],
      );
      return { items: rows.map((r) => ownerRecord(r, now, base)), total: Number(total), page, perPage: PAGE_SIZE };
    },

    async downloadFile(urlToken: string, fileId: string, token: string): Promise<{ filename: string; contentType: string; bytes: Buffer }> {
      const m = em();
      const row = await findPush(urlToken);
      if (!row) throw notFound();
      const check = verifyDownloadToken(settings.signingSecret, token, urlToken, fileId);
      if (!check.ok) {
        throw check.reason === 'link_expired'
          ? new DomainError('link_expired', 'This download link has expired; retrieve the push again for a new one.')
          : new DomainError('invalid_link', 'This download link is not valid for this file.');
      }
      const [file] = await m.execute<(FileRow & { content: Buffer })[]>(
        'select id, filename_ciphertext, content_type, size, content from push_files where id = ? and push_id = ?',
        [fileId, row.id],
      );
      if (!file) throw new DomainError('not_found', 'This file is no longer available.');
      return {
        filename: keyring.decryptText(file.filename_ciphertext, aad.filename(file.id)),
        contentType: file.content_type,
        bytes: keyring.decrypt(file.content, aad.content(file.id)),
      };
    },
  };
}

/** The additional-data contexts envelopes are bound to (tests use them to decrypt what is stored). */
export const envelopeContexts = aad;
