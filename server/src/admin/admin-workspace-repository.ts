/**
 * The admin console's SQL for workspaces (issue 41, docs/admin.md): workspaces found by name or id and paged, with
 * their counts; one workspace's members, pending invitations, keys, webhooks and recent trail; a user's workspaces;
 * the storage each workspace holds. Like ./admin-repository.ts it reads no secret: no push's payload or name, no
 * invitation's token digest, no key's digest, no webhook's signing secret, and of a webhook's URL only its host (the
 * rest of a URL may carry a token of the receiver's).
 */
import type { WorkspaceRole } from '@secret-push/sdk/generated';
import { MAX_MEMBERS_PER_WORKSPACE } from '@secret-push/rules';
import { sql, type Db } from '../db/sql.js';
import { column, defineTable } from '../db/table.js';

export interface AdminWorkspaceRow {
  id: number;
  name: string;
  createdAt: Date;
  requireTwoFactor: boolean;
  requireSingleSignOn: boolean;
  ssoDomain: string | null;
  /** The owner's email, or null: the workspace has no owner (its owner's account was deleted). */
  ownerEmail: string | null;
  ownerId: string | null;
  ownerLocked: boolean;
  members: number;
  livePushes: number;
  storedBytes: number;
  apiKeys: number;
  webhooks: number;
}

const WORKSPACE_ROW = defineTable<AdminWorkspaceRow>('workspaces', {
  id: column.int('id'),
  name: column.text('name'),
  createdAt: column.date('created_at'),
  requireTwoFactor: column.bool('require_two_factor'),
  requireSingleSignOn: column.bool('require_single_sign_on'),
  ssoDomain: column.textOrNull('sso_domain'),
  ownerEmail: column.textOrNull('owner_email'),
  ownerId: column.textOrNull('owner_id'),
  ownerLocked: column.bool('owner_locked'),
  members: column.int('members'),
  livePushes: column.int('live_pushes'),
  storedBytes: column.int('stored_bytes'),
  apiKeys: column.int('api_keys'),
  webhooks: column.int('webhooks'),
});

export interface AdminMemberRow {
  userId: string;
  email: string;
  role: WorkspaceRole;
  joinedAt: Date;
  twoFactor: boolean;
  locked: boolean;
}

export interface AdminInvitationRow {
  id: string;
  /** null: an invitation by link (no address). */
  email: string | null;
  role: WorkspaceRole;
  createdAt: Date;
  expiresAt: Date;
}

export interface AdminKeyRow {
  id: string;
  name: string;
  scopes: string[];
  madeBy: string;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
}

export interface AdminWebhookRow {
  id: string;
  /** The URL's host (and port) only. */
  host: string;
  enabled: boolean;
  createdAt: Date;
}

export interface AdminTrailRow {
  action: string;
  actorEmail: string | null;
  subjectEmail: string;
  role: string | null;
  at: Date;
}

/** Rows of a workspace's page: invitations, keys, webhooks and trail entries each. */
const WORKSPACE_PAGE_ROWS = 100;
/** Trail entries a workspace's page shows (the workspace's own trail page has them all). */
const RECENT_TRAIL = 50;

const WORKSPACE_COLUMNS = `w.id, w.name, w.created_at, w.require_two_factor, w.require_single_sign_on, w.sso_domain,
  o.email as owner_email, o.id as owner_id, coalesce(o.locked_at is not null, false) as owner_locked,
  (select count(*) from workspace_members m where m.workspace_id = w.id) as members,
  (select count(*) from pushes p where p.workspace_id = w.id and not p.expired) as live_pushes,
  coalesce((select s.bytes from workspace_storage s where s.workspace_id = w.id), 0) as stored_bytes,
  (select count(*) from api_keys k where k.workspace_id = w.id) as api_keys,
  (select count(*) from webhooks h where h.workspace_id = w.id) as webhooks`;

const OWNER_JOIN = `left join workspace_members om on om.workspace_id = w.id and om.role = 'owner'
  left join users o on o.id = om.user_id`;

/** `:id` null unless the search is a number: then the workspace of that id matches too. */
const MATCHES = `(lower(w.name) like :pattern escape '\\' or w.id = cast(:id as integer))`;

const W = {
  search: sql<{ pattern: string; id: number | null; limit: number; offset: number }>(
    `select ${WORKSPACE_COLUMNS} from workspaces w ${OWNER_JOIN}
     where ${MATCHES} order by lower(w.name), w.id limit :limit offset :offset`,
  ),
  searchCount: sql<{ pattern: string; id: number | null }, { n: string }>(
    `select count(*) as n from workspaces w where ${MATCHES}`,
  ),
  byId: sql<{ id: number }>(`select ${WORKSPACE_COLUMNS} from workspaces w ${OWNER_JOIN} where w.id = :id`),
  members: sql<
    { id: number; limit: number },
    { user_id: string; email: string; role: WorkspaceRole; created_at: unknown; two_factor: boolean; locked: boolean }
  >(
    `select m.user_id, u.email, m.role, m.created_at, u.totp_enabled_at is not null as two_factor,
       u.locked_at is not null as locked
     from workspace_members m join users u on u.id = m.user_id where m.workspace_id = :id
     order by (m.role = 'owner') desc, m.created_at, m.user_id limit :limit`,
  ),
  invitations: sql<
    { id: number; now: Date; limit: number },
    { id: string; email: string | null; role: WorkspaceRole; created_at: unknown; expires_at: unknown }
  >(
    `select id, email, role, created_at, expires_at from workspace_invitations
     where workspace_id = :id and accepted_at is null and revoked_at is null and expires_at > :now
     order by created_at desc, id limit :limit`,
  ),
  keys: sql<
    { id: number; limit: number },
    {
      id: string;
      name: string;
      scopes: unknown;
      made_by: string;
      created_at: unknown;
      expires_at: unknown;
      last_used_at: unknown;
    }
  >(
    `select k.id, k.name, k.scopes, u.email as made_by, k.created_at, k.expires_at, k.last_used_at
     from api_keys k join users u on u.id = k.user_id where k.workspace_id = :id
     order by k.created_at desc, k.id limit :limit`,
  ),
  webhooks: sql<{ id: number; limit: number }, { id: string; url: string; enabled: boolean; created_at: unknown }>(
    `select id, url, enabled, created_at from webhooks where workspace_id = :id order by created_at, id limit :limit`,
  ),
  trail: sql<
    { id: number; limit: number },
    { action: string; actor_email: string | null; subject_email: string; role: string | null; at: unknown }
  >(
    `select a.action, u.email as actor_email, a.subject_email, a.role, a.at
     from workspace_audit a left join users u on u.id = a.actor_id where a.workspace_id = :id
     order by a.at desc, a.id desc limit :limit`,
  ),
  ofUser: sql<{ userId: string; limit: number }, { id: number; name: string; role: WorkspaceRole }>(
    `select w.id, w.name, m.role from workspace_members m join workspaces w on w.id = m.workspace_id
     where m.user_id = cast(:userId as uuid) order by lower(w.name), w.id limit :limit`,
  ),
  storage: sql<Record<string, never>, { workspaces: string; bytes: string }>(
    `select (select count(*) from workspaces) as workspaces,
       (select coalesce(sum(bytes), 0) from workspace_storage) as bytes`,
  ),
  topWorkspaces: sql<{ limit: number }, { id: number; name: string; bytes: string }>(
    `select w.id, w.name, s.bytes from workspace_storage s join workspaces w on w.id = s.workspace_id
     where s.bytes > 0 order by s.bytes desc, w.id limit :limit`,
  ),
};

const date = column.date('at').parse;
const dateOrNull = column.dateOrNull('at').parse;

/** A webhook URL's host and port, never its path, query, or credentials. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(unreadable URL)';
  }
}

export function createAdminWorkspaceRepository(db: Db) {
  const n = (value: unknown) => Number(value ?? 0);
  return {
    async search(pattern: string, id: number | null, limit: number, offset: number) {
      const [rows, [count]] = await Promise.all([
        db.query(W.search, { pattern, id, limit, offset }),
        db.query(W.searchCount, { pattern, id }),
      ]);
      return { workspaces: rows.map((r) => WORKSPACE_ROW.fromRow(r)), total: n(count?.n) };
    },
    async workspace(id: number): Promise<AdminWorkspaceRow | null> {
      const [row] = await db.query(W.byId, { id });
      return row ? WORKSPACE_ROW.fromRow(row) : null;
    },
    /** The workspace's members, pending invitations, keys, webhooks and latest trail entries. */
    async details(id: number, now: Date) {
      const limit = WORKSPACE_PAGE_ROWS;
      const [members, invitations, keys, webhooks, trail] = await Promise.all([
        db.query(W.members, { id, limit: MAX_MEMBERS_PER_WORKSPACE }),
        db.query(W.invitations, { id, now, limit }),
        db.query(W.keys, { id, limit }),
        db.query(W.webhooks, { id, limit }),
        db.query(W.trail, { id, limit: RECENT_TRAIL }),
      ]);
      return {
        members: members.map((r): AdminMemberRow => ({
          userId: r.user_id,
          email: r.email,
          role: r.role,
          joinedAt: date(r.created_at),
          twoFactor: r.two_factor,
          locked: r.locked,
        })),
        invitations: invitations.map((r): AdminInvitationRow => ({
          id: r.id,
          email: r.email,
          role: r.role,
          createdAt: date(r.created_at),
          expiresAt: date(r.expires_at),
        })),
        keys: keys.map((r): AdminKeyRow => ({
          id: r.id,
          name: r.name,
          scopes: Array.isArray(r.scopes)
            ? r.scopes.map(String)
            : String(r.scopes)
                .replace(/^\{|\}$/g, '')
                .split(','),
          madeBy: r.made_by,
          createdAt: date(r.created_at),
          expiresAt: dateOrNull(r.expires_at),
          lastUsedAt: dateOrNull(r.last_used_at),
        })),
        webhooks: webhooks.map((r): AdminWebhookRow => ({
          id: r.id,
          host: hostOf(r.url),
          enabled: r.enabled,
          createdAt: date(r.created_at),
        })),
        trail: trail.map((r): AdminTrailRow => ({
          action: r.action,
          actorEmail: r.actor_email,
          subjectEmail: r.subject_email,
          role: r.role,
          at: date(r.at),
        })),
      };
    },
    async ofUser(userId: string) {
      return db.query(W.ofUser, { userId, limit: MAX_MEMBERS_PER_WORKSPACE });
    },
    async storage() {
      const [[totals], top] = await Promise.all([db.query(W.storage, {}), db.query(W.topWorkspaces, { limit: 20 })]);
      return {
        workspaces: n(totals?.workspaces),
        countedWorkspaceBytes: n(totals?.bytes),
        topWorkspaces: top.map((r) => ({ id: n(r.id), name: r.name, bytes: n(r.bytes) })),
      };
    },
  };
}
