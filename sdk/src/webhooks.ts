/**
 * Receiving webhooks: `verifyWebhook(secret, headers, rawBody)` checks a delivery by the Standard Webhooks
 * specification (https://www.standardwebhooks.com) and returns the typed event (`WebhookEvent`, the union the contract
 * declares under `webhooks`). It uses WebCrypto (`globalThis.crypto.subtle`) and no Node built-in, so the same code
 * runs in Node 18+ (ESM or CommonJS), browsers, Deno, Bun and edge runtimes.
 *
 * The signature is `v1,` and the base64 of HMAC-SHA256 over `<webhook-id>.<webhook-timestamp>.<raw body>`, keyed
 * with the base64-decoded part of the secret after `whsec_`; `webhook-signature` may carry several (space-separated:
 * two for a day after a secret's rotation), and one match is enough. A timestamp more than 5 minutes from the
 * receiver's clock is refused (a replayed delivery). Verify the body's bytes exactly as received: parse JSON after.
 */
import { SecretPushError } from './errors.js';
import type { WebhookEvent } from './generated/types.gen.js';

/** A delivery that cannot be trusted: `bad_signature`, `missing_headers`, `invalid_secret` or `invalid_body`. */
export class WebhookVerificationError extends SecretPushError {}
/** No signature of `webhook-signature` matches the secret (`bad_signature`), or a header is missing. */
export class WebhookSignatureError extends WebhookVerificationError {}
/** `webhook-timestamp` is more than the tolerance (5 minutes) away from now (`timestamp_out_of_range`). */
export class WebhookTimestampError extends WebhookVerificationError {}

/** Headers as Fetch (`Headers`), Node (`IncomingHttpHeaders`) or a plain object give them. */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Seconds a timestamp may be away from `now` (default 300). */
  toleranceSeconds?: number;
  /** The receiver's clock (tests). */
  now?: Date;
}

const PREFIX = 'whsec_';

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

function base64ToBytes(text: string): Uint8Array | null {
  try {
    const binary = atob(text);
    const out = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/** Compares two strings in time that depends only on their lengths. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/**
 * Verifies a webhook delivery and returns its event. Throws WebhookSignatureError (a missing header, no matching
 * signature), WebhookTimestampError (older or newer than the tolerance) or WebhookVerificationError (a secret or body
 * that is not what the server sends).
 */
export async function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) {
    throw new WebhookSignatureError('A webhook-id, webhook-timestamp and webhook-signature header is needed.', {
      code: 'missing_headers',
    });
  }
  const key = base64ToBytes(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret);
  if (!key || key.length === 0)
    throw new WebhookVerificationError('The secret is not a whsec_ secret.', { code: 'invalid_secret' });
  const seconds = /^[0-9]{1,12}$/.test(timestamp) ? Number(timestamp) : NaN;
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (!Number.isFinite(seconds) || Math.abs(now - seconds) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookTimestampError('The webhook-timestamp is more than 5 minutes away from now.', {
      code: 'timestamp_out_of_range',
    });
  }
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) throw new WebhookVerificationError('WebCrypto is not available here.', { code: 'no_webcrypto' });
  const hmacKey = await subtle.importKey('raw', key as BufferSource, { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  const mac = new Uint8Array(
    await subtle.sign('HMAC', hmacKey, new TextEncoder().encode(`${id}.${timestamp}.${body}`)),
  );
  const expected = bytesToBase64(mac);
  const matches = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .some((s) => sameText(s.slice(3), expected));
  if (!matches) throw new WebhookSignatureError('No webhook signature matches the secret.', { code: 'bad_signature' });
  try {
    return JSON.parse(body) as WebhookEvent;
  } catch (cause) {
    throw new WebhookVerificationError('The webhook body is not JSON.', { code: 'invalid_body', cause });
  }
}
