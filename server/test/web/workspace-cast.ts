/**
 * The cast of a workspace page test: users (one per role, plus an outsider), each signed in on a page visitor of
 * their own, a workspace the owner made through the API (the generated SDK) with the others added in their roles,
 * and a second workspace, the outsider's (an id the cast may not open).
 */
import { expect } from 'vitest';
import { createWorkspace } from '@secret-push/sdk/generated';
import { createClient } from '@secret-push/sdk/generated/client';
import { Visitor, type WebApp } from './support.js';

export const PASSWORD = 'a long enough password';
export const bearer = (token: string) => (auth: { scheme?: string }) => (auth.scheme === 'bearer' ? token : undefined);

type Role = 'admin' | 'member' | 'auditor';

export interface WorkspaceCast {
  client: ReturnType<typeof createClient>;
  users: Record<string, { userId: string; token: string }>;
  visitors: Record<string, Visitor>;
  workspaceId: number;
  /** The outsider's own workspace. */
  otherWorkspaceId: number;
  emailOf(who: string): string;
}

export async function workspaceCast(
  app: WebApp,
  options: { domain: string; name: string; otherName?: string; roles: Role[] },
): Promise<WorkspaceCast> {
  const emailOf = (who: string) => `${who}@${options.domain}`;
  const client = createClient({ baseUrl: app.baseUrl });
  const users: WorkspaceCast['users'] = {};
  const visitors: WorkspaceCast['visitors'] = {};
  for (const who of ['owner', ...options.roles, 'outsider'])
    users[who] = await app.core.users.createUser(emailOf(who), PASSWORD);
  const made = await createWorkspace({
    client,
    auth: bearer(users.owner!.token),
    body: { workspace: { name: options.name } },
  });
  const workspaceId = made.data!.id;
  const other = await createWorkspace({
    client,
    auth: bearer(users.outsider!.token),
    body: { workspace: { name: options.otherName ?? 'Elsewhere' } },
  });
  const otherWorkspaceId = other.data!.id;
  for (const role of options.roles)
    await app.db.query(
      'insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, $3, now())',
      [workspaceId, users[role]!.userId, role],
    );
  for (const who of Object.keys(users)) {
    visitors[who] = new Visitor(app.baseUrl);
    expect((await visitors[who].signIn(emailOf(who), PASSWORD)).status).toBe(303);
  }
  return { client, users, visitors, workspaceId, otherWorkspaceId, emailOf };
}
