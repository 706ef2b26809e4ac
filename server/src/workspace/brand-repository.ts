/**
 * The statements of a workspace's brand (issue 42, Migration20270207000000_workspace_brand): the row read without
 * its logo's bytes (what a page needs), the logo read alone (what `/brand/ws-<id>/` serves), and a change in one
 * transaction that locks the changer's membership, lets the caller judge the role under that lock, replaces the row
 * and writes `brand_changed` to the workspace's trail (`workspace_audit`, ./workspace-audit.ts).
 */
import type { WorkspaceRole } from '@secret-push/sdk/generated';
import { sql, type Db } from '../db/sql.js';
import { WORKSPACE_AUDIT } from './workspace-audit.js';

/** A logo as stored: its kind (by its content), ETag and size; the bytes only where asked for. */
interface StoredLogo {
  type: string;
  etag: string;
  bytes: number;
}

/** A workspace's brand as stored, with the workspace's own name (the brand's name when it sets none). */
export interface StoredBrand {
  workspaceId: number;
  workspaceName: string;
  name: string | null;
  accentColor: string | null;
  headerColor: string | null;
  footerText: string | null;
  imprintUrl: string | null;
  privacyUrl: string | null;
  logo: StoredLogo | null;
  updatedAt: Date;
}

/** What a change writes (the logo: undefined keeps the stored one, null removes it). */
interface BrandWrite {
  name: string | null;
  accentColor: string | null;
  headerColor: string | null;
  footerText: string | null;
  imprintUrl: string | null;
  privacyUrl: string | null;
  logo: { body: Buffer; type: string; etag: string } | null | undefined;
}

type BrandRow = {
  workspace_id: number;
  workspace_name: string;
  name: string | null;
  accent_color: string | null;
  header_color: string | null;
  footer_text: string | null;
  imprint_url: string | null;
  privacy_url: string | null;
  logo_type: string | null;
  logo_etag: string | null;
  logo_bytes: number | null;
  updated_at: Date;
};

const COLUMNS = `b.workspace_id, w.name as workspace_name, b.name, b.accent_color, b.header_color, b.footer_text,
  b.imprint_url, b.privacy_url, b.logo_type, b.logo_etag, octet_length(b.logo) as logo_bytes, b.updated_at`;

const B = {
  read: sql<{ workspaceId: number }, BrandRow>(
    `select ${COLUMNS} from workspace_brands b join workspaces w on w.id = b.workspace_id
     where b.workspace_id = :workspaceId`,
    { prepare: true },
  ),
  logo: sql<{ workspaceId: number }, { logo: Buffer; logo_type: string; logo_etag: string }>(
    `select logo, logo_type, logo_etag from workspace_brands where workspace_id = :workspaceId and logo is not null`,
    { prepare: true },
  ),
  requestWorkspace: sql<{ urlToken: string }, { workspace_id: number | null }>(
    'select workspace_id from requests where url_token = :urlToken',
    { prepare: true },
  ),
  lockRole: sql<{ workspaceId: number; userId: string }, { role: WorkspaceRole; email: string }>(
    `select m.role, u.email from workspace_members m join users u on u.id = m.user_id
     where m.workspace_id = :workspaceId and m.user_id = :userId for share of m`,
  ),
  upsert: sql<
    {
      workspaceId: number;
      name: string | null;
      accentColor: string | null;
      headerColor: string | null;
      footerText: string | null;
      imprintUrl: string | null;
      privacyUrl: string | null;
      keepLogo: boolean;
      logo: Buffer | null;
      logoType: string | null;
      logoEtag: string | null;
      userId: string;
      now: Date;
    },
    Record<string, never>
  >(
    `insert into workspace_brands as b (workspace_id, name, accent_color, header_color, footer_text, imprint_url,
       privacy_url, logo, logo_type, logo_etag, updated_by, updated_at)
     values (:workspaceId, :name, :accentColor, :headerColor, :footerText, :imprintUrl, :privacyUrl,
       case when :keepLogo::boolean then null else :logo::bytea end,
       case when :keepLogo::boolean then null else :logoType end,
       case when :keepLogo::boolean then null else :logoEtag end, :userId, :now)
     on conflict (workspace_id) do update set name = excluded.name, accent_color = excluded.accent_color,
       header_color = excluded.header_color, footer_text = excluded.footer_text, imprint_url = excluded.imprint_url,
       privacy_url = excluded.privacy_url,
       logo = case when :keepLogo::boolean then b.logo else excluded.logo end,
       logo_type = case when :keepLogo::boolean then b.logo_type else excluded.logo_type end,
       logo_etag = case when :keepLogo::boolean then b.logo_etag else excluded.logo_etag end,
       updated_by = excluded.updated_by, updated_at = excluded.updated_at`,
  ),
};

const fromRow = (r: BrandRow): StoredBrand => ({
  workspaceId: r.workspace_id,
  workspaceName: r.workspace_name,
  name: r.name,
  accentColor: r.accent_color,
  headerColor: r.header_color,
  footerText: r.footer_text,
  imprintUrl: r.imprint_url,
  privacyUrl: r.privacy_url,
  logo: r.logo_type && r.logo_etag ? { type: r.logo_type, etag: r.logo_etag, bytes: Number(r.logo_bytes ?? 0) } : null,
  updatedAt: new Date(r.updated_at),
});

export interface BrandRepository {
  /** The workspace's brand without the logo's bytes, or null: it has none (or no such workspace). */
  read(workspaceId: number): Promise<StoredBrand | null>;
  /** The logo's bytes, kind and ETag, or null. */
  logo(workspaceId: number): Promise<{ body: Buffer; type: string; etag: string } | null>;
  /** The workspace of the request of this link, or null (none, or no such request). */
  requestWorkspace(urlToken: string): Promise<number | null>;
  /**
   * Replaces the brand once `judge` allows the changer's role (read under a share lock on the membership, so a
   * removal waits; null: not a member), with its `brand_changed` audit entry, in one transaction. `judge` throws a
   * refusal and nothing is written.
   */
  write(
    workspaceId: number,
    userId: string,
    judge: (role: WorkspaceRole | null) => void,
    brand: BrandWrite,
    now: Date,
  ): Promise<StoredBrand>;
}

export function createBrandRepository(db: Db): BrandRepository {
  const read = async (q: Db, workspaceId: number) => {
    const [row] = await q.query(B.read, { workspaceId });
    return row ? fromRow(row) : null;
  };
  return {
    read: (workspaceId) => read(db, workspaceId),

    async logo(workspaceId) {
      const [row] = await db.query(B.logo, { workspaceId });
      return row ? { body: row.logo, type: row.logo_type, etag: row.logo_etag } : null;
    },

    async requestWorkspace(urlToken) {
      const [row] = await db.query(B.requestWorkspace, { urlToken });
      return row?.workspace_id ?? null;
    },

    async write(workspaceId, userId, judge, brand, now) {
      return db.transaction(async (tx) => {
        const [member] = await tx.query(B.lockRole, { workspaceId, userId });
        judge(member?.role ?? null);
        const { logo } = brand;
        await tx.query(B.upsert, {
          workspaceId,
          name: brand.name,
          accentColor: brand.accentColor,
          headerColor: brand.headerColor,
          footerText: brand.footerText,
          imprintUrl: brand.imprintUrl,
          privacyUrl: brand.privacyUrl,
          keepLogo: logo === undefined,
          logo: logo?.body ?? null,
          logoType: logo?.type ?? null,
          logoEtag: logo?.etag ?? null,
          userId,
          now,
        });
        // The trail's entry: its subject is the actor, as a settings change's (workspace-audit.ts).
        await tx.query(WORKSPACE_AUDIT.insert, {
          workspaceId,
          action: 'brand_changed',
          actorId: userId,
          subjectId: userId,
          subjectEmail: member!.email,
          role: null,
          now,
        });
        return (await read(tx, workspaceId))!;
      });
    },
  };
}
