/**
 * A workspace's audit trail read back (issue 41): the rows of `workspace_audit` (Migration20270201000000_workspace_members,
 * written by each member change in ./member-repository.ts), a page at a time, newest first, for the workspace's owner,
 * admins and auditors (./workspace-service.ts decides who). Never a secret: the rows name accounts and roles only.
 */
import type { WorkspaceAuditEntry } from '@secret-push/sdk/generated';
import { sql, type Db } from '../db/sql.js';

type Row = {
  id: string | number;
  action: WorkspaceAuditEntry['action'];
  actor_id: string | null;
  subject_id: string | null;
  subject_email: string;
  role: WorkspaceAuditEntry['role'];
  at: Date | string;
};

const S = {
  count: sql<{ workspaceId: number }, { n: string }>(
    'select count(*) as n from workspace_audit where workspace_id = :workspaceId',
  ),
  page: sql<{ workspaceId: number; limit: number; offset: number }, Row>(
    `select id, action, actor_id, subject_id, subject_email, role, at from workspace_audit
     where workspace_id = :workspaceId order by at desc, id desc limit :limit offset :offset`,
  ),
};

const entryOf = (r: Row): WorkspaceAuditEntry => ({
  id: Number(r.id),
  action: r.action,
  actor_id: r.actor_id,
  subject_id: r.subject_id,
  subject_email: r.subject_email,
  role: r.role,
  at: new Date(r.at).toISOString(),
});

export type AuditTrail = ReturnType<typeof createAuditTrail>;

export function createAuditTrail(db: Db) {
  return {
    /** One page of the workspace's trail, newest first, and how many entries it has in all. */
    async page(
      workspaceId: number,
      limit: number,
      offset: number,
    ): Promise<{ items: WorkspaceAuditEntry[]; total: number }> {
      const [count, rows] = await Promise.all([
        db.query(S.count, { workspaceId }),
        db.query(S.page, { workspaceId, limit, offset }),
      ]);
      return { items: rows.map(entryOf), total: Number(count[0]!.n) };
    },
  };
}
