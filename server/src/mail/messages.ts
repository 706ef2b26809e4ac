/**
 * The texts of the emails, in the recipient's language (en, de, es, fr; other locales get English): a text part and
 * an HTML part with the same content. A push's message holds its link, who sent it, its expiry in words and the
 * instance's name, and says when a passphrase is needed; it never holds the payload, the passphrase, a file, a name
 * or a note (none of them is even passed in).
 */
import { messageLocale, type MessageLocale } from '@secret-push/rules';

/** What a push's message may say: nothing else of the push reaches this module. */
export interface PushMailFacts {
  link: string;
  sender: string;
  instanceName: string;
  expiresAt: Date;
  viewsRemaining: number;
  passphraseProtected: boolean;
  now: Date;
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

/** One message in a shared frame: the paragraphs, the link as a button and as text. */
function frame(locale: MessageLocale, subject: string, paragraphs: string[], link: string, open: string): MailText {
  const text = [...paragraphs.slice(0, 1), '', link, '', ...paragraphs.slice(1).flatMap((p) => [p, ''])]
    .join('\n')
    .trimEnd();
  const html = `<!doctype html><html lang="${locale}"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>
<body style="font-family:sans-serif;line-height:1.5;max-width:36em">
<p>${escapeHtml(paragraphs[0]!)}</p>
<p><a href="${escapeHtml(link)}" style="display:inline-block;padding:.5em 1em;background:#1f4fa3;color:#fff;text-decoration:none;border-radius:4px">${escapeHtml(open)}</a></p>
<p style="word-break:break-all"><a href="${escapeHtml(link)}">${escapeHtml(link)}</a></p>
${paragraphs
  .slice(1)
  .map((p) => `<p>${escapeHtml(p)}</p>`)
  .join('\n')}
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
  return frame(lang, t.subject(facts.sender), paragraphs, facts.link, t.open);
}
