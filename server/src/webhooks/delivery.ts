/**
 * Sending: the job handler of WEBHOOK_QUEUE, one try of one delivery per job. The target is checked again and
 * resolved once (targets.ts), the request goes to that very address (TLS still verifies the URL's host name), signed
 * by the webhook's secrets (signing.ts). A 2xx within 10 s is success; a redirect, any other status, no connection
 * or a timeout is a failure, retried after the next wait of PWPUSH_WEBHOOK_RETRY_SCHEDULE (a job of its own, started
 * after the wait, queued in the transaction that records the try), and `failed` after the last. At most 64 KB of an
 * answer is read. An endpoint whose deliveries have failed for 5 days is disabled and its owner emailed.
 */
import type { KeyObject } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Keyring } from '../crypto/envelope.js';
import type { Db } from '../db/sql.js';
import type { JobQueue, QueuedJob } from '../jobs/queue.js';
import { deliveryBodyContext, OWNER_NOTICE_QUEUE, WEBHOOK_QUEUE, type OwnerNotice } from './push-events.js';
import { signatureHeaders, signingKey } from './signing.js';
import { checkTarget, TargetRefused, type Target, type TargetRules } from './targets.js';
import type { DeliveryRow, WebhookRepository, WebhookRow } from './webhook-repository.js';

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

/**
 * Keep-alive connections, pooled by what was checked: a request goes to `host: <checked address>` on the URL's port
 * (and for https with the URL's host name as servername), and Node's agents key their free sockets by host, port and
 * (https) servername, so a socket taken from the pool is one connected to that very address, never to whatever a
 * name resolves to later. Free sockets close after IDLE_MS (sooner when the endpoint's Keep-Alive hint says so).
 */
export interface DeliveryAgents {
  http: http.Agent;
  https: https.Agent;
  close(): void;
}

const IDLE_MS = 4000;

export function deliveryAgents(): DeliveryAgents {
  const options = { keepAlive: true, timeout: IDLE_MS, maxFreeSockets: 64, scheduling: 'lifo' as const };
  const agents = { http: new http.Agent(options), https: new https.Agent(options) };
  return {
    ...agents,
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}

type Sent = TryOutcome & { staleSocket?: boolean };

/** One POST to the checked address, at most TIMEOUT_MS, reading at most ANSWER_MAX_BYTES of the answer. */
function postOnce(target: Target, headers: Record<string, string>, body: string, agents: DeliveryAgents | false) {
  const { url, address } = target;
  const secure = url.protocol === 'https:';
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return new Promise<Sent>((resolve) => {
    let settled = false;
    const done = (outcome: Sent) => {
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
      agent: agents ? (secure ? agents.https : agents.http) : false,
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
        // A kept-alive socket the endpoint closed as it was reused (before any answer): sent again, on a new one.
        staleSocket: request.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE'),
      }),
    );
    request.end(body);
  });
}

async function post(target: Target, headers: Record<string, string>, body: string, agents: DeliveryAgents) {
  const sent = await postOnce(target, headers, body, agents);
  if (!sent.staleSocket) return sent;
  return postOnce(target, headers, body, false);
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
  agents: DeliveryAgents;
}

/** The keys that sign now: the current secret's, and the previous one's until its 24 hours are over. */
function keysOf(hook: WebhookRow, keyring: Keyring, now: Date): KeyObject[] {
  const current = signingKey(keyring.decryptText(hook.secret, secretContext(hook.id)));
  if (!hook.previousSecret || !hook.previousSecretUntil || hook.previousSecretUntil <= now) return [current];
  return [current, signingKey(keyring.decryptText(hook.previousSecret, secretContext(hook.id)))];
}

type Pending = { delivery: DeliveryRow; hook: WebhookRow | null };

/**
 * The job handler of WEBHOOK_QUEUE, a batch at a time: the batch's pending deliveries read in one statement, each
 * tried (side by side), the successes recorded in one statement, each failure in its own transaction (its retry
 * queued with it). A job whose delivery is no longer pending (delivered, failed, its webhook deleted) does nothing.
 */
export function webhookDelivery({ db, repo, keyring, queue, rules, schedule, mail, agents }: DeliveryDeps) {
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

  /**
   * One try of a pending delivery; its outcome when it was a success (recorded with the batch's), else recorded.
   * `keys`: the batch's signing keys by webhook (each webhook's secrets opened once a batch, kept no longer).
   */
  async function attempt(
    { delivery, hook }: Pending,
    keys: Map<string, KeyObject[]>,
  ): Promise<{ code: number; webhookId: string } | null> {
    const now = new Date();
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
      return null;
    }
    let outcome: TryOutcome;
    try {
      const target = await checkTarget(hook.url, rules);
      const body = keyring.decryptText(delivery.body, deliveryBodyContext(delivery.eventId));
      let signing = keys.get(hook.id);
      if (!signing) keys.set(hook.id, (signing = keysOf(hook, keyring, now)));
      const headers = signatureHeaders(signing, delivery.id, Math.floor(now.getTime() / 1000), body);
      outcome = await post(target, headers, body, agents);
    } catch (error) {
      if (!(error instanceof TargetRefused)) throw error;
      outcome = { ok: false, code: null, error: `address refused: ${error.reason}`.slice(0, 200) };
    }
    if (outcome.ok) return { code: outcome.code!, webhookId: hook.id };
    await failed(hook, delivery.id, delivery.attempts + 1, outcome, now);
    return null;
  }

  return async (jobs: QueuedJob<{ delivery: string }>[]): Promise<{ failed: Set<string> }> => {
    // Jobs of one delivery (a retry asked while one was queued) share one try.
    const ids = [...new Set(jobs.map((job) => job.data.delivery))];
    const pending = await repo.pendingDeliveries(ids);
    const failedIds = new Set<string>();
    const successes: { id: string; webhookId: string; code: number }[] = [];
    const keys = new Map<string, KeyObject[]>();
    await Promise.all(
      ids.map(async (id) => {
        const found = pending.get(id);
        if (!found) return;
        try {
          const success = await attempt(found, keys);
          if (success) successes.push({ id, ...success });
        } catch {
          failedIds.add(id);
        }
      }),
    );
    try {
      await repo.delivered(successes, new Date());
    } catch {
      // Not recorded: those jobs are retried (and their deliveries sent again: at least once).
      for (const s of successes) failedIds.add(s.id);
    }
    return { failed: new Set(jobs.filter((job) => failedIds.has(job.data.delivery)).map((job) => job.id)) };
  };
}
