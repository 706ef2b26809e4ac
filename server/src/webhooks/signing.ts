/**
 * The Standard Webhooks signature (https://www.standardwebhooks.com): a secret `whsec_<base64 of 32 bytes>`, a
 * message id `msg_…` that stays the same on every try, and `v1,<base64 HMAC-SHA256>` over `<id>.<timestamp>.<body>`,
 * keyed with the secret's decoded bytes. Any Standard Webhooks library verifies what this signs.
 */
import { createHmac, createSecretKey, randomBytes, randomInt, type KeyObject } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A new signing secret: `whsec_` and the base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64');
}

/** A new delivery id (`webhook-id`): `msg_` and 26 random base62 characters (about 154 bits). */
export function newMessageId(): string {
  let id = 'msg_';
  for (let i = 0; i < 26; i++) id += BASE62[randomInt(62)];
  return id;
}

/**
 * A secret's signing key (its decoded bytes) as a KeyObject: an HMAC keyed with a KeyObject does not import the key
 * anew, so a batch of deliveries to one webhook imports it once.
 */
export function signingKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64'));
}

/** `v1,<signature>` of one key. */
function signWith(key: KeyObject, messageId: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', key).update(`${messageId}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of one try, signed by every key given (the current one, and the previous during a rotation). */
export function signatureHeaders(
  secrets: KeyObject[],
  messageId: string,
  timestamp: number,
  body: string,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  return {
    'webhook-id': messageId,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => signWith(s, messageId, timestamp, body)).join(' '),
  };
}
