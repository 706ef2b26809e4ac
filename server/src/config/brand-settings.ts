/**
 * The instance's brand (PWPUSH_BRAND_*, with PWPUSH_INSTANCE_NAME): colours checked for contrast, files (logo,
 * favicon, custom CSS) read once at start-up from paths the operator mounts, each checked for its kind and size and
 * kept in memory with its ETag. Each setting is declared once below (`BRAND_SETTINGS`, with ./setting.ts's
 * `declared`): its variable, default, what it accepts, meaning and reader; `loadSettings` (./settings.ts) reads them
 * through `brandSettings` and lists them as the "Brand" area of docs/settings.md. A bad value throws SettingsError
 * naming the variable; a file's content is never echoed.
 */
import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { accentContrast, AA_CONTRAST, normalHex } from '@secret-push/rules';
import { declared, type Env, raw, SettingsError } from './setting.js';

/** A file of the brand, served by us under /brand/ (web/brand.ts). */
export interface BrandFile {
  /** The bytes, read at start-up. */
  body: Buffer;
  /** Its Content-Type. */
  type: string;
  /** Its file name extension (`png`, `svg`, `css`, …), for its URL. */
  ext: string;
  /** A strong ETag of its bytes (quoted). */
  etag: string;
}

export interface BrandSettings {
  /** The instance's name, on every page and in every mail (PWPUSH_INSTANCE_NAME). */
  name: string;
  /** Links, buttons and focus accents (PWPUSH_BRAND_ACCENT_COLOR, `#rrggbb`); null: ours. */
  accentColor: string | null;
  /** The page header's background (PWPUSH_BRAND_HEADER_COLOR); its text is black or white, whichever reads better. */
  headerColor: string | null;
  logo: BrandFile | null;
  favicon: BrandFile | null;
  /** The custom stylesheet, loaded after ours (PWPUSH_BRAND_CSS). */
  css: BrandFile | null;
  /** One line of text in every page's footer and every mail's (PWPUSH_BRAND_FOOTER_TEXT). */
  footerText: string | null;
  /** The footer's links (PWPUSH_BRAND_IMPRINT_URL, PWPUSH_BRAND_PRIVACY_URL). */
  imprintUrl: string | null;
  privacyUrl: string | null;
}

/** Our own look: nothing set but the name. */
export function defaultBrand(name = 'Secret Push'): BrandSettings {
  return {
    name,
    accentColor: null,
    headerColor: null,
    logo: null,
    favicon: null,
    css: null,
    footerText: null,
    imprintUrl: null,
    privacyUrl: null,
  };
}

const read = raw;

/** `#rgb` or `#rrggbb`, as `#rrggbb` lower case. */
function hexColor(env: Env, name: string): string | null {
  const value = read(env, name);
  if (value === undefined) return null;
  const hex = normalHex(value);
  if (hex === null) {
    throw new SettingsError(name, `${name} must be a hex colour, #rrggbb or #rgb (got "${value.slice(0, 40)}")`);
  }
  return hex;
}

function accentColor(env: Env): string | null {
  const name = 'PWPUSH_BRAND_ACCENT_COLOR';
  const color = hexColor(env, name);
  if (color === null) return null;
  const { worst, ok } = accentContrast(color);
  if (!ok) {
    throw new SettingsError(
      name,
      `${name} ${color} is too light: links in it and white text on it reach only ${worst.toFixed(2)}:1 on our backgrounds, and WCAG 2.1 AA needs ${AA_CONTRAST}:1. Choose a darker colour.`,
    );
  }
  return color;
}

/** One line of plain text, at most `max` characters. */
function line(env: Env, name: string, max: number): string | null {
  const value = read(env, name);
  if (value === undefined) return null;
  if (value.length > max || /[\u0000-\u001f\u007f]/.test(value)) {
    throw new SettingsError(name, `${name} must be one line of at most ${max} characters`);
  }
  return value;
}

/** An absolute http(s) URL the footer links to (never fetched by us). */
function linkUrl(env: Env, name: string): string | null {
  const value = read(env, name);
  if (value === undefined) return null;
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    /* refused below */
  }
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password) {
    throw new SettingsError(name, `${name} must be an absolute https:// or http:// URL without credentials`);
  }
  if (value.length > 2048) throw new SettingsError(name, `${name} must be at most 2048 characters`);
  return url.href;
}

interface FileKind {
  ext: string;
  type: string;
  /** Whether the bytes are of this kind. */
  looks(body: Buffer): boolean;
}

const startsWith = (bytes: number[]) => (body: Buffer) => bytes.every((b, i) => body[i] === b);
const SVG: FileKind = {
  ext: 'svg',
  type: 'image/svg+xml',
  looks: (body) => /<svg[\s>]/i.test(body.subarray(0, 4096).toString('utf8')),
};
const IMAGE_KINDS: Record<string, FileKind> = {
  '.png': { ext: 'png', type: 'image/png', looks: startsWith([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]) },
  '.jpg': { ext: 'jpg', type: 'image/jpeg', looks: startsWith([0xff, 0xd8, 0xff]) },
  '.jpeg': { ext: 'jpg', type: 'image/jpeg', looks: startsWith([0xff, 0xd8, 0xff]) },
  '.gif': { ext: 'gif', type: 'image/gif', looks: startsWith([0x47, 0x49, 0x46, 0x38]) },
  '.webp': {
    ext: 'webp',
    type: 'image/webp',
    looks: (body) => body.subarray(0, 4).toString('latin1') === 'RIFF' && body.subarray(8, 12).toString() === 'WEBP',
  },
  '.svg': SVG,
};
const FAVICON_KINDS: Record<string, FileKind> = {
  '.ico': { ext: 'ico', type: 'image/x-icon', looks: startsWith([0x00, 0x00, 0x01, 0x00]) },
  '.png': IMAGE_KINDS['.png']!,
  '.svg': SVG,
};
const CSS_KINDS: Record<string, FileKind> = {
  '.css': {
    ext: 'css',
    type: 'text/css; charset=utf-8',
    looks: (body) => {
      try {
        new TextDecoder('utf-8', { fatal: true }).decode(body);
        return true;
      } catch {
        return false;
      }
    },
  },
};

const KIB = 1024;

/** A strong ETag of a brand file's bytes (quoted). */
export function strongEtag(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
}

/** A file the operator mounted: an absolute path to a regular file of an allowed kind and size, read now. */
function brandFile(env: Env, name: string, kinds: Record<string, FileKind>, maxBytes: number) {
  const file = read(env, name);
  if (file === undefined) return null;
  const allowed = Object.keys(kinds).join(', ');
  const kind = kinds[path.extname(file).toLowerCase()];
  if (!path.isAbsolute(file) || !kind) {
    throw new SettingsError(name, `${name} must be the absolute path of a ${allowed} file (got "${file}")`);
  }
  let body: Buffer;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw new SettingsError(name, `${name}: ${file} is not a file`);
    if (stat.size > maxBytes) {
      throw new SettingsError(name, `${name}: ${file} is larger than ${maxBytes / KIB} KiB`);
    }
    body = readFileSync(file);
  } catch (error) {
    if (error instanceof SettingsError) throw error;
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new SettingsError(name, `${name}: ${file} cannot be read (${code})`);
  }
  if (body.length > maxBytes) throw new SettingsError(name, `${name}: ${file} is larger than ${maxBytes / KIB} KiB`);
  if (!kind.looks(body)) {
    throw new SettingsError(name, `${name}: ${file} is not a ${kind.ext} file (its content says otherwise)`);
  }
  return { body, type: kind.type, ext: kind.ext, etag: strongEtag(body) } satisfies BrandFile;
}

const LOGO = declared(
  'PWPUSH_BRAND_LOGO',
  {
    default: 'unset (the name alone)',
    accepts: 'an absolute path of a `.svg`, `.png`, `.jpg`, `.jpeg`, `.gif` or `.webp` file, at most 512 KiB',
    meaning:
      'The logo file the server reads at start-up (its content must be of the kind its name says) and serves from `/brand/`, shown beside the instance name in every page header. See [branding.md](branding.md).',
  },
  (env) => brandFile(env, 'PWPUSH_BRAND_LOGO', IMAGE_KINDS, 512 * KIB),
);
const FAVICON = declared(
  'PWPUSH_BRAND_FAVICON',
  {
    default: 'unset (none)',
    accepts: 'an absolute path of a `.ico`, `.png` or `.svg` file, at most 128 KiB',
    meaning: 'The favicon, read at start-up and served from `/brand/`.',
  },
  (env) => brandFile(env, 'PWPUSH_BRAND_FAVICON', FAVICON_KINDS, 128 * KIB),
);
const ACCENT_COLOR = declared(
  'PWPUSH_BRAND_ACCENT_COLOR',
  {
    default: 'ours, `#0b5cad`',
    accepts: '`#rrggbb` or `#rgb`, dark enough for 4.5:1',
    meaning:
      'The colour of links, buttons and mail buttons. Refused unless it reaches 4.5:1 contrast (WCAG 2.1 AA) on every light background of the pages and with white text on it.',
  },
  accentColor,
);
const HEADER_COLOR = declared(
  'PWPUSH_BRAND_HEADER_COLOR',
  {
    default: 'ours, `#24292f`',
    accepts: '`#rrggbb` or `#rgb`',
    meaning: "The page header's background; its text is black or white, whichever contrasts more.",
  },
  (env) => hexColor(env, 'PWPUSH_BRAND_HEADER_COLOR'),
);
const FOOTER_TEXT = declared(
  'PWPUSH_BRAND_FOOTER_TEXT',
  {
    default: 'unset',
    accepts: 'one line of at most 300 characters',
    meaning: 'Plain text at the foot of every page and every email.',
  },
  (env) => line(env, 'PWPUSH_BRAND_FOOTER_TEXT', 300),
);
const IMPRINT_URL = declared(
  'PWPUSH_BRAND_IMPRINT_URL',
  {
    default: 'unset',
    accepts: 'an absolute `https://` or `http://` URL without credentials',
    meaning: 'Linked as "Imprint" from every page\'s and every email\'s footer.',
  },
  (env) => linkUrl(env, 'PWPUSH_BRAND_IMPRINT_URL'),
);
const PRIVACY_URL = declared(
  'PWPUSH_BRAND_PRIVACY_URL',
  {
    default: 'unset',
    accepts: 'an absolute `https://` or `http://` URL without credentials',
    meaning: 'Linked as "Privacy" from every page\'s and every email\'s footer.',
  },
  (env) => linkUrl(env, 'PWPUSH_BRAND_PRIVACY_URL'),
);
const CSS = declared(
  'PWPUSH_BRAND_CSS',
  {
    default: 'unset',
    accepts: 'an absolute path of a `.css` file, UTF-8, at most 256 KiB',
    meaning:
      "A stylesheet read at start-up and loaded after ours on every page, served as `text/css` with `nosniff`. The pages' Content-Security-Policy still applies: it may load images and fonts from this server only (or `data:` images).",
  },
  (env) => brandFile(env, 'PWPUSH_BRAND_CSS', CSS_KINDS, 256 * KIB),
);

/** The brand's settings, the "Brand" area of docs/settings.md (the name is PWPUSH_INSTANCE_NAME, in Email's). */
export const BRAND_SETTINGS = [LOGO, FAVICON, ACCENT_COLOR, HEADER_COLOR, FOOTER_TEXT, IMPRINT_URL, PRIVACY_URL, CSS];

/** The brand of PWPUSH_BRAND_* and the instance's name (checked by the mail settings). */
export function brandSettings(env: Env, name: string): BrandSettings {
  return {
    name,
    accentColor: ACCENT_COLOR.read(env),
    headerColor: HEADER_COLOR.read(env),
    logo: LOGO.read(env),
    favicon: FAVICON.read(env),
    css: CSS.read(env),
    footerText: FOOTER_TEXT.read(env),
    imprintUrl: IMPRINT_URL.read(env),
    privacyUrl: PRIVACY_URL.read(env),
  };
}
