/**
 * Sending: one try of each delivery of a batch the dispatcher claimed (dispatcher.ts). The target is checked again and
 * resolved once a batch, for all of the batch's deliveries to its URL (targets.ts); each POST is counted against the
 * send budget (send-budget.ts: one statement for the POSTs asked in one turn of the event loop), and one past it is put
 * off to a later window, unsent; the request goes to that very address (TLS still verifies the URL's host name),
 * signed by the webhook's secrets (signing.ts). A 2xx within 10 s
 * is success; a redirect, any other status, no connection or a timeout is a failure, due again after the next wait of
 * PWPUSH_WEBHOOK_RETRY_SCHEDULE (its `next_attempt_at`, written with the try's outcome), and `failed` after the last.
 * At most 64 KB of an answer is read. An endpoint whose deliveries have failed for 5 days is disabled and its owner
 * emailed.
 */
import type { KeyObject } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Keyring } from '../crypto/envelope.js';
import type { Db } from '../db/sql.js';
import type { JobQueue } from '../jobs/queue.js';
import { OWNER_NOTICE_QUEUE, type OwnerNotice } from './push-event-path.js';
import { deliveryBodyContext } from './push-events.js';
import type { SendBudget } from './send-budget.js';
import { signatureHeaders, signingKey } from './signing.js';
import { checkTarget, TargetRefused, type Target, type TargetRules } from './targets.js';
import type { ClaimedDelivery, DeliveryRow, WebhookRepository, WebhookRow } from './webhook-repository.js';

const TIMEOUT_MS = 10_000;
const ANSWER_MAX_BYTES = 64 * 1024;
const DISABLE_AFTER_MS = 5 * 24 * 60 * 60 * 1000;
/** How long a fan-out waits for its first tries' answers before it writes its deliveries (outbox.ts). */
const FIRST_TRY_WAIT_MS = 200;
/** How long a webhook whose first try outlasted that wait is not waited for again. */
const SLOW_FOR_MS = 60_000;
/**
 * How long, after a fan-out's wait ran out, the fan-outs wait for no webhook at all: many slow endpoints (an owner may
 * register ten) cost the outbox one wait a second at most, not one each.
 */
const NO_WAIT_AFTER_MISS_MS = 1000;

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
 * name resolves to later. Free sockets close after IDLE_MS, or HINT_MARGIN_MS before the endpoint's Keep-Alive hint
 * runs out. Node's own margin is 1 s, which closes every socket at once after its answer when an endpoint hints 1 s
 * (a Node server with `keepAliveTimeout = 1000`, as the bench's receiver): each delivery then paid a new connection
 * (bench: about 4% of the server's CPU in connecting and closing). A socket the endpoint closed just as it was reused
 * costs one more try on a new connection (`post`), not a failure.
 */
export interface DeliveryAgents {
  http: http.Agent;
  https: https.Agent;
  close(): void;
}

const IDLE_MS = 4000;
const HINT_MARGIN_MS = 250;

export function deliveryAgents(): DeliveryAgents {
  const options = {
    keepAlive: true,
    timeout: IDLE_MS,
    agentKeepAliveTimeoutBuffer: HINT_MARGIN_MS,
    maxFreeSockets: 64,
    scheduling: 'lifo' as const,
  };
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
      // As a list (name, value, …): Node writes it as it is, without a header map to build and look up.
      headers: [
        'host',
        url.host,
        'content-type',
        'application/json',
        'content-length',
        String(Buffer.byteLength(body)),
        'user-agent',
        'SecretPush-Webhooks/1',
        ...Object.entries(headers).flat(),
      ],
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
  /** The job queue of emails, when an SMTP relay is configured (the owner of a disabled webhook is emailed). */
  mail: JobQueue | null;
  rules: TargetRules;
  /** Seconds before each retry. */
  schedule: number[];
  agents: DeliveryAgents;
  /** Every POST is counted against it first (send-budget.ts); one past it is put off, not sent. None: no budget. */
  budget?: SendBudget;
}

/** The keys that sign now: the current secret's, and the previous one's until its 24 hours are over. */
function keysOf(hook: WebhookRow, keyring: Keyring, now: Date): KeyObject[] {
  const current = signingKey(keyring.decryptText(hook.secret, secretContext(hook.id)));
  if (!hook.previousSecret || !hook.previousSecretUntil || hook.previousSecretUntil <= now) return [current];
  return [current, signingKey(keyring.decryptText(hook.previousSecret, secretContext(hook.id)))];
}

/** The empty name in a push event's facts (push-event-facts.ts), where the push's name goes. */
const NAME_SLOT = '"name":""';

/** The string value after `key` (`"key":"`), when the JSON holds that key once and the value has no escapes. */
function onlyValueOf(json: string, key: string): string | null {
  const at = json.indexOf(key);
  if (at < 0 || at !== json.lastIndexOf(key)) return null;
  const end = json.indexOf('"', at + key.length);
  const value = end < 0 ? '' : json.slice(at + key.length, end);
  return value && !value.includes('\\') ? value : null;
}

/**
 * The body a delivery sends: its envelope opened, or (a push event) its facts with the push's name put in. The name
 * goes into the facts' one `"name":""` (a key of the event's own, never inside a string: JSON escapes a string's
 * quotes) without parsing them again; facts with no such key, or with two, are parsed, as the older rows may be.
 */
export function deliveryBody(delivery: DeliveryRow, keyring: Keyring): string {
  if (delivery.body !== null) return keyring.decryptText(delivery.body, deliveryBodyContext(delivery.eventId));
  const facts = delivery.facts!;
  const at = facts.indexOf(NAME_SLOT);
  const pushId = at >= 0 && at === facts.lastIndexOf(NAME_SLOT) ? onlyValueOf(facts, '"push_id":"') : null;
  if (pushId !== null) {
    if (!delivery.nameCiphertext) return facts;
    const name = keyring.decryptText(delivery.nameCiphertext, `pushes.name:${pushId}`);
    return `${facts.slice(0, at)}"name":${JSON.stringify(name)}${facts.slice(at + NAME_SLOT.length)}`;
  }
  const event = JSON.parse(facts) as { data: { push_id: string; name: string } };
  if (delivery.nameCiphertext) {
    event.data.name = keyring.decryptText(delivery.nameCiphertext, `pushes.name:${event.data.push_id}`);
  }
  return JSON.stringify(event);
}

/**
 * A try's outcome, with the instant it began (a failure's next try counts from it); `putOff`: not sent, the send
 * budget put it off to that window (not an attempt).
 */
type Tried = TryOutcome & { at: Date; putOff?: Date };

/**
 * The outbox's first tries (`firstTries`), made with a sending's one try (`tryOnce`) and its recording of a batch's
 * outcomes (`record`).
 */
function firstTrier(
  tryOnce: (
    claimed: ClaimedDelivery,
    keys: Map<string, KeyObject[]>,
    targets: Map<string, Promise<Target>>,
  ) => Promise<Tried>,
  record: (batch: ClaimedDelivery[], tries: Promise<Tried>[]) => Promise<void>,
) {
  /** Webhooks whose first try in a fan-out outlasted FIRST_TRY_WAIT_MS: until when their tries are not waited for. */
  const slowUntil = new Map<string, number>();
  /** Until when no fan-out waits for any webhook (a wait ran out just before). */
  let noWaitUntil = 0;

  /**
   * The outbox's first tries (outbox.ts `fanOut`), made before the fan-out writes its deliveries: each tried at once,
   * and those answered 2xx within FIRST_TRY_WAIT_MS are written as delivered by the fan-out's own insert (those the
   * send budget put off, `putOff`, as pending and due at their window), so that a
   * delivery answered at once is written once, not written and then rewritten (bench, in one run with the build
   * before: PostgreSQL's CPU per request of the webhook owner 0.618 ms against 0.663, docs/webhooks.md). The others
   * are written leased to this process, and once the fan-out committed their outcome is recorded as any try's is
   * (`rest`). A webhook whose try outlasted the wait is not waited for again for SLOW_FOR_MS: its deliveries are
   * written leased and handed to the dispatcher (`skipped`), so that a slow endpoint holds the fan-out (and every
   * owner's events behind it) for one wait, not for each fan-out; and for NO_WAIT_AFTER_MISS_MS after a wait ran out,
   * no fan-out waits for any webhook (every delivery skipped), so that many slow endpoints hold it one wait a second.
   */
  async function firstTries(batch: ClaimedDelivery[]) {
    const now = Date.now();
    const waited: ClaimedDelivery[] = [];
    const skipped: ClaimedDelivery[] = [];
    for (const claimed of batch) {
      const until = slowUntil.get(claimed.delivery.webhookId);
      if (until !== undefined && until <= now) slowUntil.delete(claimed.delivery.webhookId);
      (now < noWaitUntil || (until !== undefined && until > now) ? skipped : waited).push(claimed);
    }
    const keys = new Map<string, KeyObject[]>();
    const targets = new Map<string, Promise<Target>>();
    const tries = waited.map((claimed) => tryOnce(claimed, keys, targets));
    const settled: (Tried | undefined)[] = tries.map(() => undefined);
    const ended = tries.map(() => false);
    tries.forEach((t, i) => {
      void t.then(
        (tried) => {
          settled[i] = tried;
          ended[i] = true;
        },
        () => {
          ended[i] = true;
        },
      );
    });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(tries),
      new Promise((resolve) => (timer = setTimeout(resolve, FIRST_TRY_WAIT_MS))),
    ]);
    clearTimeout(timer);
    const answered = new Map<string, number>();
    const putOff = new Map<string, Date>();
    const rest: { claimed: ClaimedDelivery; tried: Promise<Tried> }[] = [];
    waited.forEach((claimed, i) => {
      const tried = settled[i];
      if (tried?.ok) answered.set(claimed.delivery.id, tried.code!);
      else if (tried?.putOff) putOff.set(claimed.delivery.id, tried.putOff);
      else rest.push({ claimed, tried: tries[i]! });
      if (!ended[i]) {
        slowUntil.set(claimed.delivery.webhookId, now + SLOW_FOR_MS);
        noWaitUntil = Date.now() + NO_WAIT_AFTER_MISS_MS;
      }
    });
    // The webhooks slow of late whose minute is over, forgotten (a deleted webhook's entry would otherwise stay).
    if (slowUntil.size > 1000) for (const [id, until] of slowUntil) if (until <= now) slowUntil.delete(id);
    return {
      answered,
      putOff,
      skipped,
      rest: () =>
        record(
          rest.map((r) => r.claimed),
          rest.map((r) => r.tried),
        ),
    };
  }

  return firstTries;
}

/**
 * Sending: the dispatcher's sending of a claimed batch (`send`), and the outbox's first tries (`firstTries`). Each
 * delivery is tried (side by side), the successes recorded in one statement, each failure in its own. A try whose
 * outcome could not be recorded (the database away) stays leased: it is sent again when its lease lapses.
 */
export function webhookDelivery({ db, repo, keyring, mail, rules, schedule, agents, budget }: DeliveryDeps) {
  /** A failure: due again after the schedule's next wait (or failed), and the webhook disabled after 5 days. */
  async function failed(hook: WebhookRow, deliveryId: string, attempts: number, outcome: TryOutcome, now: Date) {
    const wait = schedule[attempts - 1];
    const next = wait === undefined ? null : new Date(now.getTime() + wait * 1000);
    await repo.tried(db, deliveryId, {
      status: next ? 'pending' : 'failed',
      code: outcome.code,
      error: outcome.error,
      next,
      deliveredAt: null,
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
          await mail.enqueue(tx, OWNER_NOTICE_QUEUE, notice);
        }
      });
    }
  }

  /**
   * One try of a pending delivery, not recorded (a disabled webhook's delivery: not sent, failed; one past the send
   * budget: not sent, put off).
   * `keys`: the batch's signing keys by webhook (each webhook's secrets opened once a batch, kept no longer).
   * `targets`: the batch's checked targets by URL (a name resolved and checked once a batch, for all its deliveries).
   */
  async function tryOnce(
    { delivery, hook }: ClaimedDelivery,
    keys: Map<string, KeyObject[]>,
    targets: Map<string, Promise<Target>>,
  ): Promise<Tried> {
    const at = new Date();
    if (!hook?.enabled) return { ok: false, code: null, error: 'webhook disabled', at };
    try {
      let checked = targets.get(hook.url);
      if (!checked) targets.set(hook.url, (checked = checkTarget(hook.url, rules)));
      const target = await checked;
      const wait = await budget?.take({
        userId: hook.userId,
        address: target.address,
        putOffTo: delivery.budgetWindow ?? null,
      });
      if (wait) return { ok: false, code: null, error: null, at, putOff: wait };
      const body = deliveryBody(delivery, keyring);
      let signing = keys.get(hook.id);
      if (!signing) keys.set(hook.id, (signing = keysOf(hook, keyring, at)));
      const headers = signatureHeaders(signing, delivery.id, Math.floor(at.getTime() / 1000), body);
      return { ...(await post(target, headers, body, agents)), at };
    } catch (error) {
      if (!(error instanceof TargetRefused)) throw error;
      return { ok: false, code: null, error: `address refused: ${error.reason}`.slice(0, 200), at };
    }
  }

  /** A failed try recorded: due again after the schedule (or failed); a disabled webhook's delivery failed. */
  async function recordFailure({ delivery, hook }: ClaimedDelivery, tried: Tried): Promise<void> {
    if (!hook?.enabled) {
      await repo.tried(db, delivery.id, {
        status: 'failed',
        code: null,
        error: 'webhook disabled',
        next: null,
        deliveredAt: null,
      });
      return;
    }
    await failed(hook, delivery.id, delivery.attempts + 1, tried, tried.at);
  }

  /**
   * Tries of a batch, side by side: the successes recorded in one statement, each failure in its own. A try whose
   * outcome could not be recorded (the database away) stays leased: it is sent again when its lease lapses.
   */
  async function record(batch: ClaimedDelivery[], tries: Promise<Tried>[]): Promise<void> {
    const successes: { id: string; webhookId: string; code: number }[] = [];
    const putOff: { id: string; until: Date }[] = [];
    const recorded = await Promise.allSettled(
      batch.map(async (claimed, i) => {
        const tried = await tries[i]!;
        if (tried.ok)
          successes.push({ id: claimed.delivery.id, webhookId: claimed.delivery.webhookId, code: tried.code! });
        else if (tried.putOff) putOff.push({ id: claimed.delivery.id, until: tried.putOff });
        else await recordFailure(claimed, tried);
      }),
    );
    // Not recorded (the database away): those deliveries are sent again after their lease (at least once).
    await repo.delivered(successes, new Date());
    // Put off by the budget: due at their window (not recorded: due after their lease, and counted again then).
    await repo.putOff(putOff);
    const thrown = recorded.find((t) => t.status === 'rejected');
    if (thrown) throw thrown.reason;
  }

  return {
    /** The dispatcher's sending of a claimed batch: each delivery tried (side by side), then recorded. */
    send(batch: ClaimedDelivery[]): Promise<void> {
      const keys = new Map<string, KeyObject[]>();
      const targets = new Map<string, Promise<Target>>();
      return record(
        batch,
        batch.map((claimed) => tryOnce(claimed, keys, targets)),
      );
    },
    firstTries: firstTrier(tryOnce, record),
  };
}
