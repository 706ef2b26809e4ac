/** The real app on the real Core and a fresh PostgreSQL database of the run's test cluster. */
import { createCore } from '../../../src/core.js';
import type { Core, CoreOptions, Settings } from '../../../src/core.js';
import { reserveAddress, withOwnBase } from '../../support/address.js';
import { createMigratedDatabase, makeSettings, type TestDatabase } from '../../support/db.js';
import { serve, type Served } from './serve.js';

export interface RealApi extends Served {
  core: Core;
  db: TestDatabase;
  settings: Settings;
  /** Moves the services' clock (e.g. to create a push "in the past"); null returns to the system clock. */
  setClock(at: Date | null): void;
  /** Makes a user and returns its API token. */
  user(email: string): Promise<{ userId: string; token: string; email: string }>;
  stop(): Promise<void>;
}

export async function startRealApi(
  overrides: Partial<Settings> = {},
  opts: {
    db?: TestDatabase;
    sweeper?: boolean;
    core?: Pick<
      CoreOptions,
      | 'queue'
      | 'jobWorkers'
      | 'metrics'
      | 'webhookResolver'
      | 'webhookLeaseSeconds'
      | 'webhookBudgetWindowSeconds'
      | 'logger'
    >;
  } = {},
): Promise<RealApi> {
  const { db } = opts;
  const database = db ?? (await createMigratedDatabase('sp_api'));
  const { server, baseUrl } = await reserveAddress();
  const settings = makeSettings({ databaseUrl: database.url, logLevel: 'trace', ...withOwnBase(overrides, baseUrl) });
  const core = await createCore(settings, { sweeper: opts.sweeper ?? false, poolMax: 20, ...opts.core });
  let clockAt: Date | null = null;
  const served = await serve(core, { clock: () => clockAt ?? new Date(), server });
  return {
    ...served,
    core,
    db: database,
    settings,
    setClock(at) {
      clockAt = at;
    },
    async user(email) {
      const made = await core.users.createUser(email);
      return { ...made, email };
    },
    async stop() {
      await served.close();
      await core.close();
      if (!db) await database.drop();
    },
  };
}
