/**
 * Sending: the job handler of WEBHOOK_QUEUE, one try of one delivery per job. The target is checked again and
 * resolved once (targets.ts), the request goes to that very address (TLS still verifies the URL's host name), signed
 * by the webhook's secrets (signing.ts). A 2xx within 10 s is success; a redirect, any other status, no connection
 * or a timeout is a failure, retried after the next wait of PWPUSH_WEBHOOK_RETRY_SCHEDULE (a job of its own, started
 * after the wait, queued in the transaction that records the try), and `failed` after the last. At most 64 KB of an
 * answer is read. An endpoint whose deliveries have failed for 5 days is disabled and its owner emailed.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Keyring } from '../crypto/envelope.js';
import type { Db } from '../db/sql.js';
import type { JobQueue, QueuedJob } from '../jobs/queue.js';
import { deliveryBodyContext, OWNER_NOTICE_QUEUE, WEBHOOK_QUEUE, type OwnerNotice } from './push-events.js';
import { signatureHeaders } from './signing.js';
import { checkTarget, TargetRefused, type Target, type TargetRules } from './targets.js';
import type { WebhookRepository, WebhookRow } from './webhook-repository.js';

const TIMEOUT_MS = 10_000;
const ANSWER_MAX_BYTES = 64 * 1024;
const DISABLE_AFTER_MS = 5 * 24 * 60 * 60 * 1000;

/** The envelope context of a webhook's secret. */
export const secretContext = (webhookId: string) => `webhooks.secret:${webhookId}`;

interface TryOutcome {
  ok: boolean;
  code: number | null;
  error: string | null;
}

/** One POST to the checked address, at most TIMEOUT_MS, reading at most ANSWER_MAX_BYTES of the answer. */
function post(target: Target, headers: Record<string, string>, body: string): Promise<TryOutcome> {
  const { url, address } = target;
  const secure = url.protocol === 'https:';
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return new Promise((resolve) => {
    let settled = false;
    const done = (outcome: TryOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const request = (secure ? https : http).request({
      host: address,
      port: url.port ? Number(url.port) : secure ? 443 : 80,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      agent: false,
      ...(secure && isIP(hostname) === 0 ? { servername: hostname } : {}),
      headers: {
        ...headers,
        host: url.host,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'SecretPush-Webhooks/1',
      },
    });
    const timer = setTimeout(() => {
      request.destroy();
      done({ ok: false, code: null, error: 'timeout (10 s)' });
    }, TIMEOUT_MS);
    request.on('response', (response) => {
      const code = response.statusCode ?? 0;
      let read = 0;
      const finish = () =>
        done(
          code >= 200 && code < 300 ? { ok: true, code, error: null } : { ok: false, code, error: `status ${code}` },
        );
      response.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > ANSWER_MAX_BYTES) {
          response.destroy();
          finish();
        }
      });
      response.on('end', finish);
      response.on('close', finish);
      response.on('error', finish);
    });
    request.on('error', (error: NodeJS.ErrnoException) =>
      done({
        ok: false,
        code: null,
        error: `${/^E[A-Z]+$/.test(error.code ?? '') ? error.code : 'connection failed'}`,
      }),
    );
    request.end(body);
  });
}

export interface DeliveryDeps {
  db: Db;
  repo: WebhookRepository;
  keyring: Keyring;
  queue: JobQueue;
  rules: TargetRules;
  /** Seconds before each retry. */
  schedule: number[];
  /** An SMTP relay is configured (the owner of a disabled webhook is emailed). */
  mail: boolean;
}

/** The secrets that sign now: the current one, and the previous one until its 24 hours are over. */
function secretsOf(hook: WebhookRow, keyring: Keyring, now: Date): string[] {
  const current = keyring.decryptText(hook.secret, secretContext(hook.id));
  if (!hook.previousSecret || !hook.previousSecretUntil || hook.previousSecretUntil <= now) return [current];
  return [current, keyring.decryptText(hook.previousSecret, secretContext(hook.id))];
}

/** The job handler of WEBHOOK_QUEUE. */
export function webhookDelivery({ db, repo, keyring, queue, rules, schedule, mail }: DeliveryDeps) {
  /** A failure: the next try queued (or the delivery failed), and the webhook disabled after 5 days of failures. */
  async function failed(hook: WebhookRow, deliveryId: string, attempts: number, outcome: TryOutcome, now: Date) {
    const wait = schedule[attempts - 1];
    await db.transaction(async (tx) => {
      const next = wait === undefined ? null : new Date(now.getTime() + wait * 1000);
      await repo.tried(tx, deliveryId, {
        status: next ? 'pending' : 'failed',
        code: outcome.code,
        error: outcome.error,
        next,
        deliveredAt: null,
      });
      if (next) await queue.enqueue(tx, WEBHOOK_QUEUE, { delivery: deliveryId }, { startAfterSeconds: wait });
    });
    const failing = await repo.failing(hook.id, now);
    if (failing?.enabled && now.getTime() - failing.since.getTime() >= DISABLE_AFTER_MS) {
      await db.transaction(async (tx) => {
        const owner = await repo.disable(tx, hook.id, now);
        if (owner && mail) {
          const notice: OwnerNotice = {
            kind: 'webhook_disabled',
            webhookId: hook.id,
            userId: owner,
            at: now.toISOString(),
          };
          await queue.enqueue(tx, OWNER_NOTICE_QUEUE, notice);
        }
      });
    }
  }

  return async (job: QueuedJob<{ delivery: string }>): Promise<void> => {
    // The delivery and its webhook in one statement; null when delivered or failed already, or its webhook deleted.
    const pending = await repo.pendingDelivery(job.data.delivery);
    if (!pending) return;
    const { delivery, hook } = pending;
    const now = new Date();
    const attempts = delivery.attempts + 1;
    if (!hook?.enabled) {
      await db.transaction((tx) =>
        repo.tried(tx, delivery.id, {
          status: 'failed',
          code: null,
          error: 'webhook disabled',
          next: null,
          deliveredAt: null,
        }),
      );
      return;
    }
    let outcome: TryOutcome;
    try {
      const target = await checkTarget(hook.url, rules);
      const body = keyring.decryptText(delivery.body, deliveryBodyContext(delivery.eventId));
      const headers = signatureHeaders(
        secretsOf(hook, keyring, now),
        delivery.id,
        Math.floor(now.getTime() / 1000),
        body,
      );
      outcome = await post(target, headers, body);
    } catch (error) {
      if (!(error instanceof TargetRefused)) throw error;
      outcome = { ok: false, code: null, error: `address refused: ${error.reason}`.slice(0, 200) };
    }
    if (outcome.ok) {
      // One statement: delivered, and the webhook no longer failing.
      await repo.delivered(delivery.id, hook.id, outcome.code!, new Date());
      return;
    }
    await failed(hook, delivery.id, attempts, outcome, now);
  };
}
