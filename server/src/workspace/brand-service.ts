/**
 * A workspace's brand (issue 42; docs/branding.md "A workspace's brand"): read by any member, set by its owner and
 * admins (`getWorkspaceBrand`, `updateWorkspaceBrand`), checked by the instance brand's rules
 * (`checkWorkspaceBrand`, rules/src/workspace-brand.ts, which the stateful mock runs too), audited in the workspace's
 * trail. What the pages and mails of the workspace's pushes and requests carry (`forPages`), and its logo's bytes
 * (`logo`), served by web/routes/brand-files.ts under `/brand/ws-<id>/`.
 */
import type { UpdateWorkspaceBrandRequest, WorkspaceBrand, WorkspaceBrandLogo } from '@secret-push/sdk/generated';
import { ApiError, checkWorkspaceBrand, workspaceNotFound } from '@secret-push/rules';
import { strongEtag, type BrandSettings } from '../config/brand-settings.js';
import type { MailBrand, MailBrandOf } from '../mail/messages.js';
import { keyWorkspace, type RequestContext } from '../request-context.js';
import type { BrandRepository, StoredBrand } from './brand-repository.js';
import type { WorkspaceRepository } from './workspace-repository.js';
import { signOnProof } from './workspace-rules.js';
import { shutOut } from './workspace-service.js';

const EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
};

/** The logo's URL on this server, versioned by its ETag (a new logo is a new URL). */
export function logoUrl(workspaceId: number, logo: { type: string; etag: string }): string {
  return `/brand/ws-${workspaceId}/logo.${EXT[logo.type] ?? 'img'}?v=${logo.etag.slice(1, 13)}`;
}

export interface WorkspaceBrandService {
  /** The brand, for any member of the workspace; 404 for anyone else (or no such workspace). */
  get(workspaceId: number, ctx: RequestContext): Promise<WorkspaceBrand>;
  /** Replaces it, for the owner and admins (403 for other members, 404 outside); 422 on a broken rule. Audited. */
  update(workspaceId: number, body: UpdateWorkspaceBrandRequest, ctx: RequestContext): Promise<WorkspaceBrand>;
  /** The stored brand a page or mail of the workspace carries, or null (none: the instance's). */
  forPages(workspaceId: number): Promise<StoredBrand | null>;
  /** The logo's bytes, kind and ETag, or null. */
  logo(workspaceId: number): Promise<{ body: Buffer; type: string; etag: string } | null>;
  /** The workspace of the request of this link (its responder's page carries its brand), or null. */
  requestWorkspace(urlToken: string): Promise<number | null>;
}

function toWire(workspaceId: number, brand: StoredBrand | null): WorkspaceBrand {
  const logo: WorkspaceBrandLogo | null = brand?.logo
    ? {
        url: logoUrl(workspaceId, brand.logo),
        content_type: brand.logo.type as WorkspaceBrandLogo['content_type'],
        bytes: brand.logo.bytes,
      }
    : null;
  return {
    workspace_id: workspaceId,
    configured: brand !== null,
    name: brand?.name ?? null,
    accent_color: brand?.accentColor ?? null,
    header_color: brand?.headerColor ?? null,
    footer_text: brand?.footerText ?? null,
    imprint_url: brand?.imprintUrl ?? null,
    privacy_url: brand?.privacyUrl ?? null,
    logo,
    updated_at: brand ? brand.updatedAt.toISOString() : null,
  };
}

/** Base64 to bytes, or null when it does not round-trip (Node's decoder skips what it cannot read). */
function decodeBase64(b64: string): Uint8Array | null {
  const bytes = Buffer.from(b64, 'base64');
  return bytes.toString('base64') === b64 ? bytes : null;
}

/**
 * The mails' brand of a workspace's push or request: the workspace's name, accent (else the instance's), footer and
 * links; the instance's without a workspace or a brand. A failed read sends the mail in the instance's brand rather
 * than not at all.
 */
export function mailBrandResolver(brands: Pick<BrandRepository, 'read'>, instance: BrandSettings): MailBrandOf {
  return async (workspaceId) => {
    const brand = workspaceId === null ? null : await brands.read(workspaceId).catch(() => null);
    if (!brand) return instance;
    return {
      workspaceName: brand.name ?? brand.workspaceName,
      accentColor: brand.accentColor ?? instance.accentColor,
      footerText: brand.footerText,
      imprintUrl: brand.imprintUrl,
      privacyUrl: brand.privacyUrl,
    } satisfies MailBrand;
  };
}

function requireUser(ctx: RequestContext): string {
  if (ctx.actor.userId === null) throw new ApiError('authentication_required', 'A workspace needs an API token.');
  return ctx.actor.userId;
}

export function createWorkspaceBrandService(
  workspaces: WorkspaceRepository,
  brands: BrandRepository,
): WorkspaceBrandService {
  /** The caller's role, or null outside; a member the workspace's sign-in rules shut out is refused (403). */
  const standing = async (workspaceId: number, userId: string, ctx: RequestContext) => {
    const found = await workspaces.roleOf(workspaceId, userId, signOnProof(ctx));
    const refused = shutOut(found);
    if (refused) throw refused;
    return found;
  };
  return {
    async get(workspaceId, ctx) {
      const userId = requireUser(ctx);
      const own = keyWorkspace(ctx);
      if (own !== null ? own !== workspaceId : (await standing(workspaceId, userId, ctx)) === null)
        throw workspaceNotFound();
      return toWire(workspaceId, await brands.read(workspaceId));
    },

    async update(workspaceId, body, ctx) {
      const userId = requireUser(ctx);
      // A workspace's key never reaches here (requireWorkspaceKeyOperation): its brand is its people's to set.
      if (keyWorkspace(ctx) !== null) throw workspaceNotFound();
      const judge = (role: string | null) => {
        if (role === null) throw workspaceNotFound();
        if (role !== 'owner' && role !== 'admin')
          throw new ApiError('forbidden', `Only the workspace's owner and admins set its brand; you are its ${role}.`);
      };
      // The role first (404 and 403 say nothing of the body), then the body's rules, then the write, which judges the
      // role again under its lock.
      judge((await standing(workspaceId, userId, ctx))?.role ?? null);
      const checked = checkWorkspaceBrand(body.brand, decodeBase64);
      const logo =
        checked.logo === undefined || checked.logo === null
          ? checked.logo
          : (() => {
              const bytes = Buffer.from(checked.logo.body);
              return { body: bytes, type: checked.logo.type, etag: strongEtag(bytes) };
            })();
      const stored = await brands.write(workspaceId, userId, judge, { ...checked, logo }, ctx.now ?? new Date());
      return toWire(workspaceId, stored);
    },

    forPages: (workspaceId) => brands.read(workspaceId),
    logo: (workspaceId) => brands.logo(workspaceId),
    requestWorkspace: (urlToken) => brands.requestWorkspace(urlToken),
  };
}
