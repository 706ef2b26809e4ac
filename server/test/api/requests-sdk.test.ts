/**
 * Requests through the published SDK's client (issue 24) on the real server: the five-line flow of docs/requests.md, and a
 * sealed answer (HPKE to the requester's X25519 key, made in this process with WebCrypto) after which neither the
 * plaintext nor the content key is anywhere in the database or the server's log.
 */
import { createSecretPushClient, generateRequestKeyPair, MissingKeyError } from '@secret-push/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRealApi, type RealApi } from './support/real.js';

describe('requests with the SDK', () => {
  let api: RealApi;
  let token: string;

  beforeAll(async () => {
    api = await startRealApi();
    token = (await api.user('sdk-requester@example.org')).token;
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('runs the flow of docs/requests.md: create, answer anonymously, open the answer', async () => {
    const requester = createSecretPushClient({ baseUrl: api.baseUrl, token });
    const responder = createSecretPushClient({ baseUrl: api.baseUrl });
    // The five lines of docs/requests.md.
    const request = await requester.createRequest({
      request: 'The staging DB password, please',
      expire_after_views: 1,
    });
    await responder.respondToRequest(request.url_token, { payload: 'hunter2' });
    const answer = await requester.openResponse(request.url_token);
    expect(answer.payload).toBe('hunter2');
    const after = await requester.getRequest(request.url_token);
    expect(after.state).toBe('collected');

    const kinds: string[] = [];
    for await (const entry of requester.requestAudit(request.url_token)) kinds.push(entry.kind);
    expect(kinds).toEqual(['creation', 'fulfilled', 'collected']);
    const closed: string[] = [];
    for await (const r of requester.expiredRequests()) closed.push(r.url_token);
    expect(closed).toContain(request.url_token);

    const pending = await requester.createRequest({ request: 'another' });
    const active: string[] = [];
    for await (const r of requester.activeRequests()) active.push(r.url_token);
    expect(active).toContain(pending.url_token);
    expect((await requester.revokeRequest(pending.url_token)).state).toBe('revoked');
    await expect(responder.respondToRequest(pending.url_token, { payload: 'late' })).rejects.toMatchObject({
      status: 410,
      code: 'request_closed',
    });
    expect((await requester.previewRequest(pending.url_token)).url).toBe(`${api.baseUrl}/r/${pending.url_token}`);
  });

  it('seals an answer to the requester’s key: the server stores envelopes only and the requester opens it', async () => {
    const plaintext = 'sealed-secret-7f3c9e1d2b';
    const { keyPair, publicKey } = await generateRequestKeyPair();
    expect(keyPair.privateKey.extractable).toBe(false);
    const requester = createSecretPushClient({ baseUrl: api.baseUrl, token });
    const responder = createSecretPushClient({ baseUrl: api.baseUrl });
    const request = await requester.createRequest({ request: 'Seal it', public_key: publicKey });
    expect(request.sealing).toEqual({ scheme: 'hpke-x25519-sha256-aes256gcm', version: 1, public_key: publicKey });

    const view = await responder.getRequest(request.url_token);
    expect(view).toMatchObject({ audience: 'responder', sealing: { public_key: publicKey } });
    // An ordinary answer is refused: the request takes only sealed ones.
    const raw = await fetch(`${api.baseUrl}/api/v2/requests/${request.url_token}/response`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ push: { payload: 'in the clear' } }),
    });
    expect(raw.status).toBe(422);

    await responder.respondToRequest(request.url_token, { payload: plaintext });
    const owner = await requester.getRequest(request.url_token);
    expect(owner.audience === 'owner' && owner.answer?.sealed_key).toMatch(/^sph1\.[A-Za-z0-9_-]{107}$/);

    await expect(requester.openResponse(request.url_token)).rejects.toBeInstanceOf(MissingKeyError);
    const other = await generateRequestKeyPair();
    await expect(requester.openResponse(request.url_token, { keyPair: other.keyPair })).rejects.toMatchObject({
      code: 'decryption_failed',
    });
    const opened = await requester.openResponse(request.url_token, { keyPair });
    expect(opened.payload).toBe(plaintext);
    expect(opened.client_encryption).toEqual({ scheme: 'aes-256-gcm', version: 1 });

    // Nowhere on the server: every text column of every table, and the log.
    const tables = await api.db.query<{ table_name: string; column_name: string }>(
      `select table_name, column_name from information_schema.columns
       where table_schema = 'public' and data_type in ('text', 'character varying', 'jsonb', 'bytea')`,
    );
    const columnsHolding = async (needle: string): Promise<string[]> => {
      const found: string[] = [];
      for (const { table_name, column_name } of tables) {
        const hits = await api.db.query(
          `select 1 from "${table_name}" where position($1::bytea in convert_to("${column_name}"::text, 'UTF8')) > 0 limit 1`,
          [Buffer.from(needle)],
        );
        if (hits.length > 0) found.push(`${table_name}.${column_name}`);
      }
      return found;
    };
    expect(await columnsHolding(plaintext)).toEqual([]);
    // The scan finds what is stored as sent: the sealed key is there, in its column.
    const sealedKey = owner.audience === 'owner' ? owner.answer!.sealed_key! : '';
    expect(await columnsHolding(sealedKey)).toEqual(['requests.sealed_key']);
    expect(api.logs.join('\n')).not.toContain(plaintext);
  });
});
