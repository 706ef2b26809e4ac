/**
 * One try of one message row (a push's link, a request's link or notice): the message goes to each of the row's
 * recipients not settled by an earlier try, one SMTP transaction each, and each outcome is written as the relay
 * answers (so a try cut short never sends twice to a recipient it wrote down). A 4xx leaves the recipient for the
 * next try: the row is marked for a retry and the job throws, so that the queue tries again with its backoff (on the
 * last attempt the row is finished instead). A 5xx is final for that recipient.
 *
 * Each message carries `Message-ID: <row id.recipient index@sender's domain>`: the same on every try, so a receiver
 * can drop a copy sent twice when a process dies between the relay's acceptance and the write that records it.
 */
import type { Mailer } from './mailer.js';
import type { MailText } from './messages.js';
import type { NotifyStatus } from './notify-repository.js';

/** What the metrics learn of deliveries: counts by outcome, never an address. */
export interface MailMetrics {
  /** One message: `sent`, `temporary_failure` (retried) or `permanent_failure`. */
  mailSent(outcome: 'sent' | 'temporary_failure' | 'permanent_failure'): void;
  /** One notification finished with this status. */
  notificationFinished(status: NotifyStatus): void;
}

/** How a row ends once no retry follows. */
export type MailOutcome = 'completed' | 'partially_failed' | 'failed';

export interface MessageRow {
  id: string;
  recipients: readonly string[];
  /** Recipients an earlier try delivered to. */
  sent: readonly string[];
  /** Recipients the relay refused for good on an earlier try. */
  refused: readonly string[];
}

export interface SendEachDeps {
  mailer: Mailer;
  metrics?: MailMetrics | undefined;
  /** The sender's address (PWPUSH_MAIL_FROM): its domain names the messages. */
  from: string;
  markSent(to: string): Promise<unknown>;
  markRefused(to: string, reason: string): Promise<unknown>;
  /** Marks the row for a later try, with the relay's reason. */
  retryLater(reason: string): Promise<unknown>;
}

/** The domain of a From address (`Name <user@example.org>` or `user@example.org`), for Message-IDs. */
function messageIdDomain(from: string): string {
  return (/@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'localhost').toLowerCase();
}

/**
 * Sends `message` to each unsettled recipient of `row`. Throws after marking the row for a retry when a recipient
 * got a temporary failure and this is not the job's last attempt; otherwise returns how the row ends and the first
 * temporary failure's reason (the row's last error), if any.
 */
export async function sendEach(
  row: MessageRow,
  message: MailText,
  lastAttempt: boolean,
  deps: SendEachDeps,
): Promise<{ outcome: MailOutcome; reason: string | null }> {
  const domain = messageIdDomain(deps.from);
  const temporary: string[] = [];
  const sent = [...row.sent];
  for (const [index, to] of row.recipients.entries()) {
    if (sent.includes(to) || row.refused.includes(to)) continue;
    const result = await deps.mailer.send({ to, ...message, messageId: `<${row.id}.${index}@${domain}>` });
    if (result.ok) {
      await deps.markSent(to);
      sent.push(to);
      deps.metrics?.mailSent('sent');
    } else if (result.temporary) {
      temporary.push(result.reason);
      deps.metrics?.mailSent('temporary_failure');
    } else {
      await deps.markRefused(to, result.reason);
      deps.metrics?.mailSent('permanent_failure');
    }
  }
  if (temporary.length > 0 && !lastAttempt) {
    await deps.retryLater(temporary[0]!);
    throw new Error(`temporary mail failure, retried later: ${temporary[0]}`);
  }
  const outcome: MailOutcome =
    sent.length === row.recipients.length ? 'completed' : sent.length > 0 ? 'partially_failed' : 'failed';
  return { outcome, reason: temporary[0] ?? null };
}
