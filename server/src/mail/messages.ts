/**
 * The texts of the emails, in the recipient's language (en, de, es, fr; other locales get English): a text part and
 * an HTML part with the same content. A push's message holds its link, who sent it, its expiry in words and the
 * instance's name, and says when a passphrase is needed; it never holds the payload, the passphrase, a file, a name
 * or a note (none of them is even passed in).
 */
import { messageLocale, type MessageLocale } from '@secret-push/rules';
import type { BrandSettings } from '../config/brand-settings.js';

/**
 * What a message shows of the brand (PWPUSH_BRAND_*, the instance's today; a workspace's once the caller resolves it):
 * its accent on the button, its footer line and links. Unset, the message looks as it always did.
 */
export type MailBrand = Pick<BrandSettings, 'accentColor' | 'footerText' | 'imprintUrl' | 'privacyUrl'>;

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

interface PushStrings {
  subject(sender: string): string;
  intro(sender: string, instance: string): string;
  expiry(when: string, relative: string, views: string): string;
  views(n: number): string;
  passphrase: string;
  footer(instance: string): string;
  open: string;
}

const PUSH: Record<MessageLocale, PushStrings> = {
  en: {
    subject: (s) => `${s} sent you a secret link`,
    intro: (s, i) => `${s} sent you a link to a secret on ${i}.`,
    expiry: (when, rel, views) =>
      `The link works until ${when} (${rel}) or for ${views}, whichever comes first. After that it shows nothing.`,
    views: (n) => (n === 1 ? '1 more view' : `${n} more views`),
    passphrase: 'You will also need a passphrase, which the sender gives you separately (it is not in this email).',
    footer: (i) =>
      `${i} never sends the secret itself by email. If you did not expect this message, do not open the link.`,
    open: 'Open the secret',
  },
  de: {
    subject: (s) => `${s} hat Ihnen einen geheimen Link gesendet`,
    intro: (s, i) => `${s} hat Ihnen einen Link zu einem Geheimnis auf ${i} gesendet.`,
    expiry: (when, rel, views) =>
      `Der Link funktioniert bis ${when} (${rel}) oder für ${views}, je nachdem, was zuerst eintritt. Danach zeigt er nichts mehr.`,
    views: (n) => (n === 1 ? '1 weiteren Abruf' : `${n} weitere Abrufe`),
    passphrase:
      'Sie benötigen außerdem eine Passphrase, die Ihnen der Absender separat mitteilt (sie steht nicht in dieser E-Mail).',
    footer: (i) =>
      `${i} versendet das Geheimnis selbst nie per E-Mail. Wenn Sie diese Nachricht nicht erwartet haben, öffnen Sie den Link nicht.`,
    open: 'Geheimnis öffnen',
  },
  es: {
    subject: (s) => `${s} te ha enviado un enlace secreto`,
    intro: (s, i) => `${s} te ha enviado un enlace a un secreto en ${i}.`,
    expiry: (when, rel, views) =>
      `El enlace funciona hasta el ${when} (${rel}) o durante ${views}, lo que ocurra primero. Después no mostrará nada.`,
    views: (n) => (n === 1 ? '1 visita más' : `${n} visitas más`),
    passphrase:
      'También necesitarás una frase de contraseña que el remitente te dará por separado (no está en este correo).',
    footer: (i) => `${i} nunca envía el secreto en sí por correo. Si no esperabas este mensaje, no abras el enlace.`,
    open: 'Abrir el secreto',
  },
  fr: {
    subject: (s) => `${s} vous a envoyé un lien secret`,
    intro: (s, i) => `${s} vous a envoyé un lien vers un secret sur ${i}.`,
    expiry: (when, rel, views) =>
      `Le lien fonctionne jusqu’au ${when} (${rel}) ou pour ${views}, selon ce qui arrive en premier. Ensuite, il n’affiche plus rien.`,
    views: (n) => (n === 1 ? '1 consultation de plus' : `${n} consultations de plus`),
    passphrase:
      'Il vous faudra aussi une phrase secrète, que l’expéditeur vous communique à part (elle ne figure pas dans ce message).',
    footer: (i) =>
      `${i} n’envoie jamais le secret lui-même par e-mail. Si vous n’attendiez pas ce message, n’ouvrez pas le lien.`,
    open: 'Ouvrir le secret',
  },
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** "in 3 days", "in 5 hours", "in 12 minutes", in the language. */
function relative(locale: MessageLocale, from: Date, to: Date): string {
  const minutes = Math.max(1, Math.round((to.getTime() - from.getTime()) / 60_000));
  const format = new Intl.RelativeTimeFormat(locale, { numeric: 'always' });
  if (minutes >= 2 * 24 * 60) return format.format(Math.round(minutes / (24 * 60)), 'day');
  if (minutes >= 120) return format.format(Math.round(minutes / 60), 'hour');
  return format.format(minutes, 'minute');
}

/** The brand's footer: its line, then its links, as text lines and as one HTML paragraph ('' when it has none). */
export function mailFooter(brand: MailBrand | undefined): { text: string[]; html: string } {
  const links = [
    ...(brand?.imprintUrl ? [['Imprint', brand.imprintUrl] as const] : []),
    ...(brand?.privacyUrl ? [['Privacy', brand.privacyUrl] as const] : []),
  ];
  const text = [...(brand?.footerText ? [brand.footerText] : []), ...links.map(([label, href]) => `${label}: ${href}`)];
  if (text.length === 0) return { text, html: '' };
  const html = `<p style="color:#555;font-size:.9em;border-top:1px solid #ccc;padding-top:.5em">${[
    ...(brand?.footerText ? [escapeHtml(brand.footerText)] : []),
    ...links.map(([label, href]) => `<a href="${escapeHtml(href)}">${label}</a>`),
  ].join(' · ')}</p>`;
  return { text, html };
}

/** One message in a shared frame: the paragraphs, the link as a button and as text, the brand's footer. */
function frame(
  locale: MessageLocale,
  subject: string,
  paragraphs: string[],
  link: string,
  open: string,
  brand?: MailBrand,
): MailText {
  const footer = mailFooter(brand);
  const accent = brand?.accentColor ?? MAIL_ACCENT;
  const text = [
    ...paragraphs.slice(0, 1),
    '',
    link,
    '',
    ...paragraphs.slice(1).flatMap((p) => [p, '']),
    ...(footer.text.length ? ['--', ...footer.text] : []),
  ]
    .join('\n')
    .trimEnd();
  const html = `<!doctype html><html lang="${locale}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="font-family:sans-serif;line-height:1.5;max-width:36em">
<p>${escapeHtml(paragraphs[0]!)}</p>
<p><a href="${escapeHtml(link)}" style="display:inline-block;padding:.5em 1em;background:${accent};color:#fff;text-decoration:none;border-radius:4px">${escapeHtml(open)}</a></p>
<p style="word-break:break-all"><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>
${paragraphs
  .slice(1)
  .map((p) => `<p>${escapeHtml(p)}</p>`)
  .join('\n')}
${footer.html}
</body></html>`;
  return { subject, text: `${text}\n`, html };
}

/** The message that carries a push's link to one recipient. */
export function pushLinkMessage(locale: string | null, facts: PushMailFacts): MailText {
  const lang = messageLocale(locale);
  const t = PUSH[lang];
  const when = `${new Intl.DateTimeFormat(lang, { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(facts.expiresAt)} UTC`;
  const paragraphs = [
    t.intro(facts.sender, facts.instanceName),
    t.expiry(when, relative(lang, facts.now, facts.expiresAt), t.views(facts.viewsRemaining)),
    ...(facts.passphraseProtected ? [t.passphrase] : []),
    t.footer(facts.instanceName),
  ];
  return frame(lang, t.subject(facts.sender), paragraphs, facts.link, t.open, facts.brand);
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

interface RequestStrings {
  subject(sender: string): string;
  intro(sender: string, instance: string): string;
  expiry(when: string, relative: string): string;
  how: string;
  footer(instance: string): string;
  open: string;
}

const REQUEST: Record<MessageLocale, RequestStrings> = {
  en: {
    subject: (s) => `${s} asks you to send a secret`,
    intro: (s, i) => `${s} asks you to send them a secret through ${i}.`,
    expiry: (when, rel) => `Open the link to see what is asked and answer it once, until ${when} (${rel}).`,
    how: 'What you send goes only to the person who asked; do not send it by email.',
    footer: (i) => `If you did not expect this message, do not answer: ${i} never asks for a secret by email itself.`,
    open: 'See the request',
  },
  de: {
    subject: (s) => `${s} bittet Sie, ein Geheimnis zu senden`,
    intro: (s, i) => `${s} bittet Sie, über ${i} ein Geheimnis zu senden.`,
    expiry: (when, rel) =>
      `Öffnen Sie den Link, um zu sehen, worum gebeten wird, und antworten Sie einmal, bis ${when} (${rel}).`,
    how: 'Was Sie senden, erhält nur die Person, die gefragt hat; senden Sie es nicht per E-Mail.',
    footer: (i) =>
      `Wenn Sie diese Nachricht nicht erwartet haben, antworten Sie nicht: ${i} fragt nie selbst per E-Mail nach einem Geheimnis.`,
    open: 'Anfrage ansehen',
  },
  es: {
    subject: (s) => `${s} te pide que envíes un secreto`,
    intro: (s, i) => `${s} te pide que le envíes un secreto a través de ${i}.`,
    expiry: (when, rel) => `Abre el enlace para ver qué se pide y responde una vez, hasta el ${when} (${rel}).`,
    how: 'Lo que envíes llega solo a quien lo pidió; no lo envíes por correo.',
    footer: (i) => `Si no esperabas este mensaje, no respondas: ${i} nunca pide un secreto por correo.`,
    open: 'Ver la solicitud',
  },
  fr: {
    subject: (s) => `${s} vous demande d’envoyer un secret`,
    intro: (s, i) => `${s} vous demande de lui envoyer un secret via ${i}.`,
    expiry: (when, rel) =>
      `Ouvrez le lien pour voir ce qui est demandé et répondez une fois, jusqu’au ${when} (${rel}).`,
    how: 'Ce que vous envoyez ne va qu’à la personne qui l’a demandé ; ne l’envoyez pas par e-mail.',
    footer: (i) => `Si vous n’attendiez pas ce message, ne répondez pas : ${i} ne demande jamais de secret par e-mail.`,
    open: 'Voir la demande',
  },
};

/** The message that carries a request's link to one of the addresses the requester listed. */
export function requestLinkMessage(locale: string | null, facts: RequestLinkFacts): MailText {
  const lang = messageLocale(locale);
  const t = REQUEST[lang];
  const when = `${new Intl.DateTimeFormat(lang, { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(facts.expiresAt)} UTC`;
  const paragraphs = [
    t.intro(facts.sender, facts.instanceName),
    t.expiry(when, relative(lang, facts.now, facts.expiresAt)),
    t.how,
    t.footer(facts.instanceName),
  ];
  return frame(lang, t.subject(facts.sender), paragraphs, facts.link, t.open, facts.brand);
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

const NOTICE: Record<RequestNoticeKind, { subject: (i: string) => string; text: (when: string, i: string) => string }> =
  {
    fulfilled: {
      subject: (i) => `Your request on ${i} was answered`,
      text: (when, i) =>
        `Someone answered your request on ${i} (${when}). Sign in and open the request to retrieve the answer.`,
    },
    collected: {
      subject: (i) => `The answer to your request on ${i} was opened`,
      text: (when, i) =>
        `The answer to your request on ${i} was opened for the first time (${when}). If it was not you, treat the secret as exposed.`,
    },
    expired: {
      subject: (i) => `Your request on ${i} expired`,
      text: (when, i) => `Your request on ${i} expired unanswered (${when}); it takes no answer any more.`,
    },
    revoked: {
      subject: (i) => `Your request on ${i} was revoked`,
      text: (when, i) => `Your request on ${i} was revoked (${when}); it takes no answer any more.`,
    },
  };

/** The message that tells the requester of a move of their request (English, as the account emails). */
export function requestNoticeMessage(kind: RequestNoticeKind, facts: RequestNoticeFacts): MailText {
  const t = NOTICE[kind];
  const when = `${new Intl.DateTimeFormat('en', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(facts.at)} UTC`;
  const paragraphs = [
    t.text(when, facts.instanceName),
    `${facts.instanceName} never sends a secret by email: this message holds only the link to your request's page.`,
  ];
  return frame('en', t.subject(facts.instanceName), paragraphs, facts.link, 'Open your request', facts.brand);
}
