/**
 * What the request service reads from a create's input and writes in its answers, besides the records themselves:
 * the addresses the link is mailed to, an audit entry on the wire, a page number's bounds, and picked fields.
 */
import type { RequestAuditEntry, RequestInput } from '@secret-push/sdk/generated';
import { ApiError, MAX_PAGE, readNotifyRequest, type FieldErrors } from '@secret-push/rules';
import type { RequestAuditRow } from './request-tables.js';

/**
 * The addresses the request's link is mailed to, read by the pushes' rules (at most 5, plain addresses, Password
 * Pusher's locales and messages), added to `errors`; kept whether or not mail is configured.
 */
export function notifyList(input: RequestInput, errors: FieldErrors): { to: string; locale: string } {
  if (!input.notify_emails_to || input.notify_emails_to.trim() === '') return { to: '', locale: '' };
  try {
    const read = readNotifyRequest(input.notify_emails_to, input.notify_emails_to_locale);
    return { to: read.recipients.join(','), locale: read.locale ?? '' };
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    Object.assign(errors, error.details.fields);
    return { to: '', locale: '' };
  }
}

export function auditEntry(r: RequestAuditRow): RequestAuditEntry {
  return {
    kind: r.kind,
    ip: r.ip,
    user_agent: r.userAgent,
    referrer: r.referrer,
    created_at: r.createdAt.toISOString(),
  };
}

export function checkPage(page: number): void {
  if (!Number.isInteger(page) || page < 1 || page > MAX_PAGE) {
    throw new ApiError('validation_failed', `page must be an integer from 1 to ${MAX_PAGE}`, {
      fields: { page: [`must be an integer from 1 to ${MAX_PAGE}`] },
    });
  }
}

export function pick<T extends object>(from: T, keys: readonly (keyof T)[]): Partial<T> {
  const out: Partial<T> = {};
  for (const key of keys) if (from[key] !== undefined) out[key] = from[key];
  return out;
}
