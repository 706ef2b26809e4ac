/**
 * Emails to a push's owner, the job handler of OWNER_NOTICE_QUEUE: the read receipts (a push first viewed, or expired
 * unviewed) and the notice that a webhook was disabled after failing for 5 days. A receipt names the push by its
 * name and `push_id` and says when and from which address; never the payload, the passphrase, the note or the link.
 */
import type { Settings } from '../config/settings.js';
import type { Keyring } from '../crypto/envelope.js';
import { sql, type Db } from '../db/sql.js';
import type { QueuedJob } from '../jobs/queue.js';
import type { Mailer } from '../mail/mailer.js';
import { mailFooter } from '../mail/messages.js';
import { translator, type Translator } from '../i18n/i18n.js';
import type { OwnerNotice } from './push-event-path.js';

const S = {
  push: sql<
    { id: string },
    { user_id: string | null; name_ciphertext: string | null; email: string | null; locale: string | null }
  >(
    `select p.user_id, p.name_ciphertext, u.email, u.locale from pushes p left join users u on u.id = p.user_id
     where p.id = :id`,
  ),
  webhook: sql<{ id: string; userId: string }, { url: string; email: string; locale: string | null }>(
    `select w.url, u.email, u.locale from webhooks w join users u on u.id = w.user_id
     where w.id = :id and w.user_id = :userId`,
  ),
};

const esc = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * The message of a notice, from what the job and the database say, in the owner's language (`users.locale`, recorded
 * by the pages; English when none is).
 */
function message(
  notice: OwnerNotice,
  what: string,
  instance: string,
  { t }: Translator,
): { subject: string; text: string } {
  const values = { what, instance, at: notice.at };
  switch (notice.kind) {
    case 'viewed':
      return {
        subject: t('mail.owner.viewed.subject', values),
        text: `${t('mail.owner.viewed.text', { ...values, ip: notice.ip })}\n\n${t('mail.owner.viewed.audit', values)}\n`,
      };
    case 'expired_unviewed':
      return {
        subject: t('mail.owner.expired.subject', values),
        text: `${t('mail.owner.expired.text', values)}\n`,
      };
    case 'webhook_disabled':
      return {
        subject: t('mail.owner.webhookDisabled.subject', values),
        text: `${t('mail.owner.webhookDisabled.text', values)}\n`,
      };
  }
}

export function ownerNoticeDelivery(db: Db, settings: Settings, keyring: Keyring, mailer: Mailer) {
  const instance = settings.mail.instanceName;
  return async (job: QueuedJob<OwnerNotice>): Promise<void> => {
    const notice = job.data;
    let to: string;
    let what: string;
    let locale: string | null;
    if (notice.kind === 'webhook_disabled') {
      const [row] = await db.query(S.webhook, { id: notice.webhookId, userId: notice.userId });
      if (!row) return;
      to = row.email;
      what = row.url;
      locale = row.locale;
    } else {
      const [row] = await db.query(S.push, { id: notice.pushId });
      if (!row?.email) return;
      to = row.email;
      locale = row.locale;
      const name = row.name_ciphertext ? keyring.decryptText(row.name_ciphertext, `pushes.name:${notice.pushId}`) : '';
      what = `${name ? `"${name.slice(0, 200)}" ` : ''}(${notice.pushId})`;
    }
    const tr = translator(locale);
    const said = message(notice, what, instance, tr);
    const { subject } = said;
    const footer = mailFooter(settings.brand, tr);
    const text = footer.text.length ? `${said.text}\n--\n${footer.text.join('\n')}\n` : said.text;
    const html = `<!doctype html><html lang="${tr.locale}" dir="${tr.dir}"><body style="font-family:sans-serif;line-height:1.5">${said.text
      .trim()
      .split('\n\n')
      .map((p) => `<p>${esc(p)}</p>`)
      .join('')}${footer.html}</body></html>`;
    const outcome = await mailer.send({
      to,
      subject: subject.replace(/[\r\n]+/g, ' '),
      text,
      html,
      messageId: `<${job.id}@notice.${instance.replace(/[^A-Za-z0-9]/g, '') || 'secretpush'}>`,
    });
    if (!outcome.ok && outcome.temporary) throw new Error(`temporary mail failure: ${outcome.reason}`);
  };
}
