/**
 * What every web page sends and checks: a strict Content-Security-Policy (no inline script, nothing from other
 * origins), no referrer, no caching, no indexing; and the same-origin check on form posts (Sec-Fetch-Site, Origin).
 */
import type { Request, Response } from 'express';

/** The policy of every page but the API docs: scripts, styles, images and fetches from this server only. */
const STRICT_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

/**
 * The API docs page only: the docs renderer (Scalar, served from our own /assets) injects its styles at run time and
 * loads fonts as data: URLs, so styles allow 'unsafe-inline' here. Scripts stay 'self' only; no other origin is
 * allowed for anything.
 */
export const DOCS_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "object-src 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "form-action 'self'",
].join('; ');

export function pageHeaders(res: Response, csp: string = STRICT_CSP): void {
  res.setHeader('Content-Security-Policy', csp);
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Robots-Tag', 'noindex, nofollow');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
}

/** The request's own origin (honours `trust proxy` for the protocol). */
function requestOrigin(req: Request): string {
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

/**
 * A form post must come from one of our own pages. Browsers say where a request comes from in Sec-Fetch-Site and
 * Origin; with `Referrer-Policy: no-referrer` Chromium sends `Origin: null` on same-origin form posts, so `null`
 * proves nothing either way and the CSRF token (checked as well, always) decides.
 */
export function comesFromOurPages(req: Request, publicBaseUrl: string | null): boolean {
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = req.get('origin');
  if (origin === undefined || origin === 'null') return true;
  const allowed = new Set([requestOrigin(req)]);
  if (publicBaseUrl) allowed.add(new URL(publicBaseUrl).origin);
  return allowed.has(origin);
}

/** Whether cookies get the Secure flag: the public base URL (or the request) is https. */
export function isHttps(req: Request, publicBaseUrl: string | null): boolean {
  if (publicBaseUrl) return publicBaseUrl.startsWith('https:');
  return req.protocol === 'https';
}

/**
 * A `next` target that stays on this site: a path starting with one `/` (not `//` or `/\`), no scheme, no host.
 * Anything else becomes `fallback`.
 */
export function safeNext(next: unknown, fallback = '/'): string {
  if (typeof next !== 'string' || next.length === 0 || next.length > 2048) return fallback;
  if (!next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\') || /[\u0000-\u001f\\]/.test(next))
    return fallback;
  try {
    const url = new URL(next, 'http://same.invalid');
    if (url.origin !== 'http://same.invalid') return fallback;
    const target = `${url.pathname}${url.search}`;
    // Dot segments normalize away: `/.//evil.example` has the pathname `//evil.example`, a protocol-relative URL
    // that browsers send off-site. Check the result again, not just the input.
    if (!target.startsWith('/') || target.startsWith('//') || target.startsWith('/\\')) return fallback;
    return target;
  } catch {
    return fallback;
  }
}
