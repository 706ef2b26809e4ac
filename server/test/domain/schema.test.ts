import { afterAll, describe, expect, it } from 'vitest';
import { migrate, openOrm } from '../../src/db/orm.js';
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
});
