/**
 * The outbox's fan-out (webhooks/outbox.ts), run by a test on a database whose API sends nothing (`jobWorkers:
 * false`): the marked audit entries become pending deliveries due at once, as a sending process's poll would make
 * them, so that the test can then hand them to processes of its own.
 */
import pg from 'pg';
import { poolDb } from '../../../src/db/sql.js';
import { fanOut } from '../../../src/webhooks/outbox.js';

export async function fanOutNow(url: string): Promise<number> {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    let written = 0;
    for (;;) {
      const out = await fanOut(poolDb(pool), 1000, new Date());
      written += out.deliveries.length;
      if (!out.full && !out.retry) return written;
      if (!out.full) await new Promise((r) => setTimeout(r, 10));
    }
  } finally {
    await pool.end();
  }
}
