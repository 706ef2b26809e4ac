/**
 * The statements that read a workspace's pushes (issue 41): its lists, every push of it for those who see all
 * (owner, admin, auditor), or one member's own. A push's workspace is its `workspace_id` column
 * (Migration20270121000000_workspaces), written by the create from the row (create.ts); the lists of a
 * personal space leave the workspaces' pushes out (`workspace_id is null` in owner-lists.ts).
 */
import { sql, type Db } from '../../db/sql.js';
import { PUSHES as P, type PushRow } from '../push-tables.js';

type Total = { total: string | number };
interface Scope {
  workspaceId: number;
  /** One member's own pushes; null: every push of the workspace. */
  ownerId: string | null;
  now: Date;
}

/** `:ownerId::uuid is null or user_id = :ownerId`: the one statement serves both scopes (uses pushes_workspace_idx). */
const IN_SCOPE = 'workspace_id = :workspaceId and (:ownerId::uuid is null or user_id = :ownerId::uuid)';
const ACTIVE = 'not expired and expires_at > :now';
const EXPIRED = '(expired or expires_at <= :now)';

const WS = {
  activeCount: sql<Scope, Total>(`select count(*) as total from pushes where ${IN_SCOPE} and ${ACTIVE}`),
  activePage: sql<Scope & { limit: number; offset: number }>(
    `select ${P.list} from pushes where ${IN_SCOPE} and ${ACTIVE}
     order by created_at desc, id desc limit :limit offset :offset`,
  ),
  expiredCount: sql<Scope, Total>(`select count(*) as total from pushes where ${IN_SCOPE} and ${EXPIRED}`),
  expiredPage: sql<Scope & { limit: number; offset: number }>(
    `select ${P.list} from pushes where ${IN_SCOPE} and ${EXPIRED}
     order by created_at desc, id desc limit :limit offset :offset`,
  ),
};

export function workspacePushOperations(db: Db) {
  return {
    /** One page of a workspace's active or expired pushes: all of them (`ownerId` null), or one member's own. */
    async workspacePage(
      state: 'active' | 'expired',
      workspaceId: number,
      ownerId: string | null,
      now: Date,
      limit: number,
      offset: number,
    ): Promise<{ items: PushRow[]; total: number }> {
      const [countOf, pageOf] =
        state === 'active' ? [WS.activeCount, WS.activePage] : [WS.expiredCount, WS.expiredPage];
      const scope = { workspaceId, ownerId, now };
      const [total, rows] = await Promise.all([
        db.query(countOf, scope),
        db.query(pageOf, { ...scope, limit, offset }),
      ]);
      return { items: rows.map((r) => P.fromRow(r)), total: Number(total[0]?.total ?? 0) };
    },
  };
}
