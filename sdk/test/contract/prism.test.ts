/**
 * The Prism mock, started on the bundled spec, answers every operation through the generated SDK with a body that
 * validates against the spec; and every documented error status of every operation (selected with Prism's
 * `Prefer: code=…` header) answers the spec's error body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract } from '@secret-push/contract';
import { createClient, type Client } from '../../src/generated/client/index.js';
import * as sdk from '../../src/generated/sdk.gen.js';
import { startPrism, type PrismProcess } from '../../../openapi/tooling/prism-process.js';

const spec = contract();
const token = 'k7mz4qv2xw5nrt3hbj6ypa2c';

let prism: PrismProcess;
let baseUrl: string;
let client: Client;

beforeAll(async () => {
  prism = await startPrism();
  baseUrl = prism.baseUrl;
  client = createClient({ baseUrl });
}, 120_000);

afterAll(() => {
  prism?.stop();
});

/** Calls one operation through the generated SDK, raw, and checks the answer against the spec. */
async function check(
  operationId: string,
  call: () => Promise<{ response?: Response; data?: unknown; error?: unknown }>,
  expectedStatus: number,
) {
  const result = await call();
  const response = result.response;
  expect(response, `${operationId}: no response`).toBeDefined();
  expect(response!.status).toBe(expectedStatus);
  const body = response!.ok ? result.data : result.error;
  const verdict = spec.validateResponse(operationId, response!.status, response!.headers.get('content-type'), body);
  expect(verdict.errors, `${operationId} ${response!.status}`).toEqual([]);
  expect(response!.headers.get('cache-control')).toBe('no-store');
  return { response: response!, body };
}

const auth = { auth: 'spt_example_token' };

describe('the Prism mock answers every operation through the generated SDK', () => {
  it('getVersion', async () => {
    const { body } = await check('getVersion', () => sdk.getVersion({ client }), 200);
    expect(body).toMatchObject({ api_version: '2.1', edition: 'oss' });
  });

  it('createPush', async () => {
    const { body } = await check(
      'createPush',
      () =>
        sdk.createPush({ client, body: { push: { payload: 'correct horse battery staple', expire_after_views: 5 } } }),
      201,
    );
    expect(body).toMatchObject({ kind: 'text', expired: false });
  });

  it('getPush with the passphrase in X-Passphrase', async () => {
    const { body } = await check(
      'getPush',
      () => sdk.getPush({ client, path: { url_token: token }, headers: { 'X-Passphrase': 'blue-giraffe-42' } }),
      200,
    );
    expect(body).toHaveProperty('payload');
  });

  it('previewPush', async () => {
    const { body } = await check('previewPush', () => sdk.previewPush({ client, path: { url_token: token } }), 200);
    expect(body).toHaveProperty('url');
  });

  it('getPushAudit with a bearer token', async () => {
    const { body } = await check(
      'getPushAudit',
      () => sdk.getPushAudit({ client, ...auth, path: { url_token: token }, query: { page: 1 } }),
      200,
    );
    expect((body as { logs: unknown[] }).logs.length).toBeGreaterThan(0);
  });

  it('expirePush', async () => {
    const { body } = await check('expirePush', () => sdk.expirePush({ client, path: { url_token: token } }), 200);
    expect(body).toMatchObject({ expired: true, deleted: true });
  });

  it('listActivePushes and listExpiredPushes with pagination headers', async () => {
    for (const [id, fn] of [
      ['listActivePushes', sdk.listActivePushes],
      ['listExpiredPushes', sdk.listExpiredPushes],
    ] as const) {
      const { response } = await check(id, () => fn({ client, ...auth, query: { page: 1 } }), 200);
      expect(response.headers.get('x-total-count')).toMatch(/^\d+$/);
    }
  });

  it('downloadPushFile', async () => {
    const result = await sdk.downloadPushFile({
      client,
      path: { url_token: token, file_id: 'f1x9a2kq' },
      query: { token: 'eyJ.signed.jwt' },
      parseAs: 'text',
    });
    const response = result.response!;
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/octet-stream/);
    expect(
      spec.validateResponse('downloadPushFile', 200, response.headers.get('content-type'), result.data).errors,
    ).toEqual([]);
  });

  it('rejects a request the spec forbids (no token on an owner operation) with a 401 error body', async () => {
    await check('listActivePushes', () => sdk.listActivePushes({ client }), 401);
  });

  it('rejects an invalid create body with the 422 error body', async () => {
    const { body } = await check(
      'createPush',
      () => sdk.createPush({ client, body: { push: { kind: 'url' } as never } }),
      422,
    );
    expect(body).toMatchObject({ code: 'validation_failed' });
  });
});

describe('the Prism mock takes createPush as the form bodies clients send', () => {
  const post = (body: FormData | URLSearchParams) => fetch(`${baseUrl}/api/v2/pushes`, { method: 'POST', body });
  const checked = async (res: Response, status: number) => {
    const body = await res.json();
    expect(res.status).toBe(status);
    expect(spec.validateResponse('createPush', status, res.headers.get('content-type'), body).errors).toEqual([]);
    return body as { code?: string };
  };
  const cliForm = (fields: Record<string, string>) => {
    const form = new FormData();
    for (const [name, value] of Object.entries({ 'push[payload]': 'deploy key', 'push[kind]': 'file', ...fields }))
      form.append(name, value);
    form.append('push[files][]', new Blob(['-----BEGIN OPENSSH PRIVATE KEY-----\n']), 'id_ed25519');
    return form;
  };

  it('a multipart file push with a duration and Python booleans, as pwpush-cli sends it', async () => {
    const form = cliForm({
      'push[expire_after_duration]': '8',
      'push[expire_after_views]': '2',
      'push[deletable_by_viewer]': 'True',
      'push[retrieval_step]': 'False',
    });
    await checked(await post(form), 201);
  });

  it('a form-urlencoded text push', async () => {
    await checked(
      await post(
        new URLSearchParams({
          'push[payload]': 'a b&c',
          'push[expire_after_days]': '3',
          'push[retrieval_step]': 'true',
        }),
      ),
      201,
    );
  });

  it('rejects form values outside the contract with the 422 error body', async () => {
    const outside: Record<string, string>[] = [
      { 'push[deletable_by_viewer]': 'maybe' },
      { 'push[expire_after_duration]': '18' },
    ];
    for (const fields of outside) {
      expect(await checked(await post(cliForm(fields)), 422)).toMatchObject({ code: 'validation_failed' });
    }
  });
});

describe('the Prism mock serves every documented error example', () => {
  for (const op of spec.operations()) {
    const errorStatuses = Object.keys(op.object.responses as object)
      .map(Number)
      .filter((s) => s >= 400);
    it(`${op.operationId}: ${errorStatuses.join(', ')}`, async () => {
      const path = op.path
        .replace('{url_token}', token)
        .replace('{file_id}', 'f1x9a2kq')
        .replace('{id}', '4d1c9a0e-3b7f-4a52-9e61-0c8d2f5b7a13')
        .replace('{delivery_id}', 'msg_2Kq9vXbT4mWz7RcN1pLd8sYh3F')
        .replace('{workspace_id}', '42')
        .replace('{user_id}', '0b6a4e7c-2f1d-4c3b-9a8e-5d7f6c1b2a30')
        .replace('{invitation_id}', '3f2a1b0c-9d8e-4f7a-8b6c-5d4e3f2a1b0c');
      // The required query parameters (Prism validates the request before it answers the code asked for).
      const query =
        op.operationId === 'downloadPushFile'
          ? '?token=t'
          : op.operationId === 'deleteWorkspace'
            ? '?confirm=Acme'
            : '';
      const security = (op.object.security ?? spec.document.security) as Record<string, unknown>[];
      const usesBearer = security.some((s) => 'bearerAuth' in s);
      const headers: Record<string, string> = { 'Content-Type': 'application/json' };
      if (usesBearer) headers.Authorization = 'Bearer spt_example_token';
      const init: RequestInit = { method: op.method.toUpperCase(), headers };
      // A body Prism accepts: the operation's own first JSON example (the API-key one), else a text push.
      const content = spec.deref<{ content?: Record<string, { examples?: Record<string, unknown> }> }>(
        op.object.requestBody ?? {},
      ).content;
      const example = Object.values(content?.['application/json']?.examples ?? {})[0];
      // A POST without a request body (rotateWebhookSecret, testWebhook, retryWebhookDelivery) is sent without one.
      if (op.method === 'post' && op.object.requestBody)
        init.body = JSON.stringify(
          example && op.operationId !== 'createPush'
            ? spec.deref<{ value: unknown }>(example).value
            : { push: { payload: 'x' } },
        );
      for (const status of errorStatuses) {
        const res = await fetch(`${baseUrl}${path}${query}`, {
          ...init,
          headers: { ...init.headers, Prefer: `code=${status}` },
        });
        const body = await res.json();
        expect(res.status, `${op.operationId} Prefer code=${status}`).toBe(status);
        expect(spec.validateResponse(op.operationId, status, res.headers.get('content-type'), body).errors).toEqual([]);
        expect(body.code).toMatch(/^[a-z_]+$/);
      }
    });
  }
});

describe('the SDK facade against the mock (a stand-in for the server)', () => {
  it('creates an end-to-end encrypted push (the mock answers the create marked client_encryption)', async () => {
    const { createSecretPushClient } = await import('../../src/index.js');
    const sp = createSecretPushClient({ baseUrl, maxRetries: 0 });
    const created = await sp.createPush({ payload: 'sealed for the mock' }, { endToEnd: true });
    expect(created.client_encryption).toEqual({ scheme: 'aes-256-gcm', version: 1 });
    expect(created.shareLink).toMatch(new RegExp(`^${baseUrl}/p/[a-z0-9]+#k=[A-Za-z0-9_-]{43}$`));
  });

  it('walks every list to its end through Link, at the mock’s own origin', async () => {
    const { createSecretPushClient } = await import('../../src/index.js');
    const sp = createSecretPushClient({ baseUrl, token: 'spt_any_token', maxRetries: 0 });
    const active = [];
    for await (const push of sp.activePushes()) active.push(push);
    expect(active.map((p) => p.url_token)).toEqual(['k7mz4qv2xw5nrt3hbj6ypa2c', 'w5hn2cx7kz3qbt6mrjv4eyap']);
    expect(active.every((p) => p.html_url.startsWith(`${baseUrl}/p/`))).toBe(true);
    const first = await sp.activePushes.page(1);
    expect(first.nextPage).toBe(2);
    expect((await sp.activePushes.page(2)).nextPage).toBeNull();
    const entries = [];
    for await (const entry of sp.audit(token)) entries.push(entry);
    expect(entries.length).toBeGreaterThan(0);
    let expired = 0;
    for await (const _ of sp.expiredPushes()) expired++;
    expect(expired).toBeGreaterThan(0);
  });
});
