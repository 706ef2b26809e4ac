/**
 * Our server for the conformance tests: createApp over createCore on a fresh database of the embedded test
 * PostgreSQL, plus a second app over its own core on the same database (another "process"), and two users.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createApp, createCore, maxBodyBytes, type Core, type Settings } from '@secret-push/server';
import {
  createMigratedDatabase,
  makeSettings,
  reserveAddress,
  startMailbox,
  withOwnBase,
  type Mailbox,
  type TestDatabase,
} from '@secret-push/server/testing';

export const EMAIL_A = 'owner-a@conformance.test';
export const EMAIL_B = 'user-b@conformance.test';

export interface Instance {
  baseUrl: string;
  /** A second app over its own core on the same database: another "process" for the cross-process requirements. */
  baseUrl2: string;
  tokenA: string;
  tokenB: string;
  /** The instance's request body limit, computed from its file limits as the server does. */
  maxBodyBytes: number;
  close(): Promise<void>;
}

async function listen(core: Core, reserved: { server: Server }): Promise<{ url: string; close(): Promise<void> }> {
  const app = createApp(core);
  await app.locals.ready;
  const { server } = reserved;
  server.on('request', app);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export async function startOurServer(overrides: Partial<Settings>): Promise<Instance> {
  const db: TestDatabase = await createMigratedDatabase('sp_conf');
  // Both "processes" are one instance with one public address (the first's): links in email are built only from it.
  const [first, second] = [await reserveAddress(), await reserveAddress()];
  // The suite sends test events as user A, a grade one or more per webhook fault: the per-account limit on them is off
  // for the run, as the README says (PWPUSH_WEBHOOK_TESTS_PER_MINUTE=0), like the per-client rate limit.
  const settings = makeSettings({
    databaseUrl: db.url,
    webhookCalls: { testsPerMinute: 0, redeliveriesPerMinute: 0 },
    ...withOwnBase(overrides, first.baseUrl),
  });
  const core: Core = await createCore(settings);
  const core2: Core = await createCore(settings);
  const [one, two] = [await listen(core, first), await listen(core2, second)];
  const a = await core.users.createUser(EMAIL_A);
  const b = await core.users.createUser(EMAIL_B);
  return {
    baseUrl: one.url,
    baseUrl2: two.url,
    tokenA: a.token,
    tokenB: b.token,
    maxBodyBytes: maxBodyBytes(settings),
    async close() {
      await one.close();
      await two.close();
      await core.close();
      await core2.close();
      await db.drop();
    },
  };
}

/** Our server with an SMTP relay (a real SMTP server in this process) and the suite's hook that reads its mailbox. */
export interface RelayedInstance {
  instance: Instance;
  /** The suite's `mailbox` option: the messages sent to an address, as the suite reads them. */
  mailbox(address: string): Promise<{ subject: string; text: string; html: string }[]>;
  close(): Promise<void>;
}

export async function startRelayedServer(overrides: Partial<Settings> = {}): Promise<RelayedInstance> {
  const mailbox: Mailbox = await startMailbox();
  const instance = await startOurServer({
    ...overrides,
    mail: { ...makeSettings().mail, smtpUrl: mailbox.url, attempts: 3, retrySeconds: 1 },
  });
  return {
    instance,
    mailbox: async (address) =>
      mailbox.messages
        .filter((m) => m.to.includes(address))
        .map((m) => ({ subject: m.parsed.subject ?? '', text: m.parsed.text ?? '', html: m.parsed.html || '' })),
    async close() {
      await instance.close();
      await mailbox.stop();
    },
  };
}
