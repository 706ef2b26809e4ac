/**
 * The SMTP side of email: one Nodemailer transport on `PWPUSH_SMTP_URL`, and what a relay's answer means for a
 * delivery. A 4xx reply or a relay that cannot be reached is temporary (the job is retried with backoff); a 5xx
 * reply is permanent for that recipient. Reasons carry the relay's code and first line only: never the URL (it holds
 * the relay's password) and never a message's content.
 */
import type { Transporter } from 'nodemailer';

/** One message: a single recipient, both parts, a Message-ID that is the same on every try. */
interface OutgoingMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  messageId: string;
}

type SendOutcome = { ok: true } | { ok: false; temporary: boolean; reason: string };

export interface Mailer {
  send(message: OutgoingMessage): Promise<SendOutcome>;
  close(): void;
}

const REASON_MAX = 200;

/** The relay's code and first line, or the connection error's code: nothing else of the error. */
function failureOf(error: unknown): { temporary: boolean; reason: string } {
  const e = (error ?? {}) as { responseCode?: unknown; response?: unknown; code?: unknown };
  if (typeof e.responseCode === 'number') {
    const line = typeof e.response === 'string' ? e.response.split(/\r?\n/)[0]!.replace(/[^\x20-\x7e]/g, '') : '';
    const reason = line.startsWith(String(e.responseCode)) ? line : `${e.responseCode} ${line}`.trim();
    return { temporary: e.responseCode >= 400 && e.responseCode < 500, reason: reason.slice(0, REASON_MAX) };
  }
  const code = typeof e.code === 'string' && /^[A-Z_]{2,32}$/.test(e.code) ? e.code : 'ECONNECTION';
  return { temporary: true, reason: `${code}: the mail relay could not be reached` };
}

/** The mailer of an instance with a relay; Nodemailer is loaded then, not by every server (the bench's RSS). */
export async function createMailer(smtpUrl: string, from: string): Promise<Mailer> {
  const { default: nodemailer } = await import('nodemailer');
  const transport: Transporter = nodemailer.createTransport({
    url: smtpUrl,
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    logger: false,
    debug: false,
  } as Parameters<typeof nodemailer.createTransport>[0]);
  return {
    async send(message) {
      try {
        await transport.sendMail({ from, ...message, disableFileAccess: true, disableUrlAccess: true });
        return { ok: true };
      } catch (error) {
        return { ok: false, ...failureOf(error) };
      }
    },
    close() {
      transport.close();
    },
  };
}
