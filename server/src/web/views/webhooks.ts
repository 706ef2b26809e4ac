/** The webhooks page of an account: its webhooks, a form to add one (its secret shown once), and each one's deliveries. */
import type { Webhook, WebhookCreated, WebhookDelivery } from '@secret-push/sdk/generated';
import { CHOOSABLE_WEBHOOK_EVENTS } from '@secret-push/rules';
import { html } from '../html.js';
import { csrfField, page, type Viewer } from './layout.js';

/** The events an owner may choose (webhook.test is sent on request only). */
export const PAGE_EVENTS = CHOOSABLE_WEBHOOK_EVENTS;

export interface WebhooksState {
  webhooks: readonly Webhook[];
  /** A webhook just added, with its secret: shown this once. */
  fresh?: WebhookCreated;
  error?: string;
  /** Read receipts by email: null when the instance sends no email. */
  receipts: boolean | null;
}

const when = (at: string | null) =>
  at ? html`<time datetime="${at}">${at.slice(0, 16).replace('T', ' ')} UTC</time>` : html`–`;

function receiptsCard(viewer: Viewer, on: boolean | null) {
  if (on === null) return '';
  return html`<div class="card" aria-labelledby="receipts-title">
  <h2 id="receipts-title">Read receipts by email</h2>
  <p>${on ? 'You are emailed when a push of yours is first viewed, and when one expires unviewed.' : 'You are not emailed when your pushes are viewed.'} A push can choose otherwise when it is made.</p>
  <form method="post" action="/users/webhooks/receipts">
    ${csrfField(viewer)}
    <input type="hidden" name="on" value="${on ? 'false' : 'true'}">
    <button type="submit">${on ? 'Stop read receipts' : 'Email me read receipts'}</button>
  </form>
</div>`;
}

export function webhooksPage(viewer: Viewer, state: WebhooksState): string {
  const fresh = state.fresh
    ? html`<div class="card" aria-labelledby="fresh-hook-title">
  <h2 id="fresh-hook-title" tabindex="-1">Your new webhook’s signing secret</h2>
  <p class="success">Copy it now: it is shown only this once. Verify each delivery with it (any Standard Webhooks library, or the SDK’s <code>verifyWebhook</code>).</p>
  <p><code class="share secret" id="webhook-secret">${state.fresh.secret}</code></p>
  <button type="button" data-copy-target="webhook-secret">Copy the secret</button>
</div>`
    : '';
  const rows = state.webhooks.map(
    (w) => html`<tr>
  <td><a href="/users/webhooks/${w.id}">${w.url}</a>${w.description ? html`<br><small>${w.description}</small>` : ''}</td>
  <td>${w.events.map((e) => html`<code>${e}</code> `)}</td>
  <td>${w.enabled ? (w.failing_since ? html`failing since ${when(w.failing_since)}` : 'on') : html`disabled ${when(w.disabled_at)}`}</td>
  <td><form method="post" action="/users/webhooks/${w.id}/delete">
    ${csrfField(viewer)}
    <button type="submit" class="danger">Delete</button>
  </form></td>
</tr>`,
  );
  const list =
    state.webhooks.length > 0
      ? html`<table class="keys">
  <thead><tr><th>URL</th><th>Events</th><th>State</th><th></th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
      : html`<p>You have no webhooks.</p>`;
  return page({
    title: 'Webhooks',
    viewer,
    body: html`<h1>Webhooks</h1>
${fresh}
<div class="card" aria-labelledby="hooks-title">
  <h2 id="hooks-title">Your webhooks</h2>
  <p class="hint">Events of your pushes are POSTed to these URLs, signed (Standard Webhooks). They never carry a push’s link, secret, passphrase or note. At most 10.</p>
  ${list}
  <h3>Add a webhook</h3>
  ${state.error ? html`<p class="error" role="alert">${state.error}</p>` : ''}
  <form method="post" action="/users/webhooks">
    ${csrfField(viewer)}
    <label for="hook-url">URL</label>
    <input id="hook-url" name="url" type="url" required maxlength="2048" placeholder="https://hooks.example.org/secret-push">
    <fieldset><legend>Events</legend>
    ${PAGE_EVENTS.map((e) => html`<label><input type="checkbox" name="events" value="${e}" checked> <code>${e}</code></label> `)}
    </fieldset>
    <label for="hook-description">Description</label>
    <input id="hook-description" name="description" maxlength="200">
    <button type="submit">Add the webhook</button>
  </form>
</div>
${receiptsCard(viewer, state.receipts)}`,
  });
}

export function deliveriesPage(viewer: Viewer, hook: Webhook, deliveries: readonly WebhookDelivery[]): string {
  const rows = deliveries.map(
    (d) => html`<tr>
  <td><code>${d.id}</code></td>
  <td><code>${d.event}</code></td>
  <td>${d.status}</td>
  <td>${String(d.attempts)}</td>
  <td>${d.last_status_code === null ? '–' : String(d.last_status_code)}${d.last_error ? html` <small>${d.last_error}</small>` : ''}</td>
  <td>${when(d.next_attempt_at)}</td>
  <td>${when(d.delivered_at)}</td>
  <td><form method="post" action="/users/webhooks/${hook.id}/deliveries/${d.id}/retry">
    ${csrfField(viewer)}
    <button type="submit">Send again</button>
  </form></td>
</tr>`,
  );
  return page({
    title: 'Webhook deliveries',
    viewer,
    body: html`<h1>Deliveries to ${hook.url}</h1>
<p><a href="/users/webhooks">All webhooks</a></p>
<form method="post" action="/users/webhooks/${hook.id}/test">
  ${csrfField(viewer)}
  <button type="submit">Send a test event</button>
</form>
${
  deliveries.length > 0
    ? html`<table class="keys">
  <thead><tr><th>webhook-id</th><th>Event</th><th>Status</th><th>Tries</th><th>Last answer</th><th>Next try</th><th>Delivered</th><th></th></tr></thead>
  <tbody>${rows}</tbody>
</table>`
    : html`<p>No deliveries yet.</p>`
}`,
  });
}
