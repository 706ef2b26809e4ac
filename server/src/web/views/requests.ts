/** The request pages (issue 24): "Request a secret", the requester's list and request, and the responder's page. */
import type { RequestOwner, RequestView } from '@secret-push/sdk/generated';
import type { Translator } from '../../i18n/i18n.js';
import { html, type Html } from '../html.js';
import { csrfField, describedBy, fieldErrors, page, type Viewer } from './layout.js';

/** A request's state, in the page's language. */
const stateLabel = (t: Translator['t'], state: RequestOwner['state']): string => t('requests.state', { state });

export interface NewRequestState {
  request?: string;
  error?: string;
  fields?: Record<string, string[]>;
}

const SCRIPTS = ['vendor/secret-push-e2e.js', 'requests.js'];

export function newRequestPage(viewer: Viewer, state: NewRequestState = {}): string {
  const e = state.fields;
  const { t } = viewer.i18n;
  return page({
    title: t('requests.new.title'),
    viewer,
    scripts: SCRIPTS,
    messages: ['js.requests.', 'js.apiError.'],
    body: html`<h1>${t('requests.new.title')}</h1>
<p>${t('requests.new.intro')}</p>
${state.error ? html`<p class="error" role="alert">${state.error}</p>` : ''}
<form method="post" action="/requests" id="request-form">
  ${csrfField(viewer)}
  <label for="request">${t('requests.new.request')}</label>
  <textarea id="request" name="request" rows="4" maxlength="10000" required${describedBy(e, 'request')}>${state.request ?? ''}</textarea>
  ${fieldErrors(e, 'request')}
  <label for="expire_after_days">${t('requests.new.days')}</label>
  <input id="expire_after_days" name="expire_after_days" type="number" min="1" max="90" value="7"${describedBy(e, 'expire_after_days')}>
  ${fieldErrors(e, 'expire_after_days')}
  <label for="expire_after_views">${t('requests.new.views')}</label>
  <input id="expire_after_views" name="expire_after_views" type="number" min="1" max="100" value="1"${describedBy(e, 'expire_after_views')}>
  ${fieldErrors(e, 'expire_after_views')}
  <label><input type="checkbox" name="seal" id="seal" value="1"> ${t('requests.new.seal')}</label>
  <input type="hidden" name="public_key" value="">
  ${fieldErrors(e, 'public_key')}
  <button type="submit">${t('requests.new.submit')}</button>
</form>`,
  });
}

/** What stands for an empty ask: files only, while pending; erased, once answered, expired or revoked. */
const emptyAsk = (t: Translator['t'], r: RequestOwner): string =>
  t(r.state === 'pending' ? 'requests.ask.file' : 'requests.ask.erased');

function requestRow(t: Translator['t'], r: RequestOwner): Html {
  const ask = r.request.length > 80 ? `${r.request.slice(0, 80)}…` : r.request;
  return html`<tr><td><a href="/requests/${r.url_token}">${ask || (r.name !== '' ? r.name : emptyAsk(t, r))}</a></td><td data-state="${r.state}">${stateLabel(t, r.state)}</td><td>${r.sealing ? t('requests.list.sealed') : ''}</td><td><time datetime="${r.created_at}">${r.created_at.slice(0, 16).replace('T', ' ')}</time></td></tr>`;
}

export function requestListPage(
  viewer: Viewer,
  which: 'active' | 'expired',
  result: { items: RequestOwner[]; total: number; page: number },
): string {
  const { t } = viewer.i18n;
  const title = t(which === 'active' ? 'requests.list.mine' : 'requests.list.closed');
  return page({
    title,
    viewer,
    body: html`<h1>${title}</h1>
<p><a href="/requests/new">${t('requests.new.title')}</a> · ${which === 'active' ? html`<a href="/requests/expired">${t('requests.list.closed')}</a>` : html`<a href="/requests/active">${t('requests.list.open')}</a>`}</p>
${
  result.items.length === 0
    ? html`<p>${t('requests.list.none')}</p>`
    : html`<table><thead><tr><th>${t('requests.list.asked')}</th><th>${t('requests.list.state')}</th><th></th><th>${t('requests.list.created')}</th></tr></thead><tbody>${result.items.map((r) => requestRow(t, r))}</tbody></table>`
}`,
  });
}

function answerLink(t: Translator['t'], r: RequestOwner): Html {
  if (!r.answer) return html``;
  if (!r.answer.sealed_key)
    return html`<p><a id="open-answer" href="${r.answer.html_url}">${t('requests.owner.open')}</a></p>`;
  return html`<p id="sealed-answer">${t('requests.owner.sealed')}</p>
<p><a id="open-answer" hidden href="#" data-token="${r.url_token}" data-sealed-key="${r.answer.sealed_key}" data-answer-url="${r.answer.html_url}" data-public-x="${r.sealing?.public_key.x ?? ''}">${t('requests.owner.open')}</a></p>
<p id="open-answer-error" class="error" hidden></p>`;
}

export function requestOwnerPage(viewer: Viewer, r: RequestOwner): string {
  const { t } = viewer.i18n;
  return page({
    title: t('requests.owner.title'),
    viewer,
    scripts: SCRIPTS,
    messages: ['js.requests.', 'js.apiError.'],
    body: html`<h1>${t('requests.owner.title')}</h1>
${r.request !== '' ? html`<p class="ask">${r.request}</p>` : html`<p class="ask" data-empty>${emptyAsk(t, r)}</p>`}
${r.state !== 'pending' ? html`<p>${t('requests.owner.erased')}</p>` : ''}
<p>${t('requests.owner.state')} <strong id="request-state" data-state="${r.state}">${stateLabel(t, r.state)}</strong>${r.sealing ? ` · ${t('requests.owner.willSeal')}` : ''}</p>
${
  r.state === 'pending'
    ? html`<p>${t('requests.owner.sendLink')}</p>
<p><input id="request-link" readonly value="${r.html_url}" aria-label="${t('requests.owner.linkLabel')}"></p>
<form method="post" action="/requests/${r.url_token}/revoke">${csrfField(viewer)}<button type="submit">${t('requests.owner.revoke')}</button></form>`
    : ''
}
${answerLink(t, r)}
<p><a href="/requests/active">${t('requests.list.mine')}</a></p>`,
  });
}

export interface AnswerState {
  error?: string;
  fields?: Record<string, string[]>;
}

export function answerPage(viewer: Viewer, r: RequestView, state: AnswerState = {}): string {
  const { t } = viewer.i18n;
  if (!r.open) {
    return page({
      title: t('answer.closed.pageTitle'),
      viewer,
      bare: true,
      body: html`<h1>${t('answer.closed.title')}</h1><p>${t('answer.closed.text')}</p>`,
    });
  }
  const sealing = r.sealing ? JSON.stringify(r.sealing) : '';
  // A sealed answer is sealed by requests.js and sent to the API: its fields have no name, so a form sent without the
  // script (no JavaScript, a script that failed) carries none of them, and its button is off until the script is on.
  const named = (name: string): Html => (r.sealing ? html`` : html` name="${name}"`);
  return page({
    title: t('answer.pageTitle'),
    viewer,
    bare: true,
    scripts: SCRIPTS,
    messages: ['js.requests.', 'js.apiError.'],
    body: html`<h1>${t('answer.title')}</h1>
<blockquote class="ask" id="ask">${r.request}</blockquote>
${r.files.length > 0 ? html`<p>${t('answer.attached')} ${r.files.map((f) => html`<span class="file">${t('answer.file', { name: f.filename, size: f.size })}</span> `)}</p>` : ''}
${state.error ? html`<p class="error" role="alert" id="answer-error">${state.error}</p>` : html`<p class="error" role="alert" id="answer-error" hidden></p>`}
${r.sealing ? html`<p>${t('answer.sealed')}</p><noscript><p class="error" id="needs-script">${t('answer.needsScript')}</p></noscript>` : ''}
<form method="post" action="/r/${r.url_token}" id="answer-form" data-token="${r.url_token}" data-sealing="${sealing}">
  ${csrfField(viewer)}
  <label for="payload">${t('answer.payload')}</label>
  <textarea id="payload"${named('payload')} rows="6" required${describedBy(state.fields, 'payload')}></textarea>
  ${fieldErrors(state.fields, 'payload')}
  <label for="passphrase">${t('answer.passphrase')}</label>
  <input id="passphrase"${named('passphrase')} type="text" autocomplete="off">
  <button type="submit"${r.sealing ? html` disabled data-needs-script` : ''}>${t('answer.submit')}</button>
</form>
<p id="answer-sent" hidden>${t('answer.sent')}</p>`,
  });
}

export function answeredPage(viewer: Viewer): string {
  const { t } = viewer.i18n;
  return page({
    title: t('answered.title'),
    viewer,
    bare: true,
    body: html`<h1>${t('answered.title')}</h1><p id="answer-sent">${t('answered.text')}</p>`,
  });
}
