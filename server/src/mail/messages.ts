/**
 * The texts of the emails, in the recipient's language (the catalogues of server/src/i18n; a locale without a
 * catalogue gets English): a text part and an HTML part with the same content. A push's message holds its link, who
 * sent it, its expiry in words and the instance's name, and says when a passphrase is needed; it never holds the
 * payload, the passphrase, a file, a name or a note (none of them is even passed in).
 */
import { translator, type Translator } from '../i18n/i18n.js';
import type { BrandSettings } from '../config/brand-settings.js';

/**
 * What a message shows of the brand (PWPUSH_BRAND_*, or a workspace's for the mails of its pushes and requests:
 * `MailBrandOf`): its accent on the button, its footer line and links, and a workspace's name at the top (the text
 * still names the instance that carries it). Unset, the message looks as it always did.
 */
export type MailBrand = Pick<BrandSettings, 'accentColor' | 'footerText' | 'imprintUrl' | 'privacyUrl'> & {
  workspaceName?: string;
};

/** The brand of the mails of a push or request of this workspace (null: none, the instance's). */
export type MailBrandOf = (workspaceId: number | null) => Promise<MailBrand>;

/** Our mail button's colour, when the brand sets none. */
const MAIL_ACCENT = '#1f4fa3';

/** What a push's message may say: nothing else of the push reaches this module. */
export interface PushMailFacts {
  link: string;
  sender: string;
  instanceName: string;
  expiresAt: Date;
  viewsRemaining: number;
  passphraseProtected: boolean;
  now: Date;
  brand?: MailBrand;
}

export interface MailText {
  subject: string;
  text: string;
  html: string;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** "in 3 days", "in 5 hours", "in 12 minutes", in the language. */
function relative(locale: string, from: Date, to: Date): string {
  const minutes = Math.max(1, Math.round((to.getTime() - from.getTime()) / 60_000));
  const format = new Intl.RelativeTimeFormat(locale, { numeric: 'always' });
  if (minutes >= 2 * 24 * 60) return format.format(Math.round(minutes / (24 * 60)), 'day');
  if (minutes >= 120) return format.format(Math.round(minutes / 60), 'hour');
  return format.format(minutes, 'minute');
}

/** The brand's footer: its line, then its links, as text lines and as one HTML paragraph ('' when it has none). */
export function mailFooter(brand: MailBrand | undefined, { t }: Translator): { text: string[]; html: string } {
  const links = [
    ...(brand?.imprintUrl ? [[t('layout.footer.link', { kind: 'imprint' }), brand.imprintUrl] as const] : []),
    ...(brand?.privacyUrl ? [[t('layout.footer.link', { kind: 'privacy' }), brand.privacyUrl] as const] : []),
  ];
  const text = [...(brand?.footerText ? [brand.footerText] : []), ...links.map(([label, href]) => `${label}: ${href}`)];
  if (text.length === 0) return { text, html: '' };
  const html = `<p style="color:#555;font-size:.9em;border-top:1px solid #ccc;padding-top:.5em">${[
    ...(brand?.footerText ? [escapeHtml(brand.footerText)] : []),
    ...links.map(([label, href]) => `<a href="${escapeHtml(href)}">${escapeHtml(label)}</a>`),
  ].join(' · ')}</p>`;
  return { text, html };
}

/**
 * One message in a shared frame: the paragraphs, the link as a button and as text (after the first paragraph; a
 * message without a link, `link` null, has none), the brand's footer.
 */
function frame(
  tr: Translator,
  subject: string,
  paragraphs: string[],
  link: string | null,
  open: string,
  brand?: MailBrand,
): MailText {
  const { locale, dir } = tr;
  const footer = mailFooter(brand, tr);
  const accent = brand?.accentColor ?? MAIL_ACCENT;
  const heading = brand?.workspaceName;
  const text = [
    ...(heading ? [heading, ''] : []),
    ...paragraphs.slice(0, 1),
    '',
    ...(link === null ? [] : [link, '']),
    ...paragraphs.slice(1).flatMap((p) => [p, '']),
    ...(footer.text.length ? ['--', ...footer.text] : []),
  ]
    .join('\n')
    .trimEnd();
  const html = `<!doctype html><html lang="${locale}" dir="${dir}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="font-family:sans-serif;line-height:1.5;max-width:36em">
${heading ? `<p style="font-weight:bold;font-size:1.2em">${escapeHtml(heading)}</p>\n` : ''}<p>${escapeHtml(paragraphs[0]!)}</p>
${link === null ? '' : linkHtml(link, open, accent)}
${paragraphs
  .slice(1)
  .map((p) => `<p>${escapeHtml(p)}</p>`)
  .join('\n')}
${footer.html}
</body></html>`;
  return { subject, text: `${text}\n`, html };
}

/** The link as a button, then as text. */
function linkHtml(link: string, open: string, accent: string): string {
  return `<p><a href="${escapeHtml(link)}" style="display:inline-block;padding:.5em 1em;background:${accent};color:#fff;text-decoration:none;border-radius:4px">${escapeHtml(open)}</a></p>
<p style="word-break:break-all"><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>`;
}

/** "3 June 2027 at 14:00 UTC", in the language. */
function whenOf(locale: string, at: Date): string {
  return `${new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(at)} UTC`;
}

/** The message that carries a push's link to one recipient (`locale`: the push's `notify_emails_to_locale`). */
export function pushLinkMessage(locale: string | null, facts: PushMailFacts): MailText {
  const tr = translator(locale);
  const { t } = tr;
  const instance = facts.instanceName;
  const paragraphs = [
    t('mail.push.intro', { sender: facts.sender, instance }),
    t('mail.push.expiry', {
      when: whenOf(tr.locale, facts.expiresAt),
      relative: relative(tr.locale, facts.now, facts.expiresAt),
      views: facts.viewsRemaining,
    }),
    ...(facts.passphraseProtected ? [t('mail.push.passphrase')] : []),
    t('mail.push.footer', { instance }),
  ];
  return frame(
    tr,
    t('mail.push.subject', { sender: facts.sender }),
    paragraphs,
    facts.link,
    t('mail.push.open'),
    facts.brand,
  );
}

/** What an access code's message may say (issue 42): the code, nothing of the push (not even its link). */
export interface AccessCodeFacts {
  /** The 8 digits, shown in two groups of four. */
  code: string;
  instanceName: string;
  /** How long the code works. */
  minutes: number;
  brand?: MailBrand;
}

/**
 * The message that carries a one-time access code to a push's listed address (`locale`: the page the recipient asked
 * from; null, English). It has no link: whoever asked is on the push's page already.
 */
export function accessCodeMessage(locale: string | null, facts: AccessCodeFacts): MailText {
  const tr = translator(locale);
  const { t } = tr;
  const instance = facts.instanceName;
  const shown = `${facts.code.slice(0, 4)} ${facts.code.slice(4)}`;
  const paragraphs = [
    t('mail.accessCode.intro', { instance }),
    t('mail.accessCode.code', { code: shown }),
    t('mail.accessCode.validity', { minutes: facts.minutes }),
  ];
  return frame(tr, t('mail.accessCode.subject', { instance }), paragraphs, null, '', facts.brand);
}

/** What a request's link message may say (the ask, its name, note and files are secrets: none is passed in). */
export interface RequestLinkFacts {
  /** The request's page, where the responder answers (it opens no secret). */
  link: string;
  sender: string;
  instanceName: string;
  expiresAt: Date;
  now: Date;
  brand?: MailBrand;
}

/** The message that carries a request's link to one of the addresses the requester listed. */
export function requestLinkMessage(locale: string | null, facts: RequestLinkFacts): MailText {
  const tr = translator(locale);
  const { t } = tr;
  const instance = facts.instanceName;
  const paragraphs = [
    t('mail.request.intro', { sender: facts.sender, instance }),
    t('mail.request.expiry', {
      when: whenOf(tr.locale, facts.expiresAt),
      relative: relative(tr.locale, facts.now, facts.expiresAt),
    }),
    t('mail.request.how'),
    t('mail.request.footer', { instance }),
  ];
  return frame(
    tr,
    t('mail.request.subject', { sender: facts.sender }),
    paragraphs,
    facts.link,
    t('mail.request.open'),
    facts.brand,
  );
}

/** A move the requester is told of. */
export type RequestNoticeKind = 'fulfilled' | 'collected' | 'expired' | 'revoked';

/** What a notice may say: the requester's own page of the request (sign-in needed), the time, the instance. */
export interface RequestNoticeFacts {
  link: string;
  instanceName: string;
  at: Date;
  brand?: MailBrand;
}

/**
 * The message that tells the requester of a move of their request, in the requester's language (`locale`: their
 * `users.locale`, which the pages record; null, English).
 */
export function requestNoticeMessage(
  kind: RequestNoticeKind,
  locale: string | null,
  facts: RequestNoticeFacts,
): MailText {
  const tr = translator(locale);
  const { t } = tr;
  const instance = facts.instanceName;
  const paragraphs = [
    t('mail.notice.text', { kind, instance, when: whenOf(tr.locale, facts.at) }),
    t('mail.notice.footer', { instance }),
  ];
  return frame(
    tr,
    t('mail.notice.subject', { kind, instance }),
    paragraphs,
    facts.link,
    t('mail.notice.open'),
    facts.brand,
  );
}
