/**
 * A workspace's brand page (issue 41, the brand of issue 42): its colours, texts, links and logo in a form (the
 * rules' refusals beside each field), a link to the preview of a recipient's page in it, and the reset to the
 * instance's look; and the preview itself, a page in the workspace's brand as its recipients see it.
 */
import type { Workspace, WorkspaceBrand } from '@secret-push/sdk/generated';
import type { MessageKey } from '../../i18n/i18n.js';
import { html } from '../html.js';
import { csrfField, describedBy, fieldErrors, page, type Viewer } from './layout.js';
import { sectionsNav } from './workspace-manage.js';

/** The brand's text fields, as the form names them (the contract's names). */
export const BRAND_FIELDS = [
  'name',
  'accent_color',
  'header_color',
  'footer_text',
  'imprint_url',
  'privacy_url',
] as const;
type BrandField = (typeof BRAND_FIELDS)[number];

export interface BrandPageState {
  workspace: Workspace;
  brand: WorkspaceBrand;
  /** What was sent, after a refusal. */
  values?: Partial<Record<BrandField, string>>;
  fields?: Record<string, string[]>;
  error?: string;
  notice?: string;
}

/** Each field's label in the catalogues. */
const LABELS: Record<BrandField, MessageKey> = {
  name: 'workspaces.brand.field.name',
  accent_color: 'workspaces.brand.field.accentColor',
  header_color: 'workspaces.brand.field.headerColor',
  footer_text: 'workspaces.brand.field.footerText',
  imprint_url: 'workspaces.brand.field.imprintUrl',
  privacy_url: 'workspaces.brand.field.privacyUrl',
};

const INPUTS: Record<BrandField, { type: string; max: number; hint?: boolean }> = {
  name: { type: 'text', max: 100 },
  accent_color: { type: 'text', max: 7, hint: true },
  header_color: { type: 'text', max: 7, hint: true },
  footer_text: { type: 'text', max: 300 },
  imprint_url: { type: 'url', max: 2048 },
  privacy_url: { type: 'url', max: 2048 },
};

export function brandPage(viewer: Viewer, state: BrandPageState): string {
  const { t } = viewer.i18n;
  const w = state.workspace;
  const b = state.brand;
  const stored: Record<BrandField, string | null> = {
    name: b.name,
    accent_color: b.accent_color,
    header_color: b.header_color,
    footer_text: b.footer_text,
    imprint_url: b.imprint_url,
    privacy_url: b.privacy_url,
  };
  const fields = state.fields;
  const input = (f: BrandField) => {
    const spec = INPUTS[f];
    const hint = spec.hint ? `${f}-hint` : undefined;
    return html`<label for="${f}">${t(LABELS[f])}</label>
  ${hint ? html`<p class="hint" id="${hint}">${t('workspaces.brand.colourHint')}</p>` : ''}
  <input id="${f}" name="${f}" type="${spec.type}" maxlength="${spec.max}" value="${state.values?.[f] ?? stored[f] ?? ''}"${describedBy(fields, f, hint)}>
  ${fieldErrors(fields, f)}`;
  };
  const title = t('workspaces.brand.title', { name: w.name });
  return page({
    title,
    viewer,
    body: html`<h1>${title}</h1>
${sectionsNav(viewer, w, 'brand')}
${state.error ? html`<p class="error" role="alert">${state.error}</p>` : ''}
${state.notice ? html`<p class="success" role="status">${state.notice}</p>` : ''}
<p class="hint">${t('workspaces.brand.hint')}</p>
<p><a href="/workspaces/${w.id}/brand/preview">${t('workspaces.brand.preview')}</a></p>
<form method="post" action="/workspaces/${w.id}/brand" enctype="multipart/form-data" class="card" novalidate>
  ${csrfField(viewer)}
  ${BRAND_FIELDS.map(input)}
  <label for="logo">${t('workspaces.brand.field.logo')}</label>
  <p class="hint" id="logo-hint">${t('workspaces.brand.logoHint')}</p>
  ${b.logo ? html`<p><img class="logo" src="${b.logo.url}" alt="${t('workspaces.brand.currentLogo')}"></p>` : ''}
  <input id="logo" name="logo" type="file" accept="image/png,image/jpeg,image/webp,image/svg+xml"${describedBy(fields, 'logo', 'logo-hint')}>
  ${fieldErrors(fields, 'logo')}
  ${b.logo ? html`<label class="check"><input type="checkbox" name="remove_logo" value="on"> ${t('workspaces.brand.removeLogo')}</label>` : ''}
  <button type="submit">${t('workspaces.brand.submit')}</button>
</form>
${
  b.configured
    ? html`<form method="post" action="/workspaces/${w.id}/brand/reset" class="card">
  ${csrfField(viewer)}
  <p>${t('workspaces.brand.resetHint')}</p>
  <button type="submit" class="danger">${t('workspaces.brand.reset')}</button>
</form>`
    : ''
}`,
  });
}

/** A page in the workspace's brand (the caller sets the viewer's brand), as the recipients of its pushes see one. */
export function brandPreviewPage(viewer: Viewer, w: Workspace): string {
  const { t } = viewer.i18n;
  return page({
    title: t('workspaces.brand.previewTitle'),
    viewer,
    bare: true,
    body: html`<h1>${t('workspaces.brand.previewTitle')}</h1>
<p>${t('workspaces.brand.previewText')}</p>
<div class="card">
  <p>${t('workspaces.brand.previewSample')}</p>
  <p><a href="/workspaces/${w.id}/brand">${t('workspaces.brand.back')}</a></p>
</div>`,
  });
}
