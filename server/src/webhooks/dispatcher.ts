/**
 * The sending loop of webhook deliveries, one per server process that works in the background. `webhook_deliveries`
 * is the durable queue: a statement writes its events' delivery rows (due now, or leased to its process: below) with
 * the change they report, and this loop claims the due ones in batches (WebhookRepository.claimDue: `for update skip locked`, so two
 * processes never claim one delivery), each leased until a deadline kept in its `next_attempt_at`. A try that ends
 * records the outcome (delivered, due again after the retry schedule's wait, or failed); a process that dies with
 * deliveries in hand leaves them due again when their lease lapses, and any process sends them then (at least once).
 *
 * Most deliveries are never claimed: a request's statement leases its deliveries to its own process and hands them to
 * this loop after the commit (`handoff`), which sends them from memory; the loop claims at once when woken, again
 * while claims come back full, and otherwise every `pollMs`; a batch that has been out `stallMs` lets the next start
 * beside it (up to `maxBatches`). Why, measured: docs/decisions/0005-webhook-handoffs-and-batches.md; why the
 * deliveries table is the queue rather than jobs of the job queue: docs/decisions/0004-webhook-deliveries-table-as-queue.md.
 */
export interface DispatcherOptions<T> {
  /** Claims up to `limit` due deliveries (leased), in one statement. */
  claim(limit: number): Promise<T[]>;
  /** Sends a claimed batch and records each outcome; what it leaves unrecorded is sent again after its lease. */
  send(batch: T[]): Promise<void>;
  batchSize: number;
  /**
   * Batches sent side by side: once a batch has been out for `stallMs`, the loop claims the next beside it, so an
   * endpoint that takes its full 10 s holds only its own batch, not every delivery behind it.
   */
  maxBatches: number;
  /** How long a batch is out before the next may start beside it. */
  stallMs: number;
  /**
   * How long a handed-off delivery may wait for others to join its batch (unless the batch fills first): fewer,
   * fuller batches wake the endpoints, this process and the database less often, and record more successes in one
   * statement. Under load the requests' own lock chains (a user's creates are counted one after the other) lost more to
   * those wake-ups than a batch's few milliseconds cost.
   */
  gatherMs: number;
  pollMs: number;
  /** A claim or a batch that threw (the database away): the loop waits a poll and claims again. */
  onError(error: unknown): void;
}

export interface Dispatcher<T> {
  /** Deliveries were committed: claim now (or right after the batch in hand). */
  wake(): void;
  /**
   * Deliveries this process wrote, leased to itself, were committed: send them from memory, if they can start by
   * `startBy` (epoch ms); otherwise they are left to a claim, after their lease. `gathered`: they were batched already
   * (the outbox's fan-out), and wait no more for others to join them.
   */
  handoff(deliveries: T[], startBy: number, gathered?: boolean): void;
  /** The deliveries being sent now. */
  inFlight(): number;
  /**
   * Stops claiming and waits (at most `timeoutMs`) for the batches in hand; the handed-off deliveries not started,
   * which the caller may make due again at once (rather than after their lease).
   */
  stop(timeoutMs?: number): Promise<T[]>;
}

/** Handed-off deliveries held in memory at most, not started yet. */
const MAX_HANDED = 4096;

export function startDispatcher<T>({
  claim,
  send,
  batchSize,
  maxBatches,
  stallMs,
  gatherMs,
  pollMs,
  onError,
}: DispatcherOptions<T>): Dispatcher<T> {
  let stopped = false;
  let woken = false;
  let inFlight = 0;
  /** Ends the pause in progress: stop() always, wake() unless the loop is backing off after an error. */
  let interrupt: (() => void) | null = null;
  let wakeable = true;

  const pause = (ms: number, byWake: boolean) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        interrupt = null;
        resolve();
      }
      interrupt = done;
      wakeable = byWake;
    });

  /** The batches being sent now, and when the last one started. */
  const sending = new Set<Promise<void>>();
  let lastStart = 0;
  /** Handed-off deliveries not started yet (oldest first), each with the time it must start by. */
  let handed: { item: T; startBy: number; at: number }[] = [];
  let lastClaim = 0;

  function takeHanded(): T[] {
    const now = Date.now();
    const taken = handed.length <= batchSize ? handed : handed.slice(0, batchSize);
    handed = taken === handed ? [] : handed.slice(batchSize);
    return taken.filter((h) => h.startBy >= now).map((h) => h.item);
  }

  function start(batch: T[]): void {
    const size = batch.length;
    inFlight += size;
    lastStart = Date.now();
    const sent: Promise<void> = send(batch)
      .catch(onError)
      .finally(() => {
        inFlight -= size;
        sending.delete(sent);
      });
    sending.add(sent);
  }
  const delay = (ms: number) =>
    new Promise<void>((resolve) => {
      setTimeout(resolve, ms).unref();
    });

  async function loop(): Promise<void> {
    while (!stopped) {
      // A batch in flight: the next claim waits for it, unless it has been out for stallMs (an endpoint taking its
      // time) and fewer than maxBatches are out. A fast batch ends first, and the wakes meanwhile make one claim.
      if (sending.size > 0) {
        const waited = Date.now() - lastStart;
        if (sending.size >= maxBatches || waited < stallMs) {
          const ticks = sending.size >= maxBatches ? [] : [delay(stallMs - waited)];
          await Promise.race([...sending, ...ticks]);
          continue;
        }
      }
      // Handed-off deliveries first, unless a claim is due (woken, a burst, or a poll's time since the last one).
      const sincePoll = Date.now() - lastClaim;
      if (!woken && sincePoll < pollMs) {
        const gathering = handed.length > 0 && handed.length < batchSize ? gatherMs - (Date.now() - handed[0]!.at) : 0;
        if (gathering > 0) {
          await pause(Math.min(gathering, pollMs - sincePoll), true);
          continue;
        }
        const batch = takeHanded();
        if (batch.length > 0) start(batch);
        else if (handed.length === 0) await pause(pollMs - sincePoll, true);
        continue;
      }
      woken = false;
      lastClaim = Date.now();
      let batch: T[];
      try {
        batch = await claim(batchSize);
      } catch (error) {
        onError(error);
        if (!stopped) await pause(pollMs, false);
        continue;
      }
      if (batch.length > 0) start(batch);
      // A full claim: more may be due, claim again at once.
      if (batch.length === batchSize) woken = true;
    }
    await Promise.all(sending);
  }
  const running = loop();

  return {
    wake() {
      woken = true;
      if (wakeable) interrupt?.();
    },
    handoff(deliveries, startBy, gathered = false) {
      // Beyond a bound (the sending far behind), the rest is left to claims after their lease, not held in memory.
      if (stopped || handed.length >= MAX_HANDED) return;
      const at = gathered ? Date.now() - gatherMs : Date.now();
      for (const item of deliveries) handed.push({ item, startBy, at });
      if (wakeable) interrupt?.();
    },
    inFlight: () => inFlight,
    async stop(timeoutMs = 10_000) {
      stopped = true;
      interrupt?.();
      const left = handed.map((h) => h.item);
      handed = [];
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([running, new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
      clearTimeout(timer);
      return left;
    },
  };
}
