/** A push's audit log and an owner's lists of pushes, active or expired, a page at a time with their totals. */
import { sql, type Db } from '../../db/sql.js';
import { AUDIT_ENTRIES, type AuditRow, PUSHES, type PushRow } from '../push-tables.js';
import { type PageOf, pushesOf, type Total } from './statement-parts.js';

const P = PUSHES;
const A = AUDIT_ENTRIES;

const S = {
  auditCount: sql<{ pushId: string }, Total>('select count(*) as total from audit_entries where push_id = :pushId'),
  auditPage: sql<{ pushId: string; limit: number; offset: number }>(
    `select ${A.list} from audit_entries where push_id = :pushId order by created_at, id limit :limit offset :offset`,
  ),
  activeCount: sql<{ ownerId: string; now: Date }, Total>(
    'select count(*) as total from pushes where user_id = :ownerId and workspace_id is null and not expired and expires_at > :now',
  ),
  activePage: sql<{ ownerId: string; now: Date; limit: number; offset: number }>(
    `select ${P.list} from pushes where user_id = :ownerId and workspace_id is null and not expired and expires_at > :now
     order by created_at desc, id desc limit :limit offset :offset`,
  ),
  expiredCount: sql<{ ownerId: string; now: Date }, Total>(
    'select count(*) as total from pushes where user_id = :ownerId and workspace_id is null and (expired or expires_at <= :now)',
  ),
  expiredPage: sql<{ ownerId: string; now: Date; limit: number; offset: number }>(
    `select ${P.list} from pushes where user_id = :ownerId and workspace_id is null and (expired or expires_at <= :now)
     order by created_at desc, id desc limit :limit offset :offset`,
  ),
};

async function count(rows: Promise<Total[]>): Promise<number> {
  return Number((await rows)[0]?.total ?? 0);
}

/** The audit log of a push and the owner's lists (ownerPage). */
export function ownerListOperations(db: Db) {
  return {
    async auditPage(pushId: string, limit: number, offset: number): Promise<PageOf<AuditRow>> {
      const [total, rows] = await Promise.all([
        count(db.query(S.auditCount, { pushId })),
        db.query(S.auditPage, { pushId, limit, offset }),
      ]);
      return { items: rows.map((r) => A.fromRow(r)), total };
    },

    async ownerPage(
      state: 'active' | 'expired',
      ownerId: string,
      now: Date,
      limit: number,
      offset: number,
    ): Promise<PageOf<PushRow>> {
      const [countOf, pageOf] = state === 'active' ? [S.activeCount, S.activePage] : [S.expiredCount, S.expiredPage];
      const [total, items] = await Promise.all([
        count(db.query(countOf, { ownerId, now })),
        pushesOf(db.query(pageOf, { ownerId, now, limit, offset })),
      ]);
      return { items, total };
    },
  };
}
