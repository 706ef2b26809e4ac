import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { LOGIN_ATTEMPTS } from '../../src/account/account-service.js';
import { SECURITY_EVENTS } from '../../src/account/security-events.js';
import { USER_IDENTITIES } from '../../src/account/single-sign-on.js';
import { RECOVERY_CODES, TOTP_ATTEMPTS } from '../../src/account/two-factor.js';
import { ADMIN_AUDIT } from '../../src/admin/admin-repository.js';
import { KEY_CHECKS } from '../../src/crypto/key-check.js';
import { migrate, migrationsList, openOrm } from '../../src/db/orm.js';
import { PUSH_AREA_TABLES } from '../../src/push/push-tables.js';
import { PUSH_ACCESS_CODES } from '../../src/push/access-codes.js';
import { REQUEST_AREA_TABLES } from '../../src/request/request-tables.js';
import { API_KEYS } from '../../src/user/api-keys.js';
import { createTestDatabase } from '../support/db.js';

const db = await createTestDatabase();
const orm = await openOrm(db.url);
afterAll(async () => {
  await orm.close(true);
  await db.drop();
});

describe('schema', () => {
  it('the committed migrations create what the entity definitions describe', async () => {
    await migrate(orm);
    const diff = await orm.schema.getUpdateSchemaSQL({ wrap: false, safe: true });
    expect(diff.trim()).toBe('');
  });

  it('the migrations create exactly the columns the tables outside the ORM are described with', async () => {
    await migrate(orm);
    for (const table of [
      ...PUSH_AREA_TABLES,
      PUSH_ACCESS_CODES,
      ...REQUEST_AREA_TABLES,
      LOGIN_ATTEMPTS,
      KEY_CHECKS,
      TOTP_ATTEMPTS,
      RECOVERY_CODES,
      USER_IDENTITIES,
      API_KEYS,
      SECURITY_EVENTS,
      ADMIN_AUDIT,
    ]) {
      const rows = await db.query<{ column_name: string }>(
        "select column_name from information_schema.columns where table_schema = 'public' and table_name = $1",
        [table.name],
      );
      const described = Object.values(table.columns).map((c) => (c as { name: string }).name);
      expect(rows.map((r) => r.column_name).sort(), table.name).toEqual([...described].sort());
    }
  });

  it('lists every migration file of the folder, in order', () => {
    const folder = fileURLToPath(new URL('../../src/db/migrations/', import.meta.url));
    const files = readdirSync(folder)
      .filter((f) => /^Migration\d+_\w+\.ts$/.test(f))
      .map((f) => f.replace(/\.ts$/, ''))
      .sort();
    expect(migrationsList.map((m) => m.name)).toEqual(files);
  });
});
