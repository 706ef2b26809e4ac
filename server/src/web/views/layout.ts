/** The page frame: head, site navigation (with the sign-out form), main, footer, the aria-live status line. */
import type { PageBrand } from '../brand.js';
import { html, type Html } from '../html.js';

export interface Viewer {
  /** The signed-in user, or null; `admin`: an administrator of the instance (the nav links the console). */
  user: { email: string; admin?: boolean } | null;
  /** The CSRF token for this visitor's forms. */
  csrf: string;
  signupsEnabled: boolean;
  /** A retrieve-only instance (the public gateway): no link to pages it does not serve (home, sign-in, API docs). */
  retrieveOnly?: boolean;
  /** The brand this page carries (../brand.ts, resolved per request). */
  brand: PageBrand;
}

export interface PageOptions {
  title: string;
  viewer: Viewer;
  body: Html;
  /** Extra scripts from /assets (app.js is always loaded). */
  scripts?: string[];
  /** Hide the navigation (recipient pages: the person opening a secret needs none of it). */
  bare?: boolean;
  /**
   * Another stylesheet of /assets instead of style.css (the API docs page: `docs.css` styles its header and footer
   * only, since the renderer brings its own styles and ours would leak into it).
   */
  stylesheet?: string;
  /** Extra elements of the head (the single sign-on step's refresh). */
  head?: Html;
}

export function csrfField(viewer: Viewer): Html {
  return html`<input type="hidden" name="_csrf" value="${viewer.csrf}">`;
}

function nav(viewer: Viewer): Html {
  if (viewer.retrieveOnly) return html``;
  if (viewer.user) {
    return html`<nav aria-label="Main"><ul>
      <li><a href="/">New push</a></li>
      <li><a href="/pushes/active">My pushes</a></li>
      <li><a href="/requests/active">Requests</a></li>
      <li><a href="/users/token">API token</a></li>
      <li><a href="/users/webhooks">Webhooks</a></li>
      <li><a href="/users/two_factor">Two-factor</a></li>
      ${viewer.user.admin ? html`<li><a href="/admin">Admin</a></li>` : ''}
      <li><form method="post" action="/users/sign_out">${csrfField(viewer)}<button type="submit" class="link">Sign out</button></form></li>
    </ul></nav>`;
  }
  return html`<nav aria-label="Main"><ul>
    <li><a href="/">New push</a></li>
    <li><a href="/users/sign_in">Sign in</a></li>
    ${viewer.signupsEnabled ? html`<li><a href="/users/sign_up">Sign up</a></li>` : ''}
  </ul></nav>`;
}

/** The brand's name (and logo, beside it: the name is the text, so the image is decorative) at the head of every page. */
function brandMark(viewer: Viewer): Html {
  const { brand } = viewer;
  const mark = html`${brand.logoUrl ? html`<img class="logo" src="${brand.logoUrl}" alt="">` : ''}<span>${brand.name}</span>`;
  return viewer.retrieveOnly ? html`<span class="brand">${mark}</span>` : html`<a class="brand" href="/">${mark}</a>`;
}

/** The brand's footer line and links (imprint, privacy), when it has them. */
function brandFooter(brand: PageBrand): Html {
  if (!brand.footerText && brand.footerLinks.length === 0) return html``;
  return html`<p class="brand-footer">${brand.footerText ?? ''}${brand.footerLinks.map(
    (link) => html` <a href="${link.href}" rel="noopener">${link.label}</a>`,
  )}</p>`;
}

export function page(opts: PageOptions): string {
  const scripts = ['app.js', ...(opts.scripts ?? [])];
  const { brand } = opts.viewer;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${opts.title} · ${brand.name}</title>
<link rel="icon" href="${brand.faviconUrl ?? 'data:,'}">
<link rel="stylesheet" href="/assets/${opts.stylesheet ?? 'style.css'}">
${opts.stylesheet ? '' : brand.stylesheets.map((href) => html`<link rel="stylesheet" href="${href}">`)}
${opts.head ?? ''}
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="site"><div class="bar">
  ${brandMark(opts.viewer)}
  ${opts.bare ? '' : nav(opts.viewer)}
</div></header>
<main id="main" tabindex="-1">
${opts.body}
</main>
<footer class="site">${opts.viewer.user ? html`Signed in as ${opts.viewer.user.email} · ` : ''}${opts.viewer.retrieveOnly ? '' : html`<a href="/help/api">API documentation</a>`}${brandFooter(brand)}</footer>
<div id="status" class="visually-hidden" role="status" aria-live="polite"></div>
${scripts.map((s) => html`<script src="/assets/${s}" defer></script>`)}
</body>
</html>
`.value;
}

/** A page that only says something (errors, notices). */
export function messagePage(
  viewer: Viewer,
  title: string,
  message: string,
  kind: 'error' | 'notice' = 'error',
): string {
  return page({
    title,
    viewer,
    body: html`<h1>${title}</h1><p class="${kind}" ${kind === 'error' ? html`role="alert"` : ''}>${message}</p>${viewer.retrieveOnly ? '' : html`<p><a href="/">Back to the start page</a></p>`}`,
  });
}

export function fieldErrors(errors: Record<string, string[]> | undefined, name: string): Html {
  const list = errors?.[name];
  if (!list || list.length === 0) return html``;
  return html`<p class="field-error" id="${name}-error">${list.join('; ')}</p>`;
}

export function describedBy(errors: Record<string, string[]> | undefined, name: string, hint?: string): Html {
  const ids = [hint, errors?.[name]?.length ? `${name}-error` : undefined].filter(Boolean).join(' ');
  return ids ? html` aria-describedby="${ids}"${errors?.[name]?.length ? html` aria-invalid="true"` : ''}` : html``;
}
