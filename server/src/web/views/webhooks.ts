/** The webhooks page of an account: its webhooks, a form to add one (its secret shown once), and each one's deliveries. */
import type { Webhook, WebhookCreated, WebhookDelivery } from '@secret-push/sdk/generated';
import { CHOOSABLE_WEBHOOK_EVENTS } from '@secret-push/rules';
import type { Translator } from '../../i18n/i18n.js';
import { html, htmlMessage, type Html } from '../html.js';
import { csrfField, page, type Viewer } from './layout.js';

/** The events an owner may choose (webhook.test is sent on request only). */
export const PAGE_EVENTS = CHOOSABLE_WEBHOOK_EVENTS;

/**
 * Whose webhooks a page shows: the account's (`/users/webhooks`, by default) or a workspace's
 * (`/workspaces/<id>/webhooks`, with the workspace's sections above them).
 */
export interface HookPageScope {
  /** The path the page and its forms live under. */
  base: string;
  title: string;
  heading: string;
  hint: string;
  none: string;
  /** What goes above the page's cards (a workspace's sections). */
  nav?: Html;
}

function personalScope(viewer: Viewer): HookPageScope {
  const { t } = viewer.i18n;
  return {
    base: '/users/webhooks',
    title: t('webhooks.title'),
    heading: t('webhooks.yours'),
    hint: t('webhooks.hint', { max: 10 }),
    none: t('webhooks.none'),
  };
}

export interface WebhooksState {
  webhooks: readonly Webhook[];
  /** Whose they are (default: the account's). */
  scope?: HookPageScope;
  /** A webhook just added, with its secret: shown this once. */
  fresh?: WebhookCreated;
  error?: string;
  /** Read receipts by email: null when the instance sends no email. */
  receipts: boolean | null;
}

const when = (at: string | null) =>
  at ? html`<time datetime="${at}">${at.slice(0, 16).replace('T', ' ')} UTC</time>` : html`–`;

/** A delivery's status, in the page's language. */
const deliveryStatus = (t: Translator['t'], status: WebhookDelivery['status']): string =>
  t('webhooks.deliveries.statusValue', { status });

function receiptsCard(viewer: Viewer, on: boolean | null) {
  if (on === null) return '';
  const { t } = viewer.i18n;
  return html`<div class="card" aria-labelledby="receipts-title">
  <h2 id="receipts-title">${t('webhooks.receipts.title')}</h2>
  <p>${t(on ? 'webhooks.receipts.on' : 'webhooks.receipts.off')}</p>
  <form method="post" action="/users/webhooks/receipts">
    ${csrfField(viewer)}
    <input type="hidden" name="on" value="${on ? 'false' : 'true'}">
    <button type="submit">${t(on ? 'webhooks.receipts.stop' : 'webhooks.receipts.start')}</button>
  </form>
</div>`;
}

export function webhooksPage(viewer: Viewer, state: WebhooksState): string {
  const { t } = viewer.i18n;
  const scope = state.scope ?? personalScope(viewer);
  const fresh = state.fresh
    ? html`<div class="card" aria-labelledby="fresh-hook-title">
  <h2 id="fresh-hook-title" tabindex="-1">${t('webhooks.fresh.title')}</h2>
  <p class="success">${htmlMessage(viewer.i18n, 'webhooks.fresh.once', { verify: html`<code>verifyWebhook</code>` })}</p>
  <p><code class="share secret" id="webhook-secret">${state.fresh.secret}</code></p>
  <button type="button" data-copy-target="webhook-secret">${t('webhooks.fresh.copy')}</button>
</div>`
    : '';
  const rows = state.webhooks.map(
    (w) => html`<tr>
  <td><a href="${scope.base}/${w.id}">${w.url}</a>${w.description ? html`<br><small>${w.description}</small>` : ''}</td>
  <td>${w.events.map((e) => html`<code>${e}</code> `)}</td>
  <td>${w.enabled ? (w.failing_since ? html`${t('webhooks.state.failingSince')} ${when(w.failing_since)}` : t('webhooks.state.on')) : html`${t('webhooks.state.disabled')} ${when(w.disabled_at)}`}</td>
  <td><form method="post" action="${scope.base}/${w.id}/delete">
    ${csrfField(viewer)}
    <button type="submit" class="danger">${t('webhooks.delete')}<span class="visually-hidden"> (${w.url})</span></button>
  </form></td>
</tr>`,
  );
  const list =
    state.webhooks.length > 0
      ? html`<table class="keys">
  <thead><tr><th>${t('webhooks.url')}</th><th>${t('webhooks.events')}</th><th>${t('webhooks.state')}</th><th></th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
      : html`<p>${scope.none}</p>`;
  return page({
    title: scope.title,
    viewer,
    body: html`<h1>${scope.title}</h1>
${scope.nav ?? ''}
${fresh}
<div class="card" aria-labelledby="hooks-title">
  <h2 id="hooks-title">${scope.heading}</h2>
  <p class="hint">${scope.hint}</p>
  ${list}
  <h3>${t('webhooks.add.title')}</h3>
  ${state.error ? html`<p class="error" role="alert">${state.error}</p>` : ''}
  <form method="post" action="${scope.base}">
    ${csrfField(viewer)}
    <label for="hook-url">${t('webhooks.url')}</label>
    <input id="hook-url" name="url" type="url" required maxlength="2048" placeholder="https://hooks.example.org/secret-push">
    <fieldset><legend>${t('webhooks.events')}</legend>
    ${PAGE_EVENTS.map((e) => html`<label><input type="checkbox" name="events" value="${e}" checked> <code>${e}</code></label> `)}
    </fieldset>
    <label for="hook-description">${t('webhooks.description')}</label>
    <input id="hook-description" name="description" maxlength="200">
    <button type="submit">${t('webhooks.add.submit')}</button>
  </form>
</div>
${receiptsCard(viewer, state.receipts)}`,
  });
}

export function deliveriesPage(
  viewer: Viewer,
  hook: Webhook,
  deliveries: readonly WebhookDelivery[],
  scope: HookPageScope = personalScope(viewer),
): string {
  const { t } = viewer.i18n;
  const rows = deliveries.map(
    (d) => html`<tr>
  <td><code>${d.id}</code></td>
  <td><code>${d.event}</code></td>
  <td>${deliveryStatus(t, d.status)}</td>
  <td>${String(d.attempts)}</td>
  <td>${d.last_status_code === null ? '–' : String(d.last_status_code)}${d.last_error ? html` <small>${d.last_error}</small>` : ''}</td>
  <td>${when(d.next_attempt_at)}</td>
  <td>${when(d.delivered_at)}</td>
  <td><form method="post" action="${scope.base}/${hook.id}/deliveries/${d.id}/retry">
    ${csrfField(viewer)}
    <button type="submit">${t('webhooks.deliveries.retry')}</button>
  </form></td>
</tr>`,
  );
  return page({
    title: t('webhooks.deliveries.pageTitle'),
    viewer,
    body: html`<h1>${t('webhooks.deliveries.title', { url: hook.url })}</h1>
${scope.nav ?? ''}
<p><a href="${scope.base}">${t('webhooks.deliveries.all')}</a></p>
<form method="post" action="${scope.base}/${hook.id}/test">
  ${csrfField(viewer)}
  <button type="submit">${t('webhooks.deliveries.test')}</button>
</form>
${
  deliveries.length > 0
    ? html`<table class="keys">
  <thead><tr><th>webhook-id</th><th>${t('webhooks.deliveries.event')}</th><th>${t('webhooks.deliveries.status')}</th><th>${t('webhooks.deliveries.tries')}</th><th>${t('webhooks.deliveries.lastAnswer')}</th><th>${t('webhooks.deliveries.nextTry')}</th><th>${t('webhooks.deliveries.delivered')}</th><th></th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
    : html`<p>${t('webhooks.deliveries.none')}</p>`
}`,
  });
}
