/**
 * verifyWebhook: the Standard Webhooks test vector of the specification's reference libraries, the typed errors (a
 * signature that does not match, a missing header, a timestamp outside 5 minutes, a rotated secret's two
 * signatures), and the header shapes of Fetch and Node. The deliveries of the real server are verified with it in
 * server/test/webhooks/webhooks.test.ts, next to the `standardwebhooks` package.
 */
import { describe, expect, it } from 'vitest';
import {
  verifyWebhook,
  WebhookSignatureError,
  WebhookTimestampError,
  WebhookVerificationError,
} from '../../src/index.js';

// The secret, id and body of the Standard Webhooks libraries' examples; the signature as the `standardwebhooks`
// package (1.1.1, the reference JavaScript library) signs them.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw3/p5fX2f6Yc=';
const ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const TIMESTAMP = '1614265330';
const BODY = '{"test": 2432232314}';
const SIGNATURE = 'v1,CBHJRq4aVNTDZeAcvHDs8DgeUV9ouS8YSnyMfgx8JC4=';
const AT = new Date(1614265330 * 1000);

const headers = (signature = SIGNATURE, timestamp = TIMESTAMP) => ({
  'webhook-id': ID,
  'webhook-timestamp': timestamp,
  'webhook-signature': signature,
});

describe('verifyWebhook', () => {
  it('accepts the reference library’s signature and returns the parsed body', async () => {
    expect(await verifyWebhook(SECRET, headers(), BODY, { now: AT })).toEqual({ test: 2432232314 });
    // Fetch's Headers, Node's lower-case record with arrays, and the body as bytes.
    expect(await verifyWebhook(SECRET, new Headers(headers()), new TextEncoder().encode(BODY), { now: AT })).toEqual({
      test: 2432232314,
    });
  });

  it('accepts any one of several signatures (a rotated secret signs twice)', async () => {
    const other = 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=';
    await expect(verifyWebhook(SECRET, headers(`${other} ${SIGNATURE}`), BODY, { now: AT })).resolves.toBeTruthy();
  });

  it('refuses a changed body, another secret or a missing header with WebhookSignatureError', async () => {
    const changed = verifyWebhook(SECRET, headers(), '{"test": 2432232315}', { now: AT });
    await expect(changed).rejects.toBeInstanceOf(WebhookSignatureError);
    await expect(changed).rejects.toMatchObject({ code: 'bad_signature' });
    const otherSecret = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD8yWl6qJn2sM=';
    await expect(verifyWebhook(otherSecret, headers(), BODY, { now: AT })).rejects.toBeInstanceOf(
      WebhookSignatureError,
    );
    const { 'webhook-id': _id, ...missing } = headers();
    await expect(verifyWebhook(SECRET, missing, BODY, { now: AT })).rejects.toMatchObject({ code: 'missing_headers' });
  });

  it('refuses a timestamp more than 5 minutes away with WebhookTimestampError', async () => {
    const late = new Date(AT.getTime() + 301_000);
    await expect(verifyWebhook(SECRET, headers(), BODY, { now: late })).rejects.toBeInstanceOf(WebhookTimestampError);
    const early = new Date(AT.getTime() - 301_000);
    await expect(verifyWebhook(SECRET, headers(), BODY, { now: early })).rejects.toMatchObject({
      code: 'timestamp_out_of_range',
    });
    // Within 5 minutes: fine.
    await expect(
      verifyWebhook(SECRET, headers(), BODY, { now: new Date(AT.getTime() + 299_000) }),
    ).resolves.toBeTruthy();
  });

  it('says when the secret is not a secret', async () => {
    const error = verifyWebhook('whsec_!!!', headers(), BODY, { now: AT });
    await expect(error).rejects.toBeInstanceOf(WebhookVerificationError);
    await expect(error).rejects.toMatchObject({ code: 'invalid_secret' });
  });
});
