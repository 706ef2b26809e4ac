/** The page frame: head, site navigation (with the sign-out form), main, footer, the aria-live status line. */
import type { PageBrand } from '../brand.js';
import { LOCALES } from '../../i18n/locales.js';
import type { Translator } from '../../i18n/i18n.js';
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
  /** The visitor's language (server/src/i18n): every text of the page comes from its catalogue. */
  i18n: Translator;
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
  /** Key prefixes of the catalogue the page's scripts format themselves (`js.app.` always goes). */
  messages?: string[];
}

export function csrfField(viewer: Viewer): Html {
  return html`<input type="hidden" name="_csrf" value="${viewer.csrf}">`;
}

function nav(viewer: Viewer): Html {
  if (viewer.retrieveOnly) return html``;
  const { t } = viewer.i18n;
  if (viewer.user) {
    return html`<nav aria-label="${t('layout.nav.label')}"><ul>
      <li><a href="/">${t('layout.nav.newPush')}</a></li>
      <li><a href="/pushes/active">${t('layout.nav.myPushes')}</a></li>
      <li><a href="/requests/active">${t('layout.nav.requests')}</a></li>
      <li><a href="/workspaces">${t('layout.nav.workspaces')}</a></li>
      <li><a href="/users/token">${t('layout.nav.apiToken')}</a></li>
      <li><a href="/users/webhooks">${t('layout.nav.webhooks')}</a></li>
      <li><a href="/users/two_factor">${t('layout.nav.twoFactor')}</a></li>
      ${viewer.user.admin ? html`<li><a href="/admin">Admin</a></li>` : ''}
      <li><form method="post" action="/users/sign_out">${csrfField(viewer)}<button type="submit" class="link">${t('layout.nav.signOut')}</button></form></li>
    </ul></nav>`;
  }
  return html`<nav aria-label="${t('layout.nav.label')}"><ul>
    <li><a href="/">${t('layout.nav.newPush')}</a></li>
    <li><a href="/users/sign_in">${t('layout.nav.signIn')}</a></li>
    ${viewer.signupsEnabled ? html`<li><a href="/users/sign_up">${t('layout.nav.signUp')}</a></li>` : ''}
  </ul></nav>`;
}

/** The brand's name (and logo, beside it: the name is the text, so the image is decorative) at the head of every page. */
function brandMark(viewer: Viewer): Html {
  const { brand } = viewer;
  const mark = html`${brand.logoUrl ? html`<img class="logo" src="${brand.logoUrl}" alt="">` : ''}<span>${brand.name}</span>`;
  return viewer.retrieveOnly ? html`<span class="brand">${mark}</span>` : html`<a class="brand" href="/">${mark}</a>`;
}

/** The brand's footer line and links (imprint, privacy), when it has them. */
function brandFooter(brand: PageBrand, { t }: Translator): Html {
  // A workspace's brand keeps the instance's name in sight: the recipient still sees which service carries it.
  const through = brand.sentThrough
    ? html`<p class="sent-through">${t('layout.footer.sentThrough', { instance: brand.sentThrough })}</p>`
    : '';
  if (!brand.footerText && brand.footerLinks.length === 0) return html`${through}`;
  return html`<p class="brand-footer">${brand.footerText ?? ''}${brand.footerLinks.map(
    (link) => html` <a href="${link.href}" rel="noopener">${t('layout.footer.link', { kind: link.kind })}</a>`,
  )}</p>${through}`;
}

/** The language menu: a plain GET form (no script), which reloads the page with `?locale=` (kept in a cookie). */
function languageMenu(viewer: Viewer): Html {
  const { t, locale } = viewer.i18n;
  return html`<form method="get" class="language" id="language-form">
  <label for="language-select">${t('layout.language.label')}</label>
  <select id="language-select" name="locale">${LOCALES.map(
    (l) =>
      html`<option value="${l.code}" lang="${l.code}" dir="${l.dir}"${l.code === locale ? html` selected` : ''}>${l.name}</option>`,
  )}</select>
  <button type="submit" class="secondary">${t('layout.language.submit')}</button>
</form>`;
}

/**
 * The catalogue's texts a page's scripts format (window.SecretPush.t in app.js): JSON in a data attribute (escaped
 * as any attribute), so the page keeps no inline script at all.
 */
function scriptMessages(viewer: Viewer, prefixes: string[]): Html {
  const json = JSON.stringify({ locale: viewer.i18n.locale, messages: viewer.i18n.raw(['js.app.', ...prefixes]) });
  return html`<div id="sp-messages" hidden data-messages="${json}"></div>`;
}

export function page(opts: PageOptions): string {
  const scripts = ['vendor/intl-messageformat.js', 'app.js', ...(opts.scripts ?? [])];
  const { t, locale, dir } = opts.viewer.i18n;
  const { brand } = opts.viewer;
  return html`<!doctype html>
<html lang="${locale}" dir="${dir}">
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
<a class="skip" href="#main">${t('layout.skipToContent')}</a>
<header class="site"><div class="bar">
  ${brandMark(opts.viewer)}
  ${opts.bare ? '' : nav(opts.viewer)}
</div></header>
<main id="main" tabindex="-1">
${opts.body}
</main>
<footer class="site">${opts.viewer.user ? html`${t('layout.footer.signedInAs', { email: opts.viewer.user.email })} · ` : ''}${opts.viewer.retrieveOnly ? '' : html`<a href="/help/api">${t('layout.footer.apiDocs')}</a>`}${brandFooter(brand, opts.viewer.i18n)}
${languageMenu(opts.viewer)}</footer>
<div id="status" class="visually-hidden" role="status" aria-live="polite"></div>
${scriptMessages(opts.viewer, opts.messages ?? [])}
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
    body: html`<h1>${title}</h1><p class="${kind}" ${kind === 'error' ? html`role="alert"` : ''}>${message}</p>${viewer.retrieveOnly ? '' : html`<p><a href="/">${viewer.i18n.t('layout.backToStart')}</a></p>`}`,
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
