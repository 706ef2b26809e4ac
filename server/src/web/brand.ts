/**
 * The brand a page carries, resolved per request (`Brands.forRequest`: the instance's), and the files of every brand
 * (`Brands.file`), served by ./routes/brand-files.ts under `/brand/<brand id>/<file>`. The instance's brand
 * (`PWPUSH_INSTANCE_NAME`, `PWPUSH_BRAND_*`) is read at start-up by config/brand-settings.ts; a workspace's (issue 42,
 * workspace/brand-service.ts) is read from the database when a page of one of its live pushes or requests is
 * rendered (`forWorkspace`, which the page's route calls once it knows the workspace), its files (`workspaceFile`:
 * the logo, the colours' stylesheet) under `/brand/ws-<id>/`. A workspace's brand keeps the instance's favicon and
 * the operator's CSS, and names the instance (`sentThrough`). Nothing here fetches a URL.
 */
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { logoUrl, type WorkspaceBrandService } from '../workspace/brand-service.js';
import type { StoredBrand } from '../workspace/brand-repository.js';
import { textOn } from '@secret-push/rules';
import type { BrandFile, BrandSettings } from '../config/brand-settings.js';

/** What the layout needs of a brand: its name, the URLs of its files, its footer. */
export interface PageBrand {
  name: string;
  /** `/brand/<id>/logo.<ext>?v=<etag>`, or null. */
  logoUrl: string | null;
  faviconUrl: string | null;
  /** Stylesheets after ours: the colours (`theme.css`, made from the settings), then the operator's CSS. */
  stylesheets: string[];
  footerText: string | null;
  /** The imprint and privacy links; the layout names them in the page's language (`layout.footer.link`). */
  footerLinks: { kind: 'imprint' | 'privacy'; href: string }[];
  /** A workspace's brand: the instance's name, said in the footer ("Sent through …"); null for the instance's. */
  sentThrough: string | null;
}

export interface Brands {
  /** The brand of the page this request asks for. */
  forRequest(req: Request): PageBrand;
  /** A file of a brand by its id and name (`logo.png`, `favicon.ico`, `theme.css`, `custom.css`), or null. */
  file(brandId: string, name: string): BrandFile | null;
  /** The brand of a workspace's pages, or null: it has none (its pages carry the instance's). */
  forWorkspace(workspaceId: number): Promise<PageBrand | null>;
  /** A file of a workspace's brand (`logo.<ext>`, `theme.css`), or null. */
  workspaceFile(workspaceId: number, name: string): Promise<BrandFile | null>;
}

/** The instance's brand id in URLs. */
const INSTANCE = 'instance';

/** The stylesheet of the brand's colours: custom properties our stylesheet reads (style.css). */
function themeCss(brand: Pick<BrandSettings, 'accentColor' | 'headerColor'>): BrandFile | null {
  const lines: string[] = [];
  if (brand.accentColor) lines.push(`  --accent: ${brand.accentColor};`, '  --accent-fg: #ffffff;');
  if (brand.headerColor)
    lines.push(`  --header-bg: ${brand.headerColor};`, `  --header-fg: ${textOn(brand.headerColor)};`);
  if (lines.length === 0) return null;
  const body = Buffer.from(`/* The brand's colours (PWPUSH_BRAND_*_COLOR). */\n:root {\n${lines.join('\n')}\n}\n`);
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
  return { body, type: 'text/css; charset=utf-8', ext: 'css', etag };
}

interface Resolved {
  page: PageBrand;
  files: Map<string, BrandFile>;
}

/** A brand's page view and its files by name, worked out once. */
function resolve(id: string, brand: BrandSettings): Resolved {
  const files = new Map<string, BrandFile>();
  const url = (name: string, file: BrandFile) => {
    files.set(name, file);
    return `/brand/${id}/${name}?v=${file.etag.slice(1, 13)}`;
  };
  const theme = themeCss(brand);
  const stylesheets = [
    ...(theme ? [url('theme.css', theme)] : []),
    ...(brand.css ? [url('custom.css', brand.css)] : []),
  ];
  const footerLinks: PageBrand['footerLinks'] = [
    ...(brand.imprintUrl ? [{ kind: 'imprint' as const, href: brand.imprintUrl }] : []),
    ...(brand.privacyUrl ? [{ kind: 'privacy' as const, href: brand.privacyUrl }] : []),
  ];
  return {
    page: {
      name: brand.name,
      logoUrl: brand.logo ? url(`logo.${brand.logo.ext}`, brand.logo) : null,
      faviconUrl: brand.favicon ? url(`favicon.${brand.favicon.ext}`, brand.favicon) : null,
      stylesheets,
      footerText: brand.footerText,
      footerLinks,
      sentThrough: null,
    },
    files,
  };
}

/** A workspace's colours over the instance's (a colour it leaves unset is the instance's). */
const workspaceColours = (instance: BrandSettings, brand: StoredBrand) => ({
  accentColor: brand.accentColor ?? instance.accentColor,
  headerColor: brand.headerColor ?? instance.headerColor,
});

export function createBrands(
  settings: { brand: BrandSettings },
  workspaces?: Pick<WorkspaceBrandService, 'forPages' | 'logo'>,
): Brands {
  const instance = resolve(INSTANCE, settings.brand);
  const custom = instance.page.stylesheets.filter((href) => href.startsWith(`/brand/${INSTANCE}/custom.css`));
  return {
    forRequest: () => instance.page,
    file: (brandId, name) => (brandId === INSTANCE ? (instance.files.get(name) ?? null) : null),

    async forWorkspace(workspaceId) {
      const brand = await workspaces?.forPages(workspaceId);
      if (!brand) return null;
      const theme = themeCss(workspaceColours(settings.brand, brand));
      const id = `ws-${workspaceId}`;
      return {
        name: brand.name ?? brand.workspaceName,
        logoUrl: brand.logo ? logoUrl(workspaceId, brand.logo) : null,
        faviconUrl: instance.page.faviconUrl,
        // The workspace's colours, then the operator's CSS (a workspace has none of its own: docs/branding.md).
        stylesheets: [...(theme ? [`/brand/${id}/theme.css?v=${theme.etag.slice(1, 13)}`] : []), ...custom],
        footerText: brand.footerText,
        footerLinks: [
          ...(brand.imprintUrl ? [{ kind: 'imprint' as const, href: brand.imprintUrl }] : []),
          ...(brand.privacyUrl ? [{ kind: 'privacy' as const, href: brand.privacyUrl }] : []),
        ],
        sentThrough: settings.brand.name,
      };
    },

    async workspaceFile(workspaceId, name) {
      if (!workspaces) return null;
      if (name === 'theme.css') {
        const brand = await workspaces.forPages(workspaceId);
        return brand ? themeCss(workspaceColours(settings.brand, brand)) : null;
      }
      const logo = /^logo\.(png|jpg|webp|svg)$/.test(name) ? await workspaces.logo(workspaceId) : null;
      if (!logo || name !== logoUrl(workspaceId, logo).split('/').pop()!.split('?')[0]) return null;
      return { body: logo.body, type: logo.type, ext: name.slice(5), etag: logo.etag };
    },
  };
}
