/**
 * The brand a page carries, resolved per request by one function (`Brands.forRequest`), and the files of every brand
 * (`Brands.file`), served by ./routes/brand-files.ts under `/brand/<brand id>/<file>`. Today there is one brand, the
 * instance's (`PWPUSH_INSTANCE_NAME`, `PWPUSH_BRAND_*`, read at start-up by config/brand-settings.ts); a workspace's
 * own brand plugs in at `forRequest` (the request names the push or request, hence its workspace) and at `file` (its
 * id), with no change to the layout, the stylesheet or the route. Nothing here fetches a URL: every file is one the
 * operator mounted, read at start-up.
 */
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { textOn, type BrandFile, type BrandSettings } from '../config/brand-settings.js';

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
}

export interface Brands {
  /** The brand of the page this request asks for. */
  forRequest(req: Request): PageBrand;
  /** A file of a brand by its id and name (`logo.png`, `favicon.ico`, `theme.css`, `custom.css`), or null. */
  file(brandId: string, name: string): BrandFile | null;
}

/** The instance's brand id in URLs. */
const INSTANCE = 'instance';

/** The stylesheet of the brand's colours: custom properties our stylesheet reads (style.css). */
function themeCss(brand: BrandSettings): BrandFile | null {
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
    },
    files,
  };
}

export function createBrands(settings: { brand: BrandSettings }): Brands {
  const instance = resolve(INSTANCE, settings.brand);
  return {
    // A workspace's brand: look up the workspace of the push or request this path names, and return its resolved
    // brand (kept by id like the instance's), falling back to the instance's.
    forRequest: () => instance.page,
    file: (brandId, name) => (brandId === INSTANCE ? (instance.files.get(name) ?? null) : null),
  };
}
