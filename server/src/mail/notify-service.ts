/**
 * Emailing a push's link (Password Pusher's `notify_emails_to` and `notify_emails`): the checks of a request, the
 * `creation_email_send` entry with its notification and its job, written in the transaction of the push (create)
 * or of the entry (`notifyEmails`), and the delivery that the job queue runs on every server process.
 *
 * Delivery, one job per notification: each recipient gets one message; its outcome is written as soon as the relay
 * answers, so a retry sends only to the recipients still waiting (a relay that accepted a message and a crash before
 * that write is the one window in which a recipient could get the message twice; the Message-ID is the same on every
 * try, so mail software can drop the copy). A temporary failure (4xx, no connection) leaves the notification
 * `pending` and throws, and the queue retries with backoff; after the last try it is `failed` (or `partially_failed`
 * when some recipients got it) with the reason.
 */
import { randomUUID } from 'node:crypto';
import type { AuditEntry, PushInput } from '@secret-push/sdk/generated';
import {
  ApiError,
  isExpired,
  isOwner,
  notFound,
  notifyLimit,
  emailUnavailable,
  notifyRefused,
  NOTIFY_CALLS_PER_MINUTE,
  NOTIFY_MAX_RECIPIENTS,
  NOTIFY_TEXT,
  pushRecord,
  readNotifyRequest,
  requireNotifyScope,
  type NotifyRequest,
} from '@secret-push/rules';
import { emailAvailable, mailLinkBase, type Settings } from '../config/settings.js';
import type { Db } from '../db/sql.js';
import type { JobQueue, QueuedJob } from '../jobs/queue.js';
import type { PushRepository } from '../push/push-repository.js';
import type { PushRow } from '../push/push-tables.js';
import type { RequestContext } from '../request-context.js';
import type { Mailer } from './mailer.js';
import { pushLinkMessage, type MailBrandOf } from './messages.js';
import { createNotifyRepository, type NotificationRow, type NotifyStatus } from './notify-repository.js';
import { sendEach, type MailMetrics } from './send-each.js';

export const NOTIFY_QUEUE = 'email.push-link';
const DAY_MS = 24 * 60 * 60 * 1000;
const MINUTE_MS = 60 * 1000;

/** A create's request to email the link, checked; written with the push by `enqueueWithPush`. */
export interface PreparedNotify extends NotifyRequest {
  baseUrl: string;
}

export interface NotifyService {
  /**
   * Checks a create's notify fields (none → null): the feature, the caller, the list, the locale, an encrypted
   * push. 422 otherwise. The limits that need the database are checked by `enqueueWithPush`.
   */
  prepareForCreate(input: PushInput, ctx: RequestContext): PreparedNotify | null;
  /** In the create's transaction: the limits, the entry, the notification and the job. */
  enqueueWithPush(tx: Db, push: PushRow, request: PreparedNotify, ctx: RequestContext): Promise<void>;
  /** `POST /pushes/{url_token}/notify_emails`. */
  notify(
    urlToken: string,
    body: { notify_emails_to?: string; notify_emails_to_locale?: string | null },
    ctx: RequestContext,
  ): Promise<{ message: string }>;
  /** The `notify_by_email` of audit entries, by entry id. */
  details(entryIds: string[]): Promise<Map<string, NonNullable<AuditEntry['notify_by_email']>>>;
  /** Whether the route exists (`PWPUSH_NOTIFY_BY_EMAIL`). */
  readonly routed: boolean;
}

export interface NotifyDeps {
  db: Db;
  settings: Settings;
  pushes: PushRepository;
  /** The queue (null when email is not available: nothing is ever enqueued then). */
  queue: JobQueue | null;
}

export function createNotifyService({ db, settings, pushes, queue }: NotifyDeps): NotifyService {
  const repo = createNotifyRepository(db);
  const available = emailAvailable(settings) && queue !== null;
  // Without email, why: no relay, or the feature turned off with one (each refusal names its setting).
  const unavailable = () =>
    emailUnavailable(settings.mail.smtpUrl === null || queue === null ? 'no_relay' : 'off', settings.env);
  // Links in email: PWPUSH_PUBLIC_BASE_URL only (a relay needs it), never the request's Host header.
  const baseOf = () => mailLinkBase(settings);
  const deadlineOf = (ctx: RequestContext) => ctx.deadline ?? new Date(Date.now() + 8000);
  const nowOf = (ctx: RequestContext) => ctx.now ?? new Date();

  /** The limits (under the user's lock), then the entry, its notification and its job, in `tx`. */
  async function write(tx: Db, push: PushRow, request: NotifyRequest, baseUrl: string, ctx: RequestContext) {
    const userId = ctx.actor.userId!;
    const now = nowOf(ctx);
    await repo.lockUser(tx, userId);
    const already = await repo.pushRecipients(tx, push.id);
    if (already + request.recipients.length > NOTIFY_MAX_RECIPIENTS) throw notifyLimit(NOTIFY_TEXT.perPush(already));
    const today = await repo.userSentSince(tx, userId, new Date(now.getTime() - DAY_MS));
    if (today + request.recipients.length > settings.mail.notifyDailyLimit) throw notifyLimit(NOTIFY_TEXT.daily);
    const id = randomUUID();
    await repo.insert(tx, {
      id,
      pushId: push.id,
      recipients: request.recipients,
      locale: request.locale,
      baseUrl,
      by: ctx.actor,
      now,
      deadline: deadlineOf(ctx),
    });
    await queue!.enqueue(tx, NOTIFY_QUEUE, { notification: id });
  }

  return {
    routed: settings.mail.notifyByEmail,

    prepareForCreate(input, ctx) {
      const to = input.notify_emails_to;
      if (to === undefined || to.trim() === '') return null;
      requireNotifyScope(ctx.scopes);
      if (!available) throw unavailable();
      if (ctx.actor.userId === null) throw notifyRefused(NOTIFY_TEXT.anonymous);
      const request = readNotifyRequest(to, input.notify_emails_to_locale);
      if (input.client_encryption) throw notifyRefused([NOTIFY_TEXT.encrypted]);
      return { ...request, baseUrl: baseOf() };
    },

    async enqueueWithPush(tx, push, request, ctx) {
      await write(tx, push, request, request.baseUrl, ctx);
    },

    async notify(urlToken, body, ctx) {
      if (!settings.mail.notifyByEmail) throw new ApiError('no_route');
      const userId = ctx.actor.userId;
      if (userId === null) throw new ApiError('authentication_required', 'This operation needs an API token.');
      const push = urlToken.length <= 128 && !urlToken.includes('\u0000') ? await pushes.findByToken(urlToken) : null;
      if (!push) throw notFound();
      if (!isOwner(push, userId)) throw new ApiError('forbidden', "That push doesn't belong to you.");
      const counted = await repo.countCall(userId, nowOf(ctx), NOTIFY_CALLS_PER_MINUTE, MINUTE_MS);
      if (!counted.ok) {
        throw new ApiError('rate_limited', NOTIFY_TEXT.rateLimited, {
          retryAfterSeconds: counted.retryAfterSeconds,
          limit: {
            policy: 'notify',
            quota: NOTIFY_CALLS_PER_MINUTE,
            windowSeconds: 60,
            remaining: 0,
            resetSeconds: counted.retryAfterSeconds,
          },
        });
      }
      if (!available) throw unavailable();
      const request = readNotifyRequest(body.notify_emails_to, body.notify_emails_to_locale);
      if (isExpired(push, nowOf(ctx))) throw notifyRefused(NOTIFY_TEXT.expired);
      if (push.clientEncryption) throw notifyRefused([NOTIFY_TEXT.encrypted]);
      await db.transaction((tx) => write(tx, push, request, baseOf(), ctx));
      return { message: NOTIFY_TEXT.queued };
    },

    async details(entryIds) {
      const rows = await repo.byAuditEntries(entryIds);
      return new Map(
        [...rows].map(([entry, row]) => [
          entry,
          {
            recipients: row.recipients.join(','),
            locale: row.locale,
            status: row.status,
            successful_sends: row.sent.length > 0 ? row.sent.join(',') : null,
            proceed_at: row.proceedAt ? row.proceedAt.toISOString() : null,
            ...(row.errorMessage ? { error_message: row.errorMessage } : {}),
          },
        ]),
      );
    },
  };
}

export interface DeliveryDeps {
  db: Db;
  settings: Settings;
  pushes: PushRepository;
  mailer: Mailer;
  metrics?: MailMetrics;
  /** The brand of the push's mails: its workspace's, else the instance's (absent: the instance's). */
  mailBrandOf?: MailBrandOf;
}

/** The job handler of NOTIFY_QUEUE: one try of one notification's delivery. */
export function notifyDelivery({ db, settings, pushes, mailer, metrics, mailBrandOf }: DeliveryDeps) {
  const repo = createNotifyRepository(db);
  const finish = async (row: NotificationRow, status: NotifyStatus, reason: string | null) => {
    await repo.finish(row.id, status, reason);
    metrics?.notificationFinished(status);
  };
  return async (job: QueuedJob<{ notification: string }>): Promise<void> => {
    const row = await repo.start(job.data.notification);
    if (!row) return; // finished already (a retry after a lost acknowledgement), or the push was purged
    const push = await pushes.findById(row.pushId);
    const now = new Date();
    if (!push || isExpired(push, now)) {
      await finish(row, 'failed', 'The push expired before the email was sent.');
      return;
    }
    const record = pushRecord(push, now, row.baseUrl);
    const sender = (await repo.senderOf(row.userId)) ?? settings.mail.instanceName;
    const message = pushLinkMessage(row.locale, {
      link: record.html_url,
      sender,
      instanceName: settings.mail.instanceName,
      expiresAt: new Date(record.expires_at),
      viewsRemaining: record.views_remaining,
      passphraseProtected: record.passphrase_protected,
      now,
      brand: mailBrandOf ? await mailBrandOf(push.workspaceId) : settings.brand,
    });
    const { outcome, reason } = await sendEach(row, message, job.lastAttempt, {
      mailer,
      metrics,
      from: settings.mail.from,
      markSent: (to) => repo.markSent(row.id, to),
      markRefused: (to, why) => repo.markRefused(row.id, to, why),
      retryLater: (why) => repo.retryLater(row.id, why),
    });
    await finish(row, outcome, reason);
  };
}
