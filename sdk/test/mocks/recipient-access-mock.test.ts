/**
 * Issue 42 in the stateful mock, through the SDK facade, every answer checked against the contract: a push for
 * specific people opens only with a code the mock "mailed" (its outbox), once, and for that push; a push limited to
 * networks refuses the mock's client address (127.0.0.1) unless a range holds it, without spending a view.
 */
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AuthenticationError, createSecretPushClient, ForbiddenError } from '../../src/index.js';
import { createMockServerHandlers } from '../../src/mocks/index.js';
import { specCheckingFetch } from '../support/spec-fetch.js';

const server = setupServer();
const checker = specCheckingFetch();
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => {
  server.resetHandlers();
  const violations = [...checker.violations];
  checker.clear();
  expect(violations, 'answers that break the spec').toEqual([]);
});
afterAll(() => server.close());

function start() {
  const baseUrl = 'http://mock-access.test';
  const mock = createMockServerHandlers({ baseUrl, settings: { emailAutoDispatch: true } });
  server.use(...mock.handlers);
  const owner = createSecretPushClient({ baseUrl, token: mock.users[0]!.token, fetch: checker.fetch });
  const stranger = createSecretPushClient({ baseUrl, fetch: checker.fetch, maxRetries: 0 });
  return { mock, owner, stranger };
}

describe('stateful mock: who may open a push', () => {
  it('opens a push for specific people only with its emailed code, once', async () => {
    const { mock, owner, stranger } = start();
    const push = await owner.createPush({ payload: 'for ana only', recipient_emails: ['ana@example.net'] });
    expect(push.recipient_emails).toEqual(['ana@example.net']);
    const other = await owner.createPush({ payload: 'another', recipient_emails: ['ana@example.net'] });

    const missing = await stranger.retrievePush(push.url_token).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(AuthenticationError);
    expect((missing as AuthenticationError).code).toBe('access_code_required');

    expect(await stranger.requestAccessCode(push.url_token, 'eve@example.net')).toEqual({ expires_in: 600 });
    expect(mock.sentEmails()).toEqual([]);
    await stranger.requestAccessCode(other.url_token, 'ana@example.net');
    await stranger.requestAccessCode(push.url_token, 'Ana@example.net');
    const [forOther, forPush] = mock.sentEmails();
    expect(forPush).toMatchObject({ to: 'ana@example.net', urlToken: push.url_token });

    const wrongPush = await stranger
      .retrievePush(push.url_token, { accessCode: forOther!.accessCode })
      .catch((e: unknown) => e);
    expect((wrongPush as AuthenticationError).code).toBe('access_code_incorrect');
    const opened = await stranger.retrievePush(push.url_token, { accessCode: forPush!.accessCode });
    expect(opened).toMatchObject({ payload: 'for ana only', views_remaining: 4 });
    const again = await stranger
      .retrievePush(push.url_token, { accessCode: forPush!.accessCode })
      .catch((e: unknown) => e);
    expect((again as AuthenticationError).code).toBe('access_code_incorrect');
    const kinds = (await owner.audit.page(push.url_token, 1)).items.map((e) => e.kind);
    expect(kinds.filter((k) => k === 'failed_passphrase')).toHaveLength(2);
  });

  it('refuses a client outside the allowed networks without spending a view', async () => {
    const { owner, stranger } = start();
    const elsewhere = await owner.createPush({ payload: 'office only', allowed_networks: ['10.0.0.0/8'] });
    const refused = await stranger.retrievePush(elsewhere.url_token).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ForbiddenError);
    expect((refused as ForbiddenError).code).toBe('network_not_allowed');
    expect((await owner.retrievePush(elsewhere.url_token)).views_remaining).toBe(5);
    const here = await owner.createPush({ payload: 'loopback', allowed_networks: ['127.0.0.0/8'] });
    expect(await stranger.retrievePush(here.url_token)).toMatchObject({ payload: 'loopback', views_remaining: 4 });
  });
});
