/**
 * A workspace's brand in the stateful mock (issue 42): read by any member, set by its owner and admins, checked by
 * the server's rules (`checkWorkspaceBrand`, rules/src/workspace-brand.ts); 404 outside, 403 for members and
 * auditors, 422 on a broken rule with nothing stored. The mock serves no pages and no logo bytes: the record's
 * `logo.url` has the server's form.
 */
import type { UpdateWorkspaceBrandRequest, WorkspaceBrand, WorkspaceRole } from '../generated/types.gen.js';
import { ApiError, checkWorkspaceBrand, validationFailed, workspaceNotFound } from '@secret-push/rules';

const EXT: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'image/svg+xml': 'svg',
};

/** Base64 to bytes (the rule has checked its alphabet and padding), or null. */
function decode(b64: string): Uint8Array | null {
  try {
    return Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** A version of the logo's bytes for its URL (the server's is its SHA-256; the mock's FNV-1a, synchronously). */
function version(bytes: Uint8Array): string {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return `${h.toString(36)}${bytes.length.toString(36)}`.padEnd(12, '0').slice(0, 12);
}

export class MockWorkspaceBrands {
  private readonly brands = new Map<number, WorkspaceBrand>();

  /** The brand, for a member (`role` not null); 404 otherwise. */
  get(workspaceId: number, role: WorkspaceRole | null): WorkspaceBrand {
    if (role === null) throw workspaceNotFound();
    return structuredClone(this.brands.get(workspaceId) ?? unset(workspaceId));
  }

  /** Replaces it, for the owner and admins; 404 outside, 403 for other members, 422 on a broken rule. */
  update(workspaceId: number, role: WorkspaceRole | null, body: unknown, now: number): WorkspaceBrand {
    // As the server: the body's form first (its schema), then the caller's role, then the brand's rules.
    const brand = (body as { brand?: unknown } | null)?.brand;
    if (!brand || typeof brand !== 'object' || Array.isArray(brand))
      throw new ApiError('bad_request', 'The request body must be a JSON object with a "brand" object.');
    const input = brand as UpdateWorkspaceBrandRequest['brand'];
    for (const [field, value] of Object.entries(input))
      if (value !== null && typeof value !== 'string')
        throw validationFailed({ [field]: ['must be a string or null'] });
    if (role === null) throw workspaceNotFound();
    if (role !== 'owner' && role !== 'admin')
      throw new ApiError('forbidden', `Only the workspace's owner and admins set its brand; you are its ${role}.`);
    const checked = checkWorkspaceBrand(input, decode);
    const before = this.brands.get(workspaceId);
    const logo =
      checked.logo === undefined
        ? (before?.logo ?? null)
        : checked.logo === null
          ? null
          : {
              url: `/brand/ws-${workspaceId}/logo.${EXT[checked.logo.type]}?v=${version(checked.logo.body)}`,
              content_type: checked.logo.type,
              bytes: checked.logo.body.length,
            };
    const stored: WorkspaceBrand = {
      workspace_id: workspaceId,
      configured: true,
      name: checked.name,
      accent_color: checked.accentColor,
      header_color: checked.headerColor,
      footer_text: checked.footerText,
      imprint_url: checked.imprintUrl,
      privacy_url: checked.privacyUrl,
      logo,
      updated_at: new Date(now).toISOString(),
    };
    this.brands.set(workspaceId, stored);
    return structuredClone(stored);
  }

  /** A deleted workspace's brand goes with it. */
  dropWorkspace(workspaceId: number): void {
    this.brands.delete(workspaceId);
  }

  reset(): void {
    this.brands.clear();
  }
}

const unset = (workspaceId: number): WorkspaceBrand => ({
  workspace_id: workspaceId,
  configured: false,
  name: null,
  accent_color: null,
  header_color: null,
  footer_text: null,
  imprint_url: null,
  privacy_url: null,
  logo: null,
  updated_at: null,
});
