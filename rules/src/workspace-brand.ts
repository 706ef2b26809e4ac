/**
 * A brand's rules (issue 42), one set for the instance's (server/src/config/brand-settings.ts, at start-up) and a
 * workspace's (`updateWorkspaceBrand`: the server and the stateful mock): colours and their contrast (WCAG 2.1), the
 * footer's line and links, and what a logo may be, judged by its bytes. Browser-safe: bytes are `Uint8Array`s.
 */
import type { UpdateWorkspaceBrandRequest, WorkspaceBrandLogo } from './generated/types.gen.js';
import { validationFailed, type FieldErrors } from './errors.js';

/**
 * The light backgrounds our stylesheet puts links and accent-coloured text on (page, card, notice, error, success,
 * the secret's box); an accent colour must reach 4.5:1 (WCAG 2.1 AA, normal text) on each, and white text on it.
 */
const LIGHT_BACKGROUNDS = ['#ffffff', '#f6f8fa', '#ddf4ff', '#ffebe9', '#dafbe1', '#fff8c5'];
export const AA_CONTRAST = 4.5;

function channel(hex: string, i: number): number {
  const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
  return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
}

/** WCAG 2.1 relative luminance of `#rrggbb`. */
function luminance(hex: string): number {
  return 0.2126 * channel(hex, 0) + 0.7152 * channel(hex, 1) + 0.0722 * channel(hex, 2);
}

/** WCAG 2.1 contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

/** Black or white text on `background`, whichever contrasts more (at least 4.58:1 for any colour). */
export function textOn(background: string): '#000000' | '#ffffff' {
  return contrastRatio(background, '#000000') >= contrastRatio(background, '#ffffff') ? '#000000' : '#ffffff';
}

/** `#rgb` or `#rrggbb` as `#rrggbb` lower case, or null for anything else. */
export function normalHex(value: string): string | null {
  const short = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/i.exec(value);
  const hex = short ? `#${short[1]}${short[1]}${short[2]}${short[2]}${short[3]}${short[3]}` : value;
  return /^#[0-9a-f]{6}$/i.test(hex) ? hex.toLowerCase() : null;
}

/**
 * The worst contrast of an accent colour (links in it on each light background, white text on it), and whether it
 * reaches WCAG 2.1 AA (4.5:1).
 */
export function accentContrast(color: string): { worst: number; ok: boolean } {
  const worst = Math.min(...LIGHT_BACKGROUNDS.map((bg) => contrastRatio(color, bg)));
  return { worst, ok: worst >= AA_CONTRAST };
}

/** Largest logo of a workspace, decoded (its base64 is bounded by the contract's maxLength before it is read). */
export const WORKSPACE_LOGO_MAX_BYTES = 256 * 1024;

type LogoType = WorkspaceBrandLogo['content_type'];
const startsWith = (body: Uint8Array, bytes: number[]) => bytes.every((b, i) => body[i] === b);
const ascii = (body: Uint8Array, from: number, to: number) => String.fromCharCode(...body.subarray(from, to));
const textOf = (body: Uint8Array) => new TextDecoder('utf-8', { fatal: false }).decode(body);

/** The kind of a logo by its first bytes (never its name): PNG, JPEG, WebP or SVG, else null. */
export function sniffLogo(body: Uint8Array): { type: LogoType; ext: string } | null {
  if (startsWith(body, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return { type: 'image/png', ext: 'png' };
  if (startsWith(body, [0xff, 0xd8, 0xff])) return { type: 'image/jpeg', ext: 'jpg' };
  if (ascii(body, 0, 4) === 'RIFF' && ascii(body, 8, 12) === 'WEBP') return { type: 'image/webp', ext: 'webp' };
  if (/^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<svg[\s>]/i.test(textOf(body.subarray(0, 4096))))
    return { type: 'image/svg+xml', ext: 'svg' };
  return null;
}

/**
 * What in an SVG could run script or reach out, were it ever opened as a document: refused outright, though every
 * logo is served with a policy that runs nothing (`sandbox`) and shown as an `<img>`, which never runs script.
 */
const SVG_DANGERS: [RegExp, string][] = [
  [/<\s*script/i, 'a <script> element'],
  [/\son[a-z]+\s*=/i, 'an event handler attribute (on…=)'],
  [/javascript\s*:/i, 'a javascript: link'],
  [/<\s*foreignObject/i, 'a <foreignObject> element'],
  [/<!\s*(ENTITY|DOCTYPE)/i, 'an entity or doctype declaration'],
  [/<\s*(iframe|embed|object)/i, 'an embedded document'],
];

/** Why an SVG logo is refused, or null. */
export function svgProblem(body: Uint8Array): string | null {
  const text = textOf(body);
  for (const [pattern, what] of SVG_DANGERS) if (pattern.test(text)) return `an SVG logo may not hold ${what}`;
  return null;
}

/** One line of text of at most `max` characters, or why not. */
function lineProblem(value: string, max: number): string | null {
  if (value.length > max) return `must be at most ${max} characters`;
  if (/[\u0000-\u001f\u007f\u2028\u2029]/.test(value)) return 'must be one line of plain text';
  if (value.trim() === '') return 'must not be only spaces (null unsets it)';
  return null;
}

/** An absolute https URL without credentials (a workspace's links: https only), normalised, or why not. */
export function httpsLink(value: string): { href: string } | { problem: string } {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {
    /* refused below */
  }
  if (!url || url.protocol !== 'https:' || url.username || url.password || value.length > 2048)
    return { problem: 'must be an absolute https:// URL without credentials, at most 2048 characters' };
  return { href: url.href };
}

/** A workspace's brand as checked (the logo's bytes decoded and judged). */
export interface CheckedBrand {
  name: string | null;
  accentColor: string | null;
  headerColor: string | null;
  footerText: string | null;
  imprintUrl: string | null;
  privacyUrl: string | null;
  /** undefined: keep the stored logo; null: remove it. */
  logo: { body: Uint8Array; type: LogoType; ext: string } | null | undefined;
}

type BrandInput = UpdateWorkspaceBrandRequest['brand'];

/**
 * Checks `updateWorkspaceBrand`'s body by the instance brand's rules (a workspace's links: https only), `decode`
 * turning the logo's base64 into bytes (null when it is not base64). Every field's problem at once, as a 422
 * `validation_failed`; nothing is stored on a refusal.
 */
export function checkWorkspaceBrand(input: BrandInput, decode: (b64: string) => Uint8Array | null): CheckedBrand {
  const errors: FieldErrors = {};
  const text = (field: 'name' | 'footer_text', max: number): string | null => {
    const value = input[field] ?? null;
    if (value === null) return null;
    const problem = lineProblem(value, max);
    if (problem) errors[field] = [problem];
    return value.trim();
  };
  const colour = (field: 'accent_color' | 'header_color'): string | null => {
    const value = input[field] ?? null;
    if (value === null) return null;
    const hex = normalHex(value);
    if (hex === null) errors[field] = ['must be a hex colour, #rrggbb or #rgb'];
    else if (field === 'accent_color') {
      const { worst, ok } = accentContrast(hex);
      if (!ok)
        errors[field] = [
          `${hex} reaches only ${worst.toFixed(2)}:1 on the pages' backgrounds and under white text; WCAG 2.1 AA needs ${AA_CONTRAST}:1 (choose a darker colour)`,
        ];
    }
    return hex;
  };
  const link = (field: 'imprint_url' | 'privacy_url'): string | null => {
    const value = input[field] ?? null;
    if (value === null) return null;
    const checked = httpsLink(value);
    if ('problem' in checked) {
      errors[field] = [checked.problem];
      return null;
    }
    return checked.href;
  };
  const checked: CheckedBrand = {
    name: text('name', 100),
    accentColor: colour('accent_color'),
    headerColor: colour('header_color'),
    footerText: text('footer_text', 300),
    imprintUrl: link('imprint_url'),
    privacyUrl: link('privacy_url'),
    logo: input.logo === undefined ? undefined : input.logo === null ? null : checkLogo(input.logo, decode, errors),
  };
  if (Object.keys(errors).length > 0) throw validationFailed(errors);
  return checked;
}

function checkLogo(b64: string, decode: (b64: string) => Uint8Array | null, errors: FieldErrors): CheckedBrand['logo'] {
  // The contract bounds the base64 (349,528 characters); this is the decoded size's own check.
  const body = /^[A-Za-z0-9+/]*={0,2}$/.test(b64) && b64.length % 4 === 0 ? decode(b64) : null;
  if (body === null) errors.logo = ['must be the logo file in base64 (standard alphabet, padded)'];
  else if (body.length === 0) errors.logo = ['must not be empty (null removes the logo)'];
  else if (body.length > WORKSPACE_LOGO_MAX_BYTES) errors.logo = ['must be at most 256 KiB'];
  else {
    const kind = sniffLogo(body);
    if (kind === null) errors.logo = ['must be a PNG, JPEG, WebP or SVG image (judged by its content)'];
    else {
      const problem = kind.type === 'image/svg+xml' ? svgProblem(body) : null;
      if (problem) errors.logo = [problem];
      else return { body, ...kind };
    }
  }
  return undefined;
}
