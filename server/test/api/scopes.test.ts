/**
 * Scopes, generated from the contracts: for every operation of v2 and v1 that declares a scope (openapi/scopes.test.ts
 * holds every operation to declaring one), the real server is sent the operation's own example request three times:
 * with an API key holding only that scope (it passes: the operation's success status), with a key holding every
 * other scope (403 insufficient_scope, the scope named in `error` and in `WWW-Authenticate`, RFC 6750), and with the
 * account token (passes). An operation added to a contract is picked up here without a line of this file changing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { contract, contractV1, type Contract } from '@secret-push/contract';
import { API_KEY_SCOPES, type ApiKeyScope } from '@secret-push/rules';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { startRealApi, type RealApi } from './support/real.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking an arbitrary OpenAPI document
type Json = Record<string, any>;

let api: RealApi;
let mailbox: Mailbox;
let account: { token: string; userId: string; email: string };

beforeAll(async () => {
  // Every optional operation on: files, and email through a real SMTP server in this process (notifyEmails).
  mailbox = await startMailbox();
  api = await startRealApi(
    {
      enableFilePushes: true,
      mail: {
        smtpUrl: mailbox.url,
        from: 'Secret Push <no-reply@example.org>',
        notifyByEmail: true,
        notifyDailyLimit: 500,
        instanceName: 'Scopes',
        attempts: 3,
        retrySeconds: 1,
      },
      // Webhooks on; the examples' host resolves to loopback here (a closed port), so nothing leaves the machine.
      webhooks: { enabled: true, allowPrivate: true, retrySchedule: [1] },
    },
    { core: { webhookResolver: async () => ['127.0.0.1'] } },
  );
  account = await api.user('scopes@example.org');
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
  await mailbox?.stop();
});

async function newKey(scopes: readonly ApiKeyScope[]): Promise<{ id: string; token: string }> {
  // Each test makes its keys and is done with them: the account's oldest go before it holds the most there may be
  // (100), which the operations of the contract, two keys each, would pass.
  await api.db.query(
    `delete from api_keys where user_id = $1 and id not in
       (select id from api_keys where user_id = $1 order by created_at desc limit 20)`,
    [account.userId],
  );
  const made = await api.raw('/api/v2/api_keys', {
    method: 'POST',
    headers: { authorization: `Bearer ${account.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ api_key: { name: `${scopes.length} scopes`, scopes } }),
  });
  expect({ status: made.status, body: made.status === 201 ? null : made.body }).toEqual({ status: 201, body: null });
  return made.body as { id: string; token: string };
}

/** A push of the account's, fresh for each request (a retrieval or an expiry uses it up). */
async function ownPush(recipientEmails?: string[]): Promise<string> {
  // A push listed for named people (recipient_emails) when the operation is one of theirs (requestAccessCode: the
  // example asks a code for ana@example.org, so her push).
  const made = await api.raw('/api/v2/pushes', {
    method: 'POST',
    headers: { authorization: `Bearer ${account.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      push: { payload: 'scope test', expire_after_views: 100, recipient_emails: recipientEmails },
    }),
  });
  expect(made.status).toBe(201);
  return (made.body as { url_token: string }).url_token;
}

/** A pending request of the account's, fresh for each request (an answer or a revocation closes it). */
async function ownRequest(): Promise<string> {
  const made = await api.raw('/api/v2/requests', {
    method: 'POST',
    headers: { authorization: `Bearer ${account.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ request: { request: 'scope test' } }),
  });
  expect(made.status).toBe(201);
  return (made.body as { url_token: string }).url_token;
}

let sharedWebhook: string | undefined;

/** A webhook of the account's: a fresh one for a delete (which uses it up), else one shared (10 per account). */
async function ownWebhook(operationId: string): Promise<string> {
  if (operationId !== 'deleteWebhook' && sharedWebhook) return sharedWebhook;
  const made = await api.raw('/api/v2/webhooks', {
    method: 'POST',
    headers: { authorization: `Bearer ${account.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ webhook: { url: 'https://hooks.example.org/scopes', events: ['push.viewed'] } }),
  });
  expect(made.status).toBe(201);
  const id = (made.body as { id: string }).id;
  if (operationId !== 'deleteWebhook') sharedWebhook = id;
  return id;
}

/** A delivery of that webhook (a test event). */
async function ownDelivery(webhookId: string): Promise<string> {
  const made = await api.raw(`/api/v2/webhooks/${webhookId}/test`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.token}` },
  });
  expect(made.status).toBe(202);
  return (made.body as { id: string }).id;
}

let people = 0;

/**
 * A workspace for a member operation, with a second member (rows as an invitation writes them): the account owns it,
 * or, for a departure (an owner does not leave), is its member.
 */
async function ownWorkspace(operationId: string): Promise<{ workspaceId: string; memberId: string }> {
  const other = await api.user(`scopes-member-${++people}@example.org`);
  const [owner, member] = operationId === 'leaveWorkspace' ? [other, account] : [account, other];
  const made = await api.raw('/api/v2/workspaces', {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ workspace: { name: 'scopes' } }),
  });
  expect(made.status).toBe(201);
  const workspaceId = (made.body as { id: number }).id;
  await api.db.query(
    `insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, 'member', now())`,
    [workspaceId, member.userId],
  );
  return { workspaceId: String(workspaceId), memberId: other.userId };
}

/** A pending invitation by link in a workspace of the account's (made by the account): its id and its token. */
async function ownInvitation(workspaceId: string, token = account.token): Promise<{ id: string; token: string }> {
  const made = await api.raw(`/api/v2/workspaces/${workspaceId}/invitations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ invitation: { role: 'member' } }),
  });
  expect(made.status).toBe(201);
  const { id, url } = made.body as { id: string; url: string };
  return { id, token: new URL(url).hash.slice(1) };
}

/** The token of an invitation by link to another user's workspace, for the account to accept. */
async function othersInvitation(): Promise<string> {
  const other = await api.user(`scopes-inviter-${++people}@example.org`);
  const made = await api.raw('/api/v2/workspaces', {
    method: 'POST',
    headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ workspace: { name: 'theirs' } }),
  });
  expect(made.status).toBe(201);
  return (await ownInvitation(String((made.body as { id: number }).id), other.token)).token;
}

/** The operation's example request: its path with parameters filled in, and its first JSON body example. */
async function exampleRequest(
  c: Contract,
  operationId: string,
  scope: ApiKeyScope,
): Promise<{ path: string; init: RequestInit }> {
  const op = c.operation(operationId);
  let path = op.path;
  let webhookId = '';
  const workspace = op.path.includes('{workspace_id}') ? await ownWorkspace(operationId) : null;
  for (const parameter of c.parameters(operationId).filter((p) => p.in === 'path')) {
    const name = String(parameter.name);
    const value =
      workspace && name === 'workspace_id'
        ? workspace.workspaceId
        : workspace && name === 'user_id'
          ? workspace.memberId
          : workspace && name === 'invitation_id'
            ? (await ownInvitation(workspace.workspaceId)).id
            : name === 'url_token'
              ? op.path.startsWith('/api/v2/requests/')
                ? await ownRequest()
                : await ownPush(operationId === 'requestAccessCode' ? ['ana@example.org'] : undefined)
              : name === 'id' && op.path.startsWith('/api/v2/webhooks/')
                ? (webhookId = await ownWebhook(operationId))
                : name === 'delivery_id'
                  ? await ownDelivery(webhookId)
                  : name === 'id'
                    ? (await newKey(['pushes:read'])).id
                    : String(parameter.example ?? (parameter.schema as Json | undefined)?.enum?.[0]);
    path = path.replace(`{${name}}`, encodeURIComponent(value));
  }
  // A deletion's confirmation: the workspace's name (ownWorkspace's).
  if (operationId === 'deleteWorkspace') path += '?confirm=scopes';
  const content = (c.deref<Json>(op.object.requestBody ?? {}).content ?? {}) as Json;
  const json = content['application/json'] as Json | undefined;
  if (!json) return { path, init: { method: op.method.toUpperCase() } };
  const first = Object.values<Json>(json.examples ?? {})[0];
  const body = structuredClone(c.deref<Json>(first).value) as Json;
  // A new key's example: a day from now (the example's date is fixed), and only the scope the caller holds (a key
  // grants no scope it lacks).
  // An invitation's token: a live one (the example's is no invitation's).
  if (body.invitation?.token) body.invitation.token = await othersInvitation();
  if (body.api_key) {
    body.api_key.expires_at = new Date(Date.now() + 86_400_000).toISOString();
    body.api_key.scopes = [scope];
  }
  return {
    path,
    init: {
      method: op.method.toUpperCase(),
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    },
  };
}

function successOf(c: Contract, operationId: string): number {
  return Number(Object.keys(c.operation(operationId).object.responses as Json).find((s) => /^2\d\d$/.test(s)));
}

async function call(c: Contract, operationId: string, token: string) {
  const { path, init } = await exampleRequest(c, operationId, c.scopes(operationId)[0] as ApiKeyScope);
  return api.raw(path, { ...init, headers: { ...(init.headers as object), authorization: `Bearer ${token}` } });
}

for (const [name, c] of [
  ['v2', contract()],
  ['v1', contractV1()],
] as const) {
  describe(`${name}: every operation with a scope`, () => {
    const scoped = c.operations().filter((op) => c.scopes(op.operationId).length > 0);

    it('has some', () => {
      expect(scoped.length).toBeGreaterThan(5);
    });

    for (const op of scoped) {
      const scope = c.scopes(op.operationId)[0] as ApiKeyScope;

      it(`${op.operationId}: a key with only ${scope} passes`, async () => {
        const key = await newKey([scope]);
        const answer = await call(c, op.operationId, key.token);
        expect({ status: answer.status, body: answer.status >= 400 ? answer.body : null }).toEqual({
          status: successOf(c, op.operationId),
          body: null,
        });
      });

      it(`${op.operationId}: a key with every scope but ${scope} gets 403 insufficient_scope naming it`, async () => {
        const key = await newKey(API_KEY_SCOPES.filter((s) => s !== scope));
        const answer = await call(c, op.operationId, key.token);
        expect(answer.status).toBe(403);
        expect(answer.body.code).toBe('insufficient_scope');
        expect(answer.body.error).toContain(scope);
        expect(answer.headers.get('www-authenticate')).toBe(`Bearer error="insufficient_scope", scope="${scope}"`);
      });

      it(`${op.operationId}: the account token passes`, async () => {
        const answer = await call(c, op.operationId, account.token);
        expect(answer.status).toBe(successOf(c, op.operationId));
      });
    }
  });
}

describe('notify_emails_to on a create needs pushes:notify (issue 45)', () => {
  const post = (path: string, token: string, body: unknown) =>
    api.raw(path, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const count = async (table: string) =>
    Number((await api.db.query<{ n: string }>(`select count(*) as n from ${table}`))[0]!.n);

  it('a key without it gets 403 insufficient_scope naming pushes:notify on createPush and createRequest; nothing is made or mailed', async () => {
    const key = await newKey(API_KEY_SCOPES.filter((s) => s !== 'pushes:notify'));
    const [pushes, requests, mails] = [await count('pushes'), await count('requests'), mailbox.messages.length];
    for (const [path, body] of [
      ['/api/v2/pushes', { push: { payload: 'mailed by a key', notify_emails_to: 'someone@example.net' } }],
      ['/api/v2/requests', { request: { request: 'send me a key', notify_emails_to: 'someone@example.net' } }],
    ] as const) {
      const answer = await post(path, key.token, body);
      expect([path, answer.status]).toEqual([path, 403]);
      expect(JSON.stringify(answer.body)).toContain('pushes:notify');
    }
    expect([await count('pushes'), await count('requests')]).toEqual([pushes, requests]);
    // v1 ignores the field (its document has no email, as the reference): a push, and still no mail.
    const v1 = await post('/p.json', key.token, {
      password: { payload: 'v1 never mails', notify_emails_to: 'someone@example.net' },
    });
    expect(v1.status).toBe(201);
    await new Promise((r) => setTimeout(r, 1500)); // a poll of the queue: nothing was sent
    expect(mailbox.messages.length).toBe(mails);
  });

  it('a key with pushes:create and pushes:notify mails the link; without notify_emails_to no scope is asked', async () => {
    const notifying = await newKey(['pushes:create', 'pushes:notify']);
    const before = mailbox.messages.length;
    const made = await post('/api/v2/pushes', notifying.token, {
      push: { payload: 'mailed by a key', notify_emails_to: 'allowed@example.net' },
    });
    expect(made.status).toBe(201);
    const mails = await mailbox.waitFor(before + 1);
    expect(mails.at(-1)!.to).toEqual(['allowed@example.net']);
    const plain = await newKey(['pushes:create']);
    expect((await post('/api/v2/pushes', plain.token, { push: { payload: 'no mail asked' } })).status).toBe(201);
  });
});
