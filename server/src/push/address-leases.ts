/**
 * Leases on the anonymous storage quota: how one process counts an address's creates without every create updating
 * (and locking, until its commit) the address's single `storage_windows` row.
 *
 * The row stays the authority shared by every instance: it holds the bytes stored in the window **plus** the bytes
 * each instance has reserved but not used yet (its lease). A create takes its bytes from this process's lease, which
 * JavaScript counts one create after the other without a lock; only when the lease is short does the process reserve
 * more from the row (the shortfall plus a chunk; or the shortfall alone when a chunk no longer fits), one reservation
 * at a time per address, the other creates of that address waiting for it.
 *
 * So the row never goes over the quota (every byte stored was reserved first), and on one instance a create is
 * refused exactly when the bytes stored in the window plus its own would go over (the row minus this lease is what is
 * stored). With several instances, another instance's unused lease (at most a chunk) counts as used until that
 * instance uses it or stops (`returnAll`); a process that dies leaves its lease counted until the hour is over. Both
 * err on the side of refusing. Under one address's burst of concurrent creates, the row is written once per chunk
 * rather than once per create, so the creates no longer queue behind each other's commits.
 */

/** The anonymous storage quota a create is counted against: its address's window (a clock hour) and the quota. */
export interface AddressQuota {
  scope: string;
  windowStart: Date;
  limit: number;
}

/** Reserves bytes in a window's row; the row's new total, or null when the quota would go over (nothing changed). */
export type Reserve = (quota: AddressQuota, bytes: number) => Promise<number | null>;
/** The row's total (0 when it has none). */
export type WindowTotal = (quota: AddressQuota) => Promise<number>;
/** Gives bytes back to a window's row (a stopping process's unused lease). */
export type GiveBack = (quota: AddressQuota, bytes: number) => Promise<void>;

/** A create's bytes, taken from the lease; `used` is what the window holds with them (for the RateLimit fields). */
export interface Taken {
  used: number;
  /** Puts the bytes back in the lease: the create stored nothing. */
  untake(): void;
}

/** The create would go over the quota: `used` is what the window holds without it. */
export interface Refused {
  refused: true;
  used: number;
}

interface Lease {
  quota: AddressQuota;
  /** The row's total as of this process's last reservation (other instances' later ones unseen). */
  rowBytes: number;
  /** Reserved in the row, not used yet. */
  left: number;
  /** The reservation under way, which the address's other creates wait for. */
  reserving: Promise<boolean> | null;
}

/** Addresses with a lease at once, at most: beyond them a create is counted in its own statement (null). */
const MAX_LEASES = 10_000;

const IGNORE = () => undefined;

/** The chunk a reservation adds beyond the shortfall: a 64th of the quota, at most 64 KiB. */
function leaseChunk(limit: number): number {
  return Math.min(64 * 1024, Math.floor(limit / 64));
}

export class AddressLeases {
  private readonly leases = new Map<string, Lease>();
  /** The window the leases are of; a later one drops them (the hour is over: their bytes are the old row's). */
  private window = 0;

  constructor(
    private readonly reserve: Reserve,
    private readonly total: WindowTotal,
    private readonly giveBack: GiveBack,
    private readonly maxLeases = MAX_LEASES,
  ) {}

  /**
   * Takes `bytes` for a create counted against `quota`: from the lease, reserving more first when it is short. Null
   * when this process holds too many leases to start another (the caller counts the create in its own statement).
   */
  async take(quota: AddressQuota, bytes: number): Promise<Taken | Refused | null> {
    const lease = this.leaseOf(quota);
    if (!lease) return null;
    for (;;) {
      if (lease.reserving) {
        // Another create of this address is reserving: its outcome (or its error, which is its own) comes first.
        await lease.reserving.then(IGNORE, IGNORE);
        continue;
      }
      if (lease.left >= bytes) {
        lease.left -= bytes;
        return {
          used: lease.rowBytes - lease.left,
          untake: () => {
            lease.left += bytes;
          },
        };
      }
      const reservation = this.grow(lease, bytes - lease.left);
      lease.reserving = reservation;
      const done = () => {
        if (lease.reserving === reservation) lease.reserving = null;
      };
      reservation.then(done, done);
      if (!(await reservation)) return { refused: true, used: Math.max(0, (await this.total(quota)) - lease.left) };
    }
  }

  /** Gives every unused lease back to its row (a stopping process); best effort. */
  async returnAll(): Promise<void> {
    const leases = [...this.leases.values()];
    this.leases.clear();
    for (const lease of leases) {
      if (lease.left > 0) await this.giveBack(lease.quota, lease.left).catch(IGNORE);
    }
  }

  /** Reserves the shortfall plus a chunk, or the shortfall alone when that no longer fits; false when neither fits. */
  private async grow(lease: Lease, shortfall: number): Promise<boolean> {
    const chunk = leaseChunk(lease.quota.limit);
    for (const ask of chunk > 0 ? [shortfall + chunk, shortfall] : [shortfall]) {
      const row = await this.reserve(lease.quota, ask);
      if (row !== null) {
        lease.rowBytes = row;
        lease.left += ask;
        return true;
      }
    }
    return false;
  }

  private leaseOf(quota: AddressQuota): Lease | null {
    const window = quota.windowStart.getTime();
    if (window > this.window) {
      this.leases.clear();
      this.window = window;
    } else if (window < this.window) {
      return null;
    }
    const key = quota.scope;
    let lease = this.leases.get(key);
    if (!lease) {
      if (this.leases.size >= this.maxLeases) return null;
      lease = { quota, rowBytes: 0, left: 0, reserving: null };
      this.leases.set(key, lease);
    }
    return lease;
  }
}
