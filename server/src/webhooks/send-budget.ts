/**
 * The send budget (issue 45: webhooks amplified traffic, 7 API calls made 162 POSTs to one target). Every webhook POST
 * (a first try, a retry, a test event, a redelivery) is counted before it goes out, against two budgets a window (a
 * clock minute): its account's (`PWPUSH_WEBHOOK_SENDS_PER_MINUTE`, the ten webhooks an owner may have together, so
 * ten webhooks aimed at one target share it), and its target address's (`PWPUSH_WEBHOOK_ADDRESS_SENDS_PER_MINUTE`,
 * every account together, so that many accounts cannot aim the instance at one host). The address is the one the
 * connection goes to, as checked (targets.ts): an IPv4 address (also when IPv6 holds it, mapped or NAT64), an IPv6 /64;
 * many names for one host share it.
 *
 * A POST past either budget is not sent and not dropped: its delivery stays pending, due at the window it is booked
 * to (the first with room in the queue of each full budget), and is not an attempt (its retry schedule does not
 * move). A POST put off so may take the slots its window reserved for the POSTs put off to it; a fresh one may not, so
 * those put off are not passed over by newer ones, and each is looked at once more, not once a window.
 *
 * Counted in PostgreSQL (`webhook_limits`, the function `webhook_send_budget`: Migration20270108000000_webhook_limits),
 * so every server process shares the budgets: each row is locked while a batch is counted. One statement per batch of
 * POSTs, never on a request's path: the asks a process makes in one turn of its event loop (the outbox's fan-out, a
 * dispatcher batch, as each target is resolved) go to the database together.
 */
import { clientAddressKey } from '../client-address.js';
import { sql, type Db } from '../db/sql.js';
import { ipv4Standing } from './targets.js';

export interface BudgetLimits {
  /** POSTs a window one account's webhooks may send together; 0: no budget. */
  perAccount: number;
  /** POSTs a window one target address may receive from every account; 0: no budget. */
  perAddress: number;
  /** The window, in seconds (60; a test shortens it). */
  windowSeconds: number;
}

/** One POST asked for. */
export interface BudgetAsk {
  userId: string;
  /** The address the connection goes to, as checked. */
  address: string;
  /** The window its delivery was put off to, if it was. */
  putOffTo: Date | null;
}

const TAKE = sql<
  {
    accounts: (string | null)[];
    addresses: (string | null)[];
    putOffTo: (Date | null)[];
    accountQuota: number;
    addressQuota: number;
    window: Date;
    windowSeconds: number;
  },
  { waits: (Date | string | null)[] }
>(
  `select webhook_send_budget(:accounts::text[], :addresses::text[], :putOffTo::timestamptz[], :accountQuota,
     :addressQuota, :window, :windowSeconds) as waits`,
);

/** The key of the budget of a target address: the IPv4 address it stands for, else as client addresses are keyed. */
function addressKey(address: string): string {
  return `to:${ipv4Standing(address) ?? clientAddressKey(address)}`;
}

type Waiting = { ask: BudgetAsk; resolve(wait: Date | null): void; reject(error: unknown): void };

/**
 * The budget of this process's sending: `take` answers null (send now, counted) or the window to wait for. Asks made
 * in one turn of the event loop are counted by one statement, in the order asked.
 */
export function sendBudget(db: Db, limits: BudgetLimits) {
  const windowMs = limits.windowSeconds * 1000;
  let waiting: Waiting[] = [];

  async function flush(): Promise<void> {
    const batch = waiting;
    waiting = [];
    const now = Date.now();
    try {
      const [row] = await db.query(TAKE, {
        accounts: batch.map((w) => (limits.perAccount > 0 ? `send:${w.ask.userId}` : null)),
        addresses: batch.map((w) => (limits.perAddress > 0 ? addressKey(w.ask.address) : null)),
        putOffTo: batch.map((w) => w.ask.putOffTo),
        accountQuota: limits.perAccount,
        addressQuota: limits.perAddress,
        window: new Date(now - (now % windowMs)),
        windowSeconds: limits.windowSeconds,
      });
      batch.forEach((w, i) => {
        const wait = row?.waits[i];
        w.resolve(wait === null || wait === undefined ? null : new Date(wait));
      });
    } catch (error) {
      for (const w of batch) w.reject(error);
    }
  }

  return {
    /** Null: send now (counted). A date: not sent; due again then. */
    take(ask: BudgetAsk): Promise<Date | null> {
      if (limits.perAccount === 0 && limits.perAddress === 0) return Promise.resolve(null);
      return new Promise((resolve, reject) => {
        if (waiting.length === 0) setImmediate(() => void flush());
        waiting.push({ ask, resolve, reject });
      });
    },
  };
}

export type SendBudget = ReturnType<typeof sendBudget>;
