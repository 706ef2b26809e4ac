/**
 * Starts the real server for SDK tests: a fresh database on the run's PostgreSQL cluster (server/test/global-setup.ts),
 * `createCore(settings)`, `createApp(core)` on an ephemeral loopback port, and two users with API tokens.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp } from '@secret-push/server';
import { createCore } from '@secret-push/server';
import type { Settings } from '@secret-push/server';
import { createMigratedDatabase, makeSettings } from '@secret-push/server/testing';

export interface RealServer {
  baseUrl: string;
  users: Array<{ email: string; token: string }>;
  /** Moves a push's timestamps back by `ms` (the server has no settable clock; time expiry is read from the row). */
  backdate(urlToken: string, ms: number): Promise<void>;
  close(): Promise<void>;
}

export async function startRealServer(overrides: Partial<Settings> = {}): Promise<RealServer> {
  const db = await createMigratedDatabase('sp_sdk');
  const core = await createCore(makeSettings({ databaseUrl: db.url, ...overrides }), { poolMax: 4 });
  const app = createApp(core);
  await app.locals.ready;
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const users = [];
  for (const email of ['alice@example.com', 'bob@example.com']) {
    const { token } = await core.users.createUser(email);
    users.push({ email, token });
  }
  return {
    baseUrl,
    users,
    async backdate(urlToken, ms) {
      await db.query(
        `UPDATE pushes SET created_at = created_at - make_interval(secs => $2::double precision / 1000),
                           updated_at = updated_at - make_interval(secs => $2::double precision / 1000),
                           expires_at = expires_at - make_interval(secs => $2::double precision / 1000)
          WHERE url_token = $1`,
        [urlToken, ms],
      );
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await core.close();
      await db.drop();
    },
  };
}
