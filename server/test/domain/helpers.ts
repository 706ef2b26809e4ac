/** Shared set-up of the domain tests: a Core on a fresh database, request contexts, direct SQL. */
import { afterAll } from 'vitest';
import { createCore, type Core, type RequestContext, type Settings } from '../../src/core.js';
import { createMigratedDatabase, makeSettings, type TestDatabase } from '../support/db.js';

export const BASE = 'http://push.test';

export function ctx(
  userId: string | null = null,
  extra: Partial<RequestContext> & { ip?: string; userAgent?: string; referrer?: string } = {},
): RequestContext {
  return {
    actor: {
      userId,
      ip: extra.ip ?? '203.0.113.7',
      userAgent: extra.userAgent ?? 'vitest',
      referrer: extra.referrer ?? '',
    },
    baseUrl: extra.baseUrl ?? BASE,
    ...(extra.now ? { now: extra.now } : {}),
    ...(extra.deadline ? { deadline: extra.deadline } : {}),
  };
}

export interface Harness {
  db: TestDatabase;
  core: Core;
  /** Another Core on the same database (a second server process, as far as the data is concerned). */
  second(overrides?: Partial<Settings>): Promise<Core>;
  /** A fresh Core with other settings on the same database. */
  withSettings(overrides: Partial<Settings>): Promise<Core>;
  user(email?: string): Promise<{ userId: string; token: string; email: string }>;
}

/** One database per test file; every Core made here is closed and the database dropped after the file. */
export async function harness(overrides: Partial<Settings> = {}): Promise<Harness> {
  const db = await createMigratedDatabase();
  const cores: Core[] = [];
  const make = async (o: Partial<Settings>) => {
    const core = await createCore(makeSettings({ databaseUrl: db.url, ...overrides, ...o }));
    cores.push(core);
    return core;
  };
  const core = await make({});
  afterAll(async () => {
    for (const c of cores) await c.close();
    await db.drop();
  });
  let n = 0;
  return {
    db,
    core,
    second: (o = {}) => make(o),
    withSettings: (o) => make(o),
    async user(email?: string) {
      n += 1;
      const e = email ?? `user${n}-${Math.random().toString(36).slice(2, 8)}@example.com`;
      const made = await core.users.createUser(e);
      return { ...made, email: e };
    },
  };
}
