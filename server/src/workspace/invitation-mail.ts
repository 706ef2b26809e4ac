/**
 * The mail of an invitation by email (issue 41): enqueued in the transaction that makes the invitation, sent by a
 * job of INVITATION_QUEUE. As with account links (../account/account-mail.ts), the job makes the token, keeps its
 * SHA-256 only and mails the link, so nothing at rest or in the queue can accept the invitation; a retried job makes
 * a new token (the earlier one, never delivered or not, stops working). The mail carries the workspace's name, the
 * role and the link, nothing else; it is written in the invitee's language when they have an account with one, else
 * the inviter's, else English.
 */
import type { AssignableRole } from '@secret-push/sdk/generated';
import { mailLinkBase, type Settings } from '../config/settings.js';
import { newInvitationToken, tokenDigest } from '../crypto/tokens.js';
import type { Db } from '../db/sql.js';
import type { QueuedJob } from '../jobs/queue.js';
import type { Mailer } from '../mail/mailer.js';
import { mailFooter } from '../mail/messages.js';
import { translator, type Translator } from '../i18n/i18n.js';
import { invitationStatements as I } from './invitation-repository.js';

export const INVITATION_QUEUE = 'email.invitation';

/** The job: the invitation's id (the rest is read when it runs: a revoked invitation sends nothing). */
export interface InvitationJob {
  invitation: string;
}

/** The page that accepts an invitation; the token goes in the fragment, which browsers never send. */
export const invitationLink = (base: string, token: string): string =>
  `${base.replace(/\/+$/, '')}/workspaces/join#${token}`;

function message(
  facts: { workspace: string; role: AssignableRole; instance: string; link: string },
  { t }: Translator,
): { subject: string; paragraphs: string[] } {
  return {
    subject: t('mail.invitation.subject', { workspace: facts.workspace, instance: facts.instance }),
    paragraphs: [
      t('mail.invitation.intro', { workspace: facts.workspace, instance: facts.instance, role: facts.role }),
      t('mail.invitation.action'),
      facts.link,
      t('mail.invitation.ignore'),
    ],
  };
}

const esc = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The job handler of INVITATION_QUEUE. */
export function invitationMailDelivery(db: Db, settings: Settings, mailer: Mailer) {
  const instance = settings.mail.instanceName;
  return async (job: QueuedJob<InvitationJob>): Promise<void> => {
    const now = new Date();
    const [found] = await db.query(I.forMail, { id: job.data.invitation, now });
    if (!found) return; // revoked, accepted or lapsed since: nothing to send
    const token = newInvitationToken();
    await db.query(I.setDigest, { id: job.data.invitation, digest: tokenDigest(token), now });
    const link = invitationLink(mailLinkBase(settings), token);
    const tr = translator(found.invitee_locale ?? found.inviter_locale ?? undefined);
    const { subject, paragraphs } = message({ workspace: found.workspace, role: found.role, instance, link }, tr);
    const footer = mailFooter(settings.brand, tr);
    const body = `${paragraphs.join('\n\n')}\n`;
    const text = footer.text.length ? `${body}\n--\n${footer.text.join('\n')}\n` : body;
    const html = `<!doctype html><html lang="${tr.locale}" dir="${tr.dir}"><body style="font-family:sans-serif;line-height:1.5">${paragraphs
      .map((p) => (p === link ? `<p><a href="${esc(link)}">${esc(link)}</a></p>` : `<p>${esc(p)}</p>`))
      .join('')}${footer.html}</body></html>`;
    const outcome = await mailer.send({
      to: found.email,
      subject,
      text,
      html,
      messageId: `<${job.id}@invitation.${instance.replace(/[^A-Za-z0-9]/g, '') || 'secretpush'}>`,
    });
    if (!outcome.ok && outcome.temporary) throw new Error(`temporary mail failure: ${outcome.reason}`);
  };
}
