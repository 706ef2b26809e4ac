/**
 * Requests' emails (issue 24 with the email of issue 22), when mail is configured (`features.requests.
 * email_auto_dispatch`, the same switch as the pushes' links): a move of a request enqueues its message job **in the
 * move's transaction** (`requestMailFollower`, one of the request service's move followers), and the job queue
 * delivers it on any server process (`requestMailDelivery`).
 *
 * - `created` with `notify_emails_to`: each listed address gets the request's link (its page `/r/…`, where the
 *   responder sees the ask and answers; it opens no secret), in `notify_emails_to_locale`, from the requester. These
 *   count against the requester's daily limit with the pushes' links (`PWPUSH_NOTIFY_DAILY_LIMIT`, under the same
 *   per-user lock); at most 5 addresses, read by the pushes' rules.
 * - `fulfilled`, `collected`, `expired`, `revoked`: the requester (the account's address, read when sending) gets a
 *   notice with the link to the request's owner page (`/requests/…`, behind sign-in).
 *
 * No message holds a secret: not the ask, its name, note or files, nor the answer, its push's link or token, nor a
 * passphrase (none of them is passed to the message texts, ../mail/messages.ts). Delivery is the pushes' (one job
 * per message row, each recipient's outcome written as the relay answers, 4xx retried with backoff, 5xx final).
 */
import { randomUUID } from 'node:crypto';
import { isPlainAddress, notifyLimit, NOTIFY_TEXT } from '@secret-push/rules';
import { emailAvailable, mailLinkBase, type Settings } from '../config/settings.js';
import { sql, type Db } from '../db/sql.js';
import type { JobQueue, QueuedJob } from '../jobs/queue.js';
import type { Mailer } from '../mail/mailer.js';
import { requestLinkMessage, requestNoticeMessage, type MailBrandOf, type MailText } from '../mail/messages.js';
import { createNotifyRepository } from '../mail/notify-repository.js';
import { sendEach, type MailMetrics } from '../mail/send-each.js';
import type { MoveFollower, RequestMove } from './request-service.js';
import { REQUESTS, type RequestRow } from './request-tables.js';

export const REQUEST_MAIL_QUEUE = 'email.request';
const DAY_MS = 24 * 60 * 60 * 1000;

type MailKind = 'created' | 'fulfilled' | 'collected' | 'expired' | 'revoked';
type MailStatus = 'pending' | 'processing' | 'completed' | 'partially_failed' | 'failed';

interface MailRow {
  id: string;
  requestId: string;
  kind: MailKind;
  recipients: string[];
  locale: string | null;
  sent: string[];
  refused: string[];
}

const COLUMNS = 'id, request_id, kind, recipients, locale, sent, refused';

const S = {
  insert: sql<{
    id: string;
    requestId: string;
    kind: MailKind;
    userId: string;
    recipients: string[];
    locale: string | null;
    baseUrl: string;
    now: Date;
  }>(
    `insert into request_mail (id, request_id, kind, user_id, recipients, locale, base_url, created_at, updated_at)
     values (:id, :requestId, :kind, :userId, :recipients::text[], :locale, :baseUrl, :now, :now)`,
  ),
  start: sql<{ id: string }>(
    `update request_mail set status = 'processing', attempts = attempts + 1, updated_at = clock_timestamp()
     where id = :id and status in ('pending', 'processing') returning ${COLUMNS}`,
  ),
  markSent: sql<{ id: string; recipient: string }>(
    `update request_mail set sent = array_append(sent, :recipient), updated_at = clock_timestamp()
     where id = :id and not (:recipient = any(sent))`,
  ),
  markRefused: sql<{ id: string; recipient: string; reason: string }>(
    `update request_mail set refused = array_append(refused, :recipient), error_message = :reason,
       updated_at = clock_timestamp()
     where id = :id and not (:recipient = any(refused))`,
  ),
  retryLater: sql<{ id: string; reason: string }>(
    `update request_mail set status = 'pending', error_message = :reason, updated_at = clock_timestamp()
     where id = :id and status = 'processing'`,
  ),
  finish: sql<{ id: string; status: MailStatus; reason: string | null }>(
    `update request_mail set status = :status, error_message = coalesce(:reason, error_message),
       proceed_at = clock_timestamp(), updated_at = clock_timestamp()
     where id = :id and status in ('pending', 'processing')`,
  ),
  request: sql<{ id: string }>(`select ${REQUESTS.list} from requests where id = :id`),
  owner: sql<{ userId: string }, { email: string; locale: string | null }>(
    'select email, locale from users where id = :userId',
  ),
};

function rowOf(r: Record<string, unknown>): MailRow {
  return {
    id: String(r.id),
    requestId: String(r.request_id),
    kind: r.kind as MailKind,
    recipients: r.recipients as string[],
    locale: (r.locale as string | null) || null,
    sent: r.sent as string[],
    refused: r.refused as string[],
  };
}

/**
 * The follower that writes a move's email and its job in the move's transaction; null when mail is not configured
 * (nothing is written then, and the version report says `features.requests.email_auto_dispatch: false`).
 */
export function requestMailFollower(db: Db, settings: Settings, queue: JobQueue | null): MoveFollower | null {
  if (!emailAvailable(settings) || queue === null) return null;
  const limits = createNotifyRepository(db);
  return async (tx, move) => {
    const request = move.request;
    const kind = kindOf(move.type);
    let recipients: string[] = [];
    if (kind === 'created') {
      if (request.notifyEmailsTo === '') return;
      recipients = request.notifyEmailsTo.split(',');
      // The pushes' daily limit, counted and written under the same per-user lock: a refusal refuses the create.
      await limits.lockUser(tx, request.ownerId);
      const today = await limits.userSentSince(tx, request.ownerId, new Date(move.at.getTime() - DAY_MS));
      if (today + recipients.length > settings.mail.notifyDailyLimit) throw notifyLimit(NOTIFY_TEXT.daily);
    }
    const id = randomUUID();
    await tx.query(S.insert, {
      id,
      requestId: request.id,
      kind,
      userId: request.ownerId,
      recipients,
      locale: request.notifyEmailsToLocale === '' ? null : request.notifyEmailsToLocale,
      baseUrl: request.baseUrl,
      now: move.at,
    });
    await queue.enqueue(tx, REQUEST_MAIL_QUEUE, { mail: id });
  };
}

function kindOf(type: RequestMove['type']): MailKind {
  return type.slice('request.'.length) as MailKind;
}

export interface RequestMailDeps {
  db: Db;
  settings: Settings;
  mailer: Mailer;
  metrics?: MailMetrics;
  /** The brand of the request's mails: its workspace's, else the instance's (absent: the instance's). */
  mailBrandOf?: MailBrandOf;
}

/** When the move happened, as the request records it (the notices say so). */
function movedAt(kind: Exclude<MailKind, 'created'>, r: RequestRow): Date {
  if (kind === 'fulfilled') return r.fulfilledAt ?? r.updatedAt;
  if (kind === 'collected') return r.collectedAt ?? r.updatedAt;
  return r.closedAt ?? r.updatedAt;
}

/** The job handler of REQUEST_MAIL_QUEUE: one try of one message row's delivery. */
export function requestMailDelivery({ db, settings, mailer, metrics, mailBrandOf }: RequestMailDeps) {
  const finish = (id: string, status: MailStatus, reason: string | null) => db.query(S.finish, { id, status, reason });
  return async (job: QueuedJob<{ mail: string }>): Promise<void> => {
    const [started] = await db.query(S.start, { id: job.data.mail });
    if (!started) return; // finished already (a retry after a lost acknowledgement), or the request was purged
    const row = rowOf(started);
    const [found] = await db.query(S.request, { id: row.requestId });
    if (!found) return void (await finish(row.id, 'failed', 'The request is gone.'));
    const request = REQUESTS.fromRow(found);
    const now = new Date();
    const base = mailLinkBase(settings);
    const [requester] = await db.query(S.owner, { userId: request.ownerId });
    const owner = requester?.email ?? null;
    const brand = mailBrandOf ? await mailBrandOf(request.workspaceId) : settings.brand;
    let message: MailText;
    let recipients = row.recipients;
    if (row.kind === 'created') {
      // The link is only worth sending while the request takes an answer.
      if (request.state !== 'pending' || request.expiresAt.getTime() <= now.getTime())
        return void (await finish(row.id, 'failed', 'The request was closed before the email was sent.'));
      message = requestLinkMessage(row.locale, {
        link: `${base}/r/${request.urlToken}`,
        sender: owner ?? settings.mail.instanceName,
        instanceName: settings.mail.instanceName,
        expiresAt: request.expiresAt,
        now,
        brand,
      });
    } else {
      if (owner === null || !isPlainAddress(owner))
        return void (await finish(row.id, 'failed', "The requester's account has no address to write to."));
      recipients = [owner];
      // In the requester's language (`users.locale`, recorded by the pages; English when none is).
      message = requestNoticeMessage(row.kind, requester?.locale ?? null, {
        link: `${base}/requests/${request.urlToken}`,
        instanceName: settings.mail.instanceName,
        at: movedAt(row.kind, request),
        brand,
      });
    }
    const { outcome, reason } = await sendEach({ ...row, recipients }, message, job.lastAttempt, {
      mailer,
      metrics,
      from: settings.mail.from,
      markSent: (to) => db.query(S.markSent, { id: row.id, recipient: to }),
      markRefused: (to, why) => db.query(S.markRefused, { id: row.id, recipient: to, reason: why }),
      retryLater: (why) => db.query(S.retryLater, { id: row.id, reason: why }),
    });
    await finish(row.id, outcome, reason);
  };
}
