/**
 * The one-statement hot paths of PushService (create, claim a view), next to the code: what the transaction used to
 * guarantee must still hold without it.
 */
import { describe, expect, it } from 'vitest';
import { ctx, harness } from '../../test/domain/helpers.js';
import { TEST_KEY_A, TEST_KEY_B } from '../../test/support/db.js';

const h = await harness();

async function viewsUsedAndAudit(urlToken: string): Promise<{ views: number; kinds: string[] }> {
  const [row] = await h.db.query('select id, views_used from pushes where url_token = $1', [urlToken]);
  const audit = await h.db.query('select kind from audit_entries where push_id = $1 order by id', [row!.id]);
  return { views: row!.views_used as number, kinds: audit.map((r) => r.kind as string) };
}

describe('one-statement hot paths', () => {
  it('writes the push and its creation audit entry together', async () => {
    const push = await h.core.pushes.create({ payload: 'one statement' }, ctx());
    expect(await viewsUsedAndAudit(push.url_token)).toEqual({ views: 0, kinds: ['creation'] });
  });

  it('does not burn a view of a text push when its key is missing (decrypts before claiming)', async () => {
    const underA = await h.withSettings({ masterKeys: [TEST_KEY_A] });
    const push = await underA.pushes.create({ payload: 'under-A', expire_after_views: 1 }, ctx());
    // A rotation to B, then A dropped (the start-up check lets B alone start once B has served the database).
    await h.withSettings({ masterKeys: [TEST_KEY_B, TEST_KEY_A] });
    const onlyB = await h.withSettings({ masterKeys: [TEST_KEY_B] });
    const err = await onlyB.pushes.retrieve(push.url_token, undefined, ctx()).then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toMatch(/no key with id "a"/);
    expect(await viewsUsedAndAudit(push.url_token)).toEqual({ views: 0, kinds: ['creation'] });
    // The view is still there for a server that has the key.
    expect((await underA.pushes.retrieve(push.url_token, undefined, ctx())).payload).toBe('under-A');
  });

  it('claims, audits and expires the last view in the claim itself, answering as the claim found the push', async () => {
    const push = await h.core.pushes.create(
      { payload: 'last', note: 'n', passphrase: 'pw', expire_after_views: 1 },
      ctx(),
    );
    const got = await h.core.pushes.retrieve(push.url_token, 'pw', ctx());
    expect(got).toMatchObject({ payload: 'last', expired: false, expired_on: null, views_remaining: 0 });
    const [row] = await h.db.query(
      'select expired, expired_on, payload_ciphertext, note_ciphertext, passphrase_hash from pushes where url_token = $1',
      [push.url_token],
    );
    expect(row).toMatchObject({
      expired: true,
      payload_ciphertext: null,
      note_ciphertext: null,
      passphrase_hash: null,
    });
    expect(row!.expired_on).not.toBeNull();
    expect((await viewsUsedAndAudit(push.url_token)).kinds).toEqual(['creation', 'view']);
  });
});
