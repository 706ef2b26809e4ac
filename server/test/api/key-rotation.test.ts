/**
 * Master-key rotation seen through the API, on one database served in turn by three instances: key A only; then
 * key B current with A kept as a previous key; then B alone. Secrets written under A stay readable while A is a
 * previous key, new secrets are written under B, and without A an old secret is refused without spending its view.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPush, getPush } from '@secret-push/sdk/generated';
import { createMigratedDatabase, TEST_KEY_A, TEST_KEY_B, type TestDatabase } from '../support/db.js';
import { startRealApi, type RealApi } from './support/real.js';
import { expectData } from './support/sdk.js';

/** The key id written in an envelope: version (1 byte) | id length (1 byte) | id. */
function keyIdOf(envelopeBase64: string): string {
  const bytes = Buffer.from(envelopeBase64, 'base64');
  return bytes.subarray(2, 2 + bytes[1]!).toString('ascii');
}

let db: TestDatabase;
const running: RealApi[] = [];
async function instance(keys: (typeof TEST_KEY_A)[]): Promise<RealApi> {
  const api = await startRealApi({ masterKeys: keys }, { db });
  running.push(api);
  return api;
}

beforeAll(async () => {
  db = await createMigratedDatabase('sp_rotation');
});

afterAll(async () => {
  for (const api of running) await api.stop();
  await db?.drop();
});

async function envelopeKeys(urlToken: string): Promise<{ payload: string; note: string }> {
  const [row] = (await db.query('select payload_ciphertext, note_ciphertext from pushes where url_token = $1', [
    urlToken,
  ])) as {
    payload_ciphertext: string;
    note_ciphertext: string;
  }[];
  return { payload: keyIdOf(row!.payload_ciphertext), note: keyIdOf(row!.note_ciphertext) };
}

describe('master key rotation', () => {
  it('reads secrets written under the old key, writes new ones under the new key, and refuses without the old key', async () => {
    // 1. Key A only.
    const a = await instance([TEST_KEY_A]);
    const old = expectData(
      await createPush({
        client: a.client,
        body: { push: { payload: 'written-under-a', note: 'note-a', expire_after_views: 3 } },
      }),
      201,
    );
    expect(await envelopeKeys(old.url_token)).toEqual({ payload: 'a', note: 'a' });
    await a.stop();
    running.pop();

    // 2. Key B current, A kept to decrypt.
    const b = await instance([TEST_KEY_B, TEST_KEY_A]);
    const readOld = expectData(await getPush({ client: b.client, path: { url_token: old.url_token } }));
    expect(readOld).toMatchObject({ payload: 'written-under-a', views_remaining: 2 });
    const fresh = expectData(
      await createPush({ client: b.client, body: { push: { payload: 'written-under-b', note: 'note-b' } } }),
      201,
    );
    expect(await envelopeKeys(fresh.url_token)).toEqual({ payload: 'b', note: 'b' });
    expect(b.checker.violations).toEqual([]);
    await b.stop();
    running.pop();

    // 3. B alone: the new secret reads; the old one is refused with a 500 that names no secret, and no view is spent.
    const onlyB = await instance([TEST_KEY_B]);
    expect(expectData(await getPush({ client: onlyB.client, path: { url_token: fresh.url_token } })).payload).toBe(
      'written-under-b',
    );
    const refused = await getPush({ client: onlyB.client, path: { url_token: old.url_token } });
    expect(refused.response?.status).toBe(500);
    expect(refused.error).toMatchObject({ code: 'internal_error' });
    expect(JSON.stringify(refused.error)).not.toContain('written-under-a');
    expect(onlyB.logs.join('\n')).not.toContain('written-under-a');
    const [row] = (await db.query('select views_used from pushes where url_token = $1', [old.url_token])) as {
      views_used: number;
    }[];
    expect(row?.views_used).toBe(1);
  });
});
