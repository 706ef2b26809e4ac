/**
 * A workspace's invitations over HTTP with the generated SDK (issue 41), on the real server, its PostgreSQL and a
 * real SMTP server in this process (test/support/mailbox.ts): by link (the link answered once, never listed) and by
 * email (the mail carries the workspace's name and the link, in the invitee's language, else the inviter's); who may
 * invite with which role; accepting (single use, by the invited verified address only for an email invitation,
 * idempotent for a member); revoking; lapsing; the bounds; hostile bodies. Each create, revocation and acceptance
 * leaves one `workspace_audit` row; every refusal leaves everything as it was.
 */
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  acceptWorkspaceInvitation,
  createWorkspace,
  createWorkspaceInvitation,
  listWorkspaceInvitations,
  revokeWorkspaceInvitation,
} from '@secret-push/sdk/generated';
import type { WorkspaceRole } from '@secret-push/sdk/generated';
import { startMailbox, type Mailbox } from '../support/mailbox.js';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';

type Who = WorkspaceRole | 'outsider' | 'otherOwner' | 'invitee' | 'stranger';
type User = { token: string; email: string; userId: string };

let api: RealApi;
let mailbox: Mailbox;
const people = {} as Record<Who, User>;
let otherWorkspace: number;

beforeAll(async () => {
  mailbox = await startMailbox();
  api = await startRealApi(
    {
      mail: {
        smtpUrl: mailbox.url,
        from: 'Secret Push <no-reply@secrets.example.org>',
        notifyByEmail: true,
        notifyDailyLimit: 500,
        instanceName: 'Example Secrets',
        attempts: 3,
        retrySeconds: 1,
      },
    },
    { core: { queue: { pollingIntervalSeconds: 0.5 } } },
  );
  for (const who of ['owner', 'admin', 'member', 'auditor', 'outsider', 'otherOwner', 'invitee', 'stranger'] as const)
    people[who] = await api.user(`invitations-${who}@example.org`);
  otherWorkspace = expectData(
    await createWorkspace({ ...as('otherOwner'), body: { workspace: { name: 'Other' } } }),
    201,
  ).id;
}, 600_000);

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
  await mailbox?.stop();
});

const as = (who: Who) => ({ client: api.client, auth: bearer(people[who].token) });

/** A fresh workspace named `name` with one member of each role. */
async function workspace(name = 'Acme support'): Promise<number> {
  const id = expectData(await createWorkspace({ ...as('owner'), body: { workspace: { name } } }), 201).id;
  for (const role of ['admin', 'member', 'auditor'] as const)
    await api.db.query(
      'insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, $3, now())',
      [id, people[role].userId, role],
    );
  return id;
}

/** Everything an invitation operation could change, in this workspace and the other one. */
async function state(id: number): Promise<unknown> {
  const q = (text: string) => api.db.query(text, [[id, otherWorkspace]]);
  return {
    members: await q(
      'select workspace_id, user_id, role from workspace_members where workspace_id = any($1) order by 1, 2',
    ),
    invitations: await q(
      'select id, accepted_at, accepted_by, revoked_at from workspace_invitations where workspace_id = any($1) order by id',
    ),
    audit: await q('select count(*)::int as n from workspace_audit where workspace_id = any($1)'),
  };
}

const audit = (id: number) =>
  api.db.query<{ action: string; actor_id: string; subject_id: string | null; subject_email: string; role: string }>(
    'select action, actor_id, subject_id, subject_email, role from workspace_audit where workspace_id = $1 order by id',
    [id],
  );

const tokenOf = (url: string) => new URL(url).hash.slice(1);

async function linkInvitation(id: number, role: 'admin' | 'member' | 'auditor' = 'member', by: Who = 'owner') {
  const made = expectData(
    await createWorkspaceInvitation({ ...as(by), path: { workspace_id: id }, body: { invitation: { role } } }),
    201,
  );
  return { ...made, token: tokenOf(made.url!) };
}

const accept = (who: Who, token: string) => acceptWorkspaceInvitation({ ...as(who), body: { invitation: { token } } });

describe('an invitation by link', () => {
  it('answers its link once, lists it without, and lets the first signed-in user join with its role', async () => {
    const id = await workspace();
    const made = await linkInvitation(id, 'auditor');
    expect(made).toMatchObject({ workspace_id: id, email: null, role: 'auditor', invited_by: people.owner.email });
    expect(made.url).toMatch(new RegExp(`^${api.baseUrl}/workspaces/join#[A-Za-z0-9_-]{43}$`));
    expect(Date.parse(made.expires_at) - Date.parse(made.created_at)).toBe(7 * 86_400_000);
    // Only the token's digest is stored.
    const [row] = await api.db.query<{ token_digest: string }>(
      'select token_digest from workspace_invitations where id = $1',
      [made.id],
    );
    expect(row!.token_digest).toBe(createHash('sha256').update(made.token).digest('hex'));

    const listed = expectData(await listWorkspaceInvitations({ ...as('admin'), path: { workspace_id: id } }));
    expect(listed).toEqual([{ ...made, url: undefined, token: undefined }].map(({ url: _u, token: _t, ...r }) => r));
    expect(JSON.stringify(listed)).not.toContain(made.token);

    const joined = expectData(await accept('invitee', made.token));
    expect(joined).toMatchObject({ id, name: 'Acme support', role: 'auditor' });
    const [member] = await api.db.query<{ role: string }>(
      'select role from workspace_members where workspace_id = $1 and user_id = $2',
      [id, people.invitee.userId],
    );
    expect(member!.role).toBe('auditor');
    expect(expectData(await listWorkspaceInvitations({ ...as('owner'), path: { workspace_id: id } }))).toEqual([]);
    expect((await audit(id)).map((a) => [a.action, a.actor_id, a.subject_id, a.role])).toEqual([
      ['invitation_created', people.owner.userId, null, 'auditor'],
      ['invitation_accepted', people.invitee.userId, people.invitee.userId, 'auditor'],
    ]);
  });

  it('is single use: another user gets 404; the same user again gets the same answer and nothing changes', async () => {
    const id = await workspace();
    const made = await linkInvitation(id);
    expectData(await accept('invitee', made.token));
    const before = await state(id);
    expectError(await accept('stranger', made.token), 404, 'not_found');
    expect(expectData(await accept('invitee', made.token))).toMatchObject({ id, role: 'member' });
    expect(await state(id)).toEqual(before);
  });

  it('answers a member their role as it is, and leaves the invitation pending', async () => {
    const id = await workspace();
    const made = await linkInvitation(id, 'admin');
    const before = await state(id);
    expect(expectData(await accept('member', made.token))).toMatchObject({ id, role: 'member' });
    expect(await state(id)).toEqual(before);
  });

  it('stops working once revoked or lapsed (404, nothing written), and the revocation is audited', async () => {
    const id = await workspace();
    const revoked = await linkInvitation(id);
    const gone = expectData(
      await revokeWorkspaceInvitation({ ...as('admin'), path: { workspace_id: id, invitation_id: revoked.id } }),
    );
    expect(gone.id).toBe(revoked.id);
    expect((await audit(id)).at(-1)).toMatchObject({ action: 'invitation_revoked', actor_id: people.admin.userId });
    const lapsing = expectData(
      await createWorkspaceInvitation({
        ...as('owner'),
        path: { workspace_id: id },
        body: { invitation: { role: 'member', expires_in_days: 1 } },
      }),
      201,
    );
    let before = await state(id);
    expectError(await accept('invitee', revoked.token), 404, 'not_found');
    expect(await state(id)).toEqual(before);
    api.setClock(new Date(Date.now() + 86_400_000 + 60_000));
    try {
      before = await state(id);
      expectError(await accept('invitee', tokenOf(lapsing.url!)), 404, 'not_found');
      expect(await state(id)).toEqual(before);
      expect(expectData(await listWorkspaceInvitations({ ...as('owner'), path: { workspace_id: id } }))).toEqual([]);
    } finally {
      api.setClock(null);
    }
    // A revoked invitation is revoked once: 404 the second time, nothing written.
    before = await state(id);
    expectError(
      await revokeWorkspaceInvitation({ ...as('owner'), path: { workspace_id: id, invitation_id: revoked.id } }),
      404,
      'not_found',
    );
    expect(await state(id)).toEqual(before);
  });

  it('answers 404 for a token nobody made and 422 for one of the wrong shape', async () => {
    const id = await workspace();
    const before = await state(id);
    expectError(await accept('invitee', 'A'.repeat(43)), 404, 'not_found');
    const bad = expectError(await accept('invitee', 'short'), 422, 'validation_failed') as unknown as {
      errors: Record<string, string[]>;
    };
    expect(Object.keys(bad.errors)).toEqual(['token']);
    expectError(await accept('invitee', `${'a'.repeat(42)}/`), 422, 'validation_failed');
    expect(await state(id)).toEqual(before);
  });
});

describe('an invitation by email', () => {
  it('mails the link and the workspace’s name; only the verified invited address joins', async () => {
    const id = await workspace('Blue team');
    const before = mailbox.messages.length;
    const made = expectData(
      await createWorkspaceInvitation({
        ...as('admin'),
        path: { workspace_id: id },
        body: { invitation: { role: 'admin', email: ` ${people.invitee.email.toUpperCase()} ` } },
      }),
      201,
    );
    expect(made).toMatchObject({ email: people.invitee.email, role: 'admin', invited_by: people.admin.email });
    expect(made.url).toBeUndefined();
    const [mail] = (await mailbox.waitFor(before + 1)).slice(before);
    expect(mail!.to).toEqual([people.invitee.email]);
    const text = mail!.parsed.text ?? '';
    expect(mail!.parsed.subject).toContain('Blue team');
    expect(text).toContain('Blue team');
    const link = /https?:\/\/\S+\/workspaces\/join#([A-Za-z0-9_-]{43})/.exec(text);
    expect(link).not.toBeNull();
    const token = link![1]!;
    expect(mail!.parsed.html).toContain(link![0]);

    // Another user, even signed in and verified: 403, and the invitation stays.
    const snapshot = await state(id);
    expectError(await accept('stranger', token), 403, 'forbidden');
    expect(await state(id)).toEqual(snapshot);
    // The invited address, not yet proven: 403 too.
    await api.db.query('update users set email_confirmed_at = null where id = $1', [people.invitee.userId]);
    try {
      expectError(await accept('invitee', token), 403, 'forbidden');
      expect(await state(id)).toEqual(snapshot);
    } finally {
      await api.db.query('update users set email_confirmed_at = now() where id = $1', [people.invitee.userId]);
    }
    expect(expectData(await accept('invitee', token))).toMatchObject({ id, name: 'Blue team', role: 'admin' });
    const [joined] = await api.db.query<{ role: string }>(
      'select role from workspace_members where workspace_id = $1 and user_id = $2',
      [id, people.invitee.userId],
    );
    expect(joined!.role).toBe('admin');
    expect((await audit(id)).map((a) => [a.action, a.subject_email])).toEqual([
      ['invitation_created', people.invitee.email],
      ['invitation_accepted', people.invitee.email],
    ]);
    await api.db.query('delete from workspace_members where workspace_id = $1 and user_id = $2', [
      id,
      people.invitee.userId,
    ]);
  });

  it('is written in the invitee’s language, else the inviter’s, else English', async () => {
    const id = await workspace('Rot');
    await api.db.query("update users set locale = 'de' where id = $1", [people.stranger.userId]);
    await api.db.query("update users set locale = 'fr' where id = $1", [people.owner.userId]);
    try {
      const sent = async (email: string) => {
        const before = mailbox.messages.length;
        expectData(
          await createWorkspaceInvitation({
            ...as('owner'),
            path: { workspace_id: id },
            body: { invitation: { role: 'member', email } },
          }),
          201,
        );
        return (await mailbox.waitFor(before + 1)).slice(before)[0]!.parsed.html as string;
      };
      expect(await sent(people.stranger.email)).toContain('lang="de"');
      expect(await sent('nobody-yet@example.org')).toContain('lang="fr"');
      await api.db.query('update users set locale = null where id = $1', [people.owner.userId]);
      expect(await sent('nobody-else@example.org')).toContain('lang="en"');
    } finally {
      await api.db.query('update users set locale = null where id = any($1)', [
        [people.stranger.userId, people.owner.userId],
      ]);
    }
  });
});

describe('what stays out of reach', () => {
  it('keeps every token out of the server’s log lines', async () => {
    const id = await workspace();
    const made = await linkInvitation(id);
    expectData(await accept('invitee', made.token));
    expectError(await accept('stranger', made.token), 404, 'not_found');
    expect(api.logs.length).toBeGreaterThan(0);
    expect(api.logs.filter((line) => line.includes(made.token))).toEqual([]);
    await api.db.query('delete from workspace_members where workspace_id = $1 and user_id = $2', [
      id,
      people.invitee.userId,
    ]);
  });

  it('refuses a workspace’s API key on every invitation operation (403): a person invites and joins', async () => {
    const id = await workspace();
    const made = await linkInvitation(id);
    const key = await fetch(`${api.baseUrl}/api/v2/api_keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${people.owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        api_key: { name: 'team key', scopes: ['workspaces:manage', 'workspaces:read'], workspace_id: id },
      }),
    });
    expect(key.status).toBe(201);
    const token = ((await key.json()) as { token: string }).token;
    const before = await state(id);
    const byKey = { client: api.client, auth: bearer(token) };
    expectError(
      await createWorkspaceInvitation({
        ...byKey,
        path: { workspace_id: id },
        body: { invitation: { role: 'member' } },
      }),
      403,
      'forbidden',
    );
    expectError(await listWorkspaceInvitations({ ...byKey, path: { workspace_id: id } }), 403, 'forbidden');
    expectError(
      await revokeWorkspaceInvitation({ ...byKey, path: { workspace_id: id, invitation_id: made.id } }),
      403,
      'forbidden',
    );
    expectError(
      await acceptWorkspaceInvitation({ ...byKey, body: { invitation: { token: made.token } } }),
      403,
      'forbidden',
    );
    expect(await state(id)).toEqual(before);
  });
});

describe('who may invite, list and revoke', () => {
  it('lets the owner and admins invite with any role but owner; members and auditors 403; outsiders 404', async () => {
    const id = await workspace();
    for (const by of ['owner', 'admin'] as const)
      for (const role of ['admin', 'member', 'auditor'] as const) await linkInvitation(id, role, by);
    const before = await state(id);
    for (const who of ['member', 'auditor'] as const) {
      const body = { invitation: { role: 'member' as const } };
      expectError(await createWorkspaceInvitation({ ...as(who), path: { workspace_id: id }, body }), 403, 'forbidden');
      expectError(await listWorkspaceInvitations({ ...as(who), path: { workspace_id: id } }), 403, 'forbidden');
    }
    for (const who of ['outsider', 'otherOwner'] as const) {
      const body = { invitation: { role: 'member' as const } };
      expectError(await createWorkspaceInvitation({ ...as(who), path: { workspace_id: id }, body }), 404, 'not_found');
      expectError(await listWorkspaceInvitations({ ...as(who), path: { workspace_id: id } }), 404, 'not_found');
    }
    const owner = await createWorkspaceInvitation({
      ...as('owner'),
      path: { workspace_id: id },
      body: { invitation: { role: 'owner' as 'admin' } },
    });
    expect(
      (expectError(owner, 422, 'validation_failed') as unknown as { errors: Record<string, string[]> }).errors,
    ).toHaveProperty('role');
    expect(await state(id)).toEqual(before);
  });

  it('revokes only its own workspace’s invitations: another workspace’s id is 404 and nothing changes', async () => {
    const id = await workspace();
    const theirs = await linkInvitation(otherWorkspace, 'member', 'otherOwner');
    const before = await state(id);
    expectError(
      await revokeWorkspaceInvitation({ ...as('owner'), path: { workspace_id: id, invitation_id: theirs.id } }),
      404,
      'not_found',
    );
    expectError(
      await revokeWorkspaceInvitation({
        ...as('owner'),
        path: { workspace_id: otherWorkspace, invitation_id: theirs.id },
      }),
      404,
      'not_found',
    );
    expect(await state(id)).toEqual(before);
  });
});

describe('bounds and hostile bodies', () => {
  it('refuses what breaks a field’s rule with 422 on it, a body without `invitation` with 400, a huge one before it is read', async () => {
    const id = await workspace();
    const before = await state(id);
    const post = (body: unknown) =>
      fetch(`${api.baseUrl}/api/v2/workspaces/${id}/invitations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${people.owner.token}`, 'content-type': 'application/json' },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
    const answer = async (body: unknown) => {
      const r = await post(body);
      return { status: r.status, body: (await r.json()) as { code: string; errors?: Record<string, string[]> } };
    };
    for (const [body, field] of [
      [{ invitation: { role: 'member', email: 'not an address' } }, 'email'],
      [{ invitation: { role: 'member', email: `${'a'.repeat(320)}@example.org` } }, 'email'],
      [{ invitation: { role: 'member', expires_in_days: 31 } }, 'expires_in_days'],
      [{ invitation: { role: 'member', expires_in_days: 0 } }, 'expires_in_days'],
      [{ invitation: { role: 'root' } }, 'role'],
      [{ invitation: {} }, 'role'],
    ] as const) {
      const got = await answer(body);
      expect([got.status, got.body.code, Object.keys(got.body.errors ?? {})], JSON.stringify(body)).toEqual([
        422,
        'validation_failed',
        [field],
      ]);
    }
    for (const body of [{}, { invitation: 'x' }, [], '{"invitation":']) {
      const got = await answer(body);
      expect(got.status, JSON.stringify(body)).toBe(400);
    }
    // A field far over its bound is refused while the body streams in, naming the field; so is an open one.
    const huge = await answer({ invitation: { role: 'member', email: `${'a'.repeat(5_000_000)}@example.org` } });
    expect([huge.status, Object.keys(huge.body.errors ?? {})]).toEqual([422, ['email']]);
    const padded = await post({ invitation: { role: 'member' }, padding: 'x'.repeat(5_000_000) });
    expect(padded.status).toBe(400);
    expect(((await padded.json()) as { code: string }).code).toBe('bad_request');
    const hugeAccept = await fetch(`${api.baseUrl}/api/v2/invitations/accept`, {
      method: 'POST',
      headers: { authorization: `Bearer ${people.invitee.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ invitation: { token: 'a'.repeat(5_000_000) } }),
    });
    expect(hugeAccept.status).toBe(422);
    expect(Object.keys(((await hugeAccept.json()) as { errors: object }).errors)).toEqual(['token']);
    expect(await state(id)).toEqual(before);
  });

  it('answers 401 without a token and 400 for ids that are none', async () => {
    const id = await workspace();
    expect((await fetch(`${api.baseUrl}/api/v2/workspaces/${id}/invitations`)).status).toBe(401);
    const accepted = await fetch(`${api.baseUrl}/api/v2/invitations/accept`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ invitation: { token: 'a'.repeat(43) } }),
    });
    expect(accepted.status).toBe(401);
    const bad = await fetch(`${api.baseUrl}/api/v2/workspaces/${id}/invitations/not-a-uuid`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${people.owner.token}` },
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('invalid_parameter');
  });

  it('holds at most 100 pending invitations and 100 members (422), and frees room as they go', async () => {
    const id = await workspace();
    await api.db.query(
      `insert into workspace_invitations (id, workspace_id, role, token_digest, invited_by, created_at, expires_at)
       select gen_random_uuid(), $1::int, 'member', md5(g::text || $1::text) || md5(g::text), $2::uuid, now(), now() + interval '1 day'
       from generate_series(1, 99) g`,
      [id, people.owner.userId],
    );
    const last = await linkInvitation(id);
    const before = await state(id);
    const over = await createWorkspaceInvitation({
      ...as('owner'),
      path: { workspace_id: id },
      body: { invitation: { role: 'member' } },
    });
    expect(
      (expectError(over, 422, 'validation_failed') as unknown as { errors: Record<string, string[]> }).errors,
    ).toHaveProperty('invitation');
    expect(await state(id)).toEqual(before);
    expectData(await accept('invitee', last.token));
    // 95 more members make 100: the next acceptance, and the next invitation, are refused.
    const full = await linkInvitation(id);
    await api.db.query(
      `with made as (
         insert into users (id, email, created_at, updated_at, session_version)
         select gen_random_uuid(), 'filler-' || g || '-' || $1::int || '@example.org', now(), now(), 1
         from generate_series(1, 95) g returning id
       ) insert into workspace_members (workspace_id, user_id, role, created_at) select $1::int, id, 'member', now() from made`,
      [id],
    );
    const snapshot = await state(id);
    expectError(await accept('stranger', full.token), 422, 'validation_failed');
    expect(await state(id)).toEqual(snapshot);
    await api.db.query('delete from workspace_invitations where workspace_id = $1 and accepted_at is null', [id]);
    expectError(
      await createWorkspaceInvitation({
        ...as('owner'),
        path: { workspace_id: id },
        body: { invitation: { role: 'member' } },
      }),
      422,
      'validation_failed',
    );
  });
});
