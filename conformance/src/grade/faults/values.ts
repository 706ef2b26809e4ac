/** Faults in values that must follow the input, in order, and in options the server ignores or reads leniently. */
import { define, mapJson, mapRecords } from '../fault.js';
import type { Exchange } from '../proxy.js';

const DAY_MS = 86_400_000;

/**
 * A server that drops `field` from the create input (so the instance default applies) while every record of the
 * push echoes what was asked, with `patch` keeping the other fields consistent with the echo.
 */
function ignoredOption(
  field: string,
  patch?: (record: Record<string, any>, asked: unknown, stored: Record<string, any>) => void,
  alsoAnswer?: (ex: Exchange, asked: Map<string, unknown>) => void,
) {
  return () => {
    const asked = new Map<string, unknown>();
    const stored = new Map<string, Record<string, any>>();
    return {
      request(ex: Exchange) {
        const body = ex.requestJson;
        if (ex.op === 'createPush' && body?.push && typeof body.push === 'object' && field in body.push) {
          delete body.push[field];
          ex.requestJson = body;
        }
      },
      response(ex: Exchange) {
        if (ex.op === 'createPush' && ex.status === 201 && ex.sentJson?.push && field in ex.sentJson.push) {
          asked.set(ex.json.url_token, ex.sentJson.push[field]);
          stored.set(ex.json.url_token, ex.json);
        }
        mapRecords(ex, (r) => {
          if (!asked.has(r.url_token)) return;
          patch?.(r, asked.get(r.url_token), stored.get(r.url_token)!);
          r[field] = asked.get(r.url_token);
        });
        alsoAnswer?.(ex, asked);
      },
    };
  };
}

export const valueFaults = define('value', [
  {
    name: 'html-url-without-step',
    models: 'html_url never ends in /r, whatever retrieval_step says',
    killers: ['CRE-003'],
    start: () => ({
      response(ex) {
        mapRecords(ex, (r) => {
          if (typeof r.html_url === 'string') r.html_url = r.html_url.replace(/\/r$/, '');
        });
      },
    }),
  },
  {
    name: 'preview-without-step',
    models: "preview answers {base}/p/{url_token} without /r, ignoring the push's retrieval_step",
    killers: ['PREV-008'],
    start: () => ({
      response(ex) {
        mapJson(ex, ex.op === 'previewPush' && ex.status === 200, (b) => {
          if (typeof b.url === 'string') b.url = b.url.replace(/\/r$/, '');
        });
      },
    }),
  },
  {
    name: 'expires-at-default-days',
    models: 'expires_at is computed from the instance default (7 days), not from expire_after_days',
    killers: ['CRE-003'],
    start: () => ({
      response(ex) {
        mapRecords(ex, (r) => {
          if (typeof r.created_at === 'string')
            r.expires_at = new Date(Date.parse(r.created_at) + 7 * DAY_MS).toISOString();
        });
      },
    }),
  },
  {
    name: 'json-url-reference-style',
    models: "json_url is the reference's broken {base}/p/{url_token}.json, not the push's API URL",
    killers: ['CRE-003'],
    start: () => ({
      response(ex) {
        mapRecords(ex, (r) => {
          if (typeof r.json_url === 'string')
            r.json_url = r.json_url.replace(/\/api\/v2\/pushes\/([^/]+)$/, '/p/$1.json');
        });
      },
    }),
  },
  {
    name: 'links-from-bind-address',
    models: 'push links are built from the address the server listens on (http://0.0.0.0:5100), not the public origin',
    killers: ['REC-001'],
    start: () => ({
      response(ex) {
        const rebase = (u: unknown) =>
          typeof u === 'string' ? u.replace(/^https?:\/\/[^/]+/, 'http://0.0.0.0:5100') : u;
        mapRecords(ex, (r) => {
          r.json_url = rebase(r.json_url);
          r.html_url = rebase(r.html_url);
        });
        mapJson(ex, ex.op === 'previewPush' && ex.status === 200, (b) => {
          b.url = rebase(b.url);
        });
      },
    }),
  },
  {
    name: 'list-views-remaining-stale',
    models: 'the owner lists show views_remaining from a cached creation record (always expire_after_views)',
    killers: ['VIEW-006'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'listActivePushes' && ex.op !== 'listExpiredPushes') return;
        mapRecords(ex, (r) => {
          r.views_remaining = r.expire_after_views;
        });
      },
    }),
  },
  {
    name: 'kind-ignored',
    models: 'kind is not stored: url and qr pushes are kept as text pushes (the create answer echoes the kind asked)',
    killers: ['CRE-014', 'REC-007'],
    start: ignoredOption('kind'),
  },
]);

export const orderFaults = define('order', [
  {
    name: 'active-list-oldest-first',
    models: 'the active list is sorted oldest first',
    killers: ['LIST-001'],
    start: () => ({
      response(ex) {
        mapJson(ex, ex.op === 'listActivePushes' && ex.status === 200, (b) => (Array.isArray(b) ? b.reverse() : b));
      },
    }),
  },
  {
    name: 'expired-list-oldest-first',
    models: 'the expired list is sorted oldest first',
    killers: ['LIST-010'],
    start: () => ({
      response(ex) {
        mapJson(ex, ex.op === 'listExpiredPushes' && ex.status === 200, (b) => (Array.isArray(b) ? b.reverse() : b));
      },
    }),
  },
  {
    name: 'audit-newest-first',
    models: 'the audit log is sorted newest first',
    killers: ['AUD-002'],
    start: () => ({
      response(ex) {
        mapJson(ex, ex.op === 'getPushAudit' && ex.status === 200, (b) => {
          if (Array.isArray(b.logs)) b.logs.reverse();
        });
      },
    }),
  },
]);

export const optionFaults = define('option', [
  {
    name: 'ignores-expire-after-views',
    models: 'expire_after_views is not stored (the default applies) while every record echoes the number asked',
    killers: ['CRE-008', 'VIEW-003'],
    start: ignoredOption('expire_after_views', (r, asked, stored) => {
      const used = stored.expire_after_views - r.views_remaining;
      r.views_remaining = Math.max(0, Number(asked) - used);
    }),
  },
  {
    name: 'ignores-deletable-by-viewer',
    models: 'deletable_by_viewer is not stored (the default, true, applies) while records echo the value asked',
    killers: ['DEL-003', 'DEL-004'],
    start: ignoredOption('deletable_by_viewer'),
  },
  {
    name: 'ignores-passphrase',
    models: 'the passphrase is not stored while records say passphrase_protected: anyone retrieves without it',
    killers: ['PASS-001', 'CRE-020'],
    start: ignoredOption('passphrase', (r) => {
      r.passphrase_protected = true;
      delete r.passphrase;
    }),
  },
  {
    name: 'ignores-expire-after-days',
    models: 'expire_after_days is not stored (the default applies) while records echo the days asked',
    killers: ['CRE-007', 'CRE-003'],
    start: ignoredOption('expire_after_days'),
  },
  {
    name: 'page-clamped',
    models: 'page is clamped into 1..200 (0 and negatives read as 1, 201 as 200), as the reference does',
    killers: ['LIST-004', 'AUD-007'],
    start: () => ({
      request(ex) {
        const raw = ex.url.searchParams.get('page');
        if (raw === null) return;
        const n = Number.parseInt(raw, 10);
        ex.url.searchParams.set('page', String(Number.isNaN(n) ? 1 : Math.min(200, Math.max(1, n))));
      },
    }),
  },
  {
    name: 'unknown-query-refused',
    models:
      'a strict validator refuses query parameters the operation does not define (locale, cache busters) with 400',
    killers: ['CRE-023'],
    start: () => ({
      request(ex) {
        const known = new Set(['page', 'passphrase', 'token']);
        const unknown = [...ex.url.searchParams.keys()].find((k) => !known.has(k));
        if (unknown && ex.op !== 'noRoute' && ex.op !== 'methodNotAllowed')
          ex.fail(400, 'invalid_parameter', `Unknown parameter: ${unknown}.`);
      },
    }),
  },
  {
    name: 'ignores-x-passphrase-header',
    models: 'only the passphrase query parameter is read, not the X-Passphrase header',
    killers: ['PASS-003'],
    start: () => ({
      request(ex) {
        delete ex.requestHeaders['x-passphrase'];
      },
    }),
  },
  {
    name: 'any-content-type-parsed',
    models: 'a create body is parsed as JSON whatever its Content-Type says',
    killers: ['ERR-007'],
    start: () => ({
      request(ex) {
        if (ex.op === 'createPush' && !/json/i.test(ex.requestHeaders['content-type'] ?? ''))
          ex.requestHeaders['content-type'] = 'application/json';
      },
    }),
  },
  {
    name: 'audit-without-user-agent',
    models: 'audit entries record neither the User-Agent nor the Referer',
    killers: ['AUD-010'],
    start: () => ({
      response(ex) {
        mapJson(ex, ex.op === 'getPushAudit' && ex.status === 200, (b) => {
          for (const entry of b.logs ?? []) Object.assign(entry, { user_agent: '', referrer: '' });
        });
      },
    }),
  },
  {
    name: 'retrieval-step-not-stored',
    models: 'retrieval_step is not stored while records and links echo it (the recipient page skips the step)',
    killers: [],
    invisible:
      'retrieval_step only changes the recipient web page (a click-through before the secret shows); the JSON API answers the same either way',
    start: ignoredOption(
      'retrieval_step',
      (r, asked) => {
        if (asked === true && typeof r.html_url === 'string' && !r.html_url.endsWith('/r')) r.html_url += '/r';
      },
      (ex, asked) => {
        mapJson(
          ex,
          ex.op === 'previewPush' && ex.status === 200 && asked.get(ex.params.url_token ?? '') === true,
          (b) => {
            if (typeof b.url === 'string' && !b.url.endsWith('/r')) b.url += '/r';
          },
        );
      },
    ),
  },
  {
    name: 'audit-ip-of-a-proxy',
    models: 'audit entries record the address of a proxy in front of the server instead of the client’s',
    killers: [],
    invisible:
      'which client address the server sees depends on the network in between (proxies, NAT, load balancers), so a black-box suite cannot know the right one',
    start: () => ({
      response(ex) {
        mapJson(ex, ex.op === 'getPushAudit' && ex.status === 200, (b) => {
          for (const entry of b.logs ?? []) entry.ip = '10.0.0.1';
        });
      },
    }),
  },
]);
