/**
 * Faults of durations to the minute and of the legacy API v1: the bugs issue 11 is about (a duration dropped and the
 * default days applied, v1 paths answering HTML), and the ones a server building them could have.
 */
import { define, mapJson, mapRecords } from '../fault.js';
import type { Exchange } from '../proxy.js';

const V1_OPERATIONS = new Set([
  'getVersionV1',
  'createPasswordV1',
  'createFilePushV1',
  'createUrlPushV1',
  'getPushV1',
  'previewPushV1',
  'getPushAuditV1',
  'expirePushV1',
  'listActivePushesV1',
  'listExpiredPushesV1',
]);
const V1_RECORDS: Record<string, number> = {
  createPasswordV1: 201,
  createFilePushV1: 201,
  createUrlPushV1: 201,
  getPushV1: 200,
  expirePushV1: 200,
  listActivePushesV1: 200,
  listExpiredPushesV1: 200,
};

const isV1 = (ex: Exchange) =>
  V1_OPERATIONS.has(ex.op) || (ex.op === 'noRoute' && /^\/(api\/v1\/|[pfr](\.json|\/))/.test(ex.url.pathname));

/** Changes the `push` object of a JSON create before it goes upstream. */
function changeCreate(ex: Exchange, change: (push: Record<string, any>) => void): void {
  const body = ex.requestJson;
  if (ex.op !== 'createPush' || !body?.push || typeof body.push !== 'object') return;
  change(body.push);
  ex.requestJson = body;
}

/** Applies `change` to every v1 push record of a successful v1 answer. */
function mapV1Records(ex: Exchange, change: (record: Record<string, any>) => void): void {
  if (V1_RECORDS[ex.op] !== ex.status) return;
  mapJson(ex, true, (body) => {
    for (const record of Array.isArray(body) ? body : [body]) if (record && typeof record === 'object') change(record);
  });
}

export const durationFaults = define('option', [
  {
    name: 'duration-ignored',
    models:
      'expire_after_duration is dropped and the default 7 days apply (the open-source reference: a "1 hour" secret lives 7 days)',
    killers: ['DUR-002'],
    start: () => ({
      request(ex) {
        changeCreate(ex, (push) => void delete push.expire_after_duration);
      },
    }),
  },
  {
    name: 'duration-rounded-to-days',
    models: 'a duration under a day is stored as one whole day',
    killers: ['DUR-002'],
    start: () => ({
      request(ex) {
        changeCreate(ex, (push) => {
          if (
            typeof push.expire_after_duration === 'number' &&
            push.expire_after_duration < 6 &&
            push.expire_after_days === undefined
          ) {
            delete push.expire_after_duration;
            push.expire_after_days = 1;
          }
        });
      },
    }),
  },
  {
    name: 'duration-conflict-days-win',
    models: 'when both lifetime fields are sent, the days win silently instead of a 422 naming both',
    killers: ['DUR-004'],
    start: () => ({
      request(ex) {
        changeCreate(ex, (push) => {
          if (push.expire_after_duration !== undefined && push.expire_after_days !== undefined)
            delete push.expire_after_duration;
        });
      },
    }),
  },
  {
    name: 'duration-out-of-range-clamped',
    models: 'a duration outside 0..17 or not an integer is clamped and rounded into the enum instead of refused',
    killers: ['DUR-005'],
    start: () => ({
      request(ex) {
        changeCreate(ex, (push) => {
          const value = Number(push.expire_after_duration);
          if (push.expire_after_duration !== undefined && Number.isFinite(value))
            push.expire_after_duration = Math.min(17, Math.max(0, Math.round(value)));
        });
      },
    }),
  },
  {
    name: 'duration-form-ignored',
    models: 'a form create does not read push[expire_after_duration] (only JSON does), so the default days apply',
    killers: ['DUR-008'],
    start: () => ({
      request(ex) {
        if (ex.op !== 'createPush') return;
        const type = ex.requestHeaders['content-type'] ?? '';
        const text = ex.requestBody.toString('utf8');
        if (type.startsWith('application/x-www-form-urlencoded')) {
          ex.requestBody = Buffer.from(
            text
              .split('&')
              .filter((pair) => !/^push(%5B|\[)expire_after_duration(%5D|\])=/i.test(pair))
              .join('&'),
          );
        } else if (type.startsWith('multipart/form-data')) {
          ex.requestBody = Buffer.from(
            text.replace(
              /--[^\r\n]+\r\nContent-Disposition: form-data; name="push\[expire_after_duration\]"\r\n\r\n[^\r\n]*\r\n/,
              '',
            ),
          );
        }
      },
    }),
  },
]);

export const durationValueFaults = define('value', [
  {
    name: 'seconds-remaining-frozen',
    models: 'seconds_remaining is the lifetime as stored, never counted down from the server clock',
    killers: ['DUR-007', 'REC-002'],
    start: () => ({
      response(ex) {
        mapRecords(ex, (r) => {
          if (typeof r.expire_after_seconds === 'number') r.seconds_remaining = r.expire_after_seconds;
        });
      },
    }),
  },
  {
    name: 'days-remaining-rounded-down',
    models:
      'days_remaining counts whole days left (rounded down): 0 for an active push of an hour, which clients read as expired',
    killers: ['DUR-002', 'REC-002'],
    start: () => ({
      response(ex) {
        mapRecords(ex, (r) => {
          if (typeof r.seconds_remaining === 'number') r.days_remaining = Math.floor(r.seconds_remaining / 86_400);
        });
      },
    }),
  },
  {
    name: 'duration-null-for-days',
    models: 'a push made with expire_after_days says expire_after_duration null even when a value of the enum matches',
    killers: ['DUR-003'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'createPush' || ex.status !== 201 || ex.sentJson?.push?.expire_after_duration !== undefined)
          return;
        mapRecords(ex, (r) => {
          r.expire_after_duration = null;
        });
      },
    }),
  },
]);

export const durationFieldFaults = define('field', [
  {
    name: 'duration-fields-missing-from-lists',
    models:
      'the owner lists are built from a query that leaves out the lifetime fields (they are optional in the schema)',
    killers: ['DUR-009'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'listActivePushes' && ex.op !== 'listExpiredPushes') return;
        mapRecords(ex, (r) => {
          delete r.expire_after_duration;
          delete r.expire_after_seconds;
          delete r.seconds_remaining;
        });
      },
    }),
  },
]);

export const v1Faults = define('value', [
  {
    name: 'v1-version-1-0',
    models: 'the v1 version report says api_version 1.0, so PassPushPosh (and CIPP) refuse the instance',
    killers: ['V1-001'],
    start: () => ({
      response(ex) {
        mapJson(ex, ex.op === 'getVersionV1' && ex.status === 200, (b) => {
          b.api_version = '1.0';
        });
      },
    }),
  },
  {
    name: 'v1-json-url-of-v2',
    models: "v1 records carry v2's json_url (/api/v2/pushes/{url_token}), from which PassPushPosh builds a wrong link",
    killers: ['V1-002', 'V1-009'],
    start: () => ({
      response(ex) {
        mapV1Records(ex, (r) => {
          if (typeof r.json_url === 'string')
            r.json_url = r.json_url.replace(/\/p\/([^/]+)\.json$/, '/api/v2/pushes/$1');
        });
      },
    }),
  },
  {
    name: 'v1-not-found-text',
    models: 'an unknown push answers v2\'s error text, not "not-found", so PassPushPosh shows no "not found" message',
    killers: ['V1-006', 'V1-010'],
    start: () => ({
      response(ex) {
        mapJson(ex, isV1(ex) && ex.status === 404, (b) => {
          b.error = 'No push has this token.';
        });
      },
    }),
  },
  {
    name: 'v1-passphrase-text',
    models: "the passphrase 401 says the reference's newer text, which PassPushPosh does not recognise",
    killers: ['V1-005'],
    start: () => ({
      response(ex) {
        mapJson(
          ex,
          ex.op === 'getPushV1' && ex.status === 401 && String(ex.json?.code).startsWith('passphrase_'),
          (b) => {
            b.error = 'That passphrase is incorrect.';
          },
        );
      },
    }),
  },
  {
    name: 'v1-refused-delete-401',
    models: 'a refused delete answers 401 for a signed-in non-owner too, as the reference does',
    killers: ['V1-012'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'expirePushV1' || ex.status !== 403) return;
        ex.status = 401;
        mapJson(ex, true, (b) => {
          b.code = 'authentication_required';
        });
      },
    }),
  },
]);

export const v1StateFaults = define('option', [
  {
    name: 'v1-wrapper-required',
    models: 'a v1 JSON body without the password wrapper answers 400 (the push fields at its top level are not read)',
    killers: ['V1-004'],
    start: () => ({
      request(ex) {
        const body = ex.requestJson;
        if (
          ex.op === 'createPasswordV1' &&
          body &&
          typeof body === 'object' &&
          !('password' in body) &&
          'payload' in body
        ) {
          ex.fail(400, 'missing_push', 'param is missing or the value is empty or invalid: password');
        }
      },
    }),
  },
  {
    name: 'v1-form-integers-dropped',
    models:
      'v1 form values that are numbers as text (password[expire_after_views]=4) are dropped, so the defaults apply',
    killers: ['V1-003'],
    start: () => ({
      request(ex) {
        if (ex.op !== 'createPasswordV1') return;
        const type = ex.requestHeaders['content-type'] ?? '';
        const text = ex.requestBody.toString('utf8');
        if (type.startsWith('application/x-www-form-urlencoded')) {
          ex.requestBody = Buffer.from(
            text
              .split('&')
              .filter((pair) => !/^password(%5B|\[)expire_after_(days|views)(%5D|\])=/i.test(pair))
              .join('&'),
          );
        } else if (type.startsWith('multipart/form-data')) {
          ex.requestBody = Buffer.from(
            text.replace(
              /--[^\r\n]+\r\nContent-Disposition: form-data; name="password\[expire_after_(days|views)\]"\r\n\r\n[^\r\n]*\r\n/g,
              '',
            ),
          );
        }
      },
    }),
  },
  {
    name: 'v1-delete-not-done',
    models:
      'a v1 DELETE answers 200 with the record marked expired and deleted, but the push stays active and readable',
    killers: ['V1-008'],
    start: () => ({
      async request(ex) {
        if (ex.op !== 'expirePushV1') return;
        const list = await ex.send({ method: 'GET', url: new URL('/p/active.json', ex.url), body: Buffer.alloc(0) });
        const record = Array.isArray(list.json)
          ? list.json.find((r: { url_token?: string }) => r.url_token === ex.params.url_token)
          : undefined;
        if (!record) return;
        delete record.name;
        delete record.note;
        Object.assign(record, { expired: true, deleted: true, expired_on: new Date().toISOString() });
        ex.status = 200;
        ex.headers['content-type'] = 'application/json; charset=utf-8';
        ex.json = record;
      },
    }),
  },
  {
    name: 'v1-preview-counts-view',
    models: 'a v1 preview (/p/{url_token}/preview.json) retrieves the push and so uses up a view',
    killers: ['V1-016'],
    start: () => ({
      async response(ex) {
        if (ex.op !== 'previewPushV1' || ex.status !== 200) return;
        const url = new URL(`/p/${encodeURIComponent(ex.params.url_token!)}.json`, ex.url);
        await ex.send({ method: 'GET', url, body: Buffer.alloc(0) });
      },
    }),
  },
]);

export const v1WireFaults = define('field', [
  {
    name: 'v1-audit-as-logs',
    models: 'the v1 audit answers v2\'s {"logs": […]} instead of {"views": […]}',
    killers: ['V1-007'],
    start: () => ({
      response(ex) {
        mapJson(ex, ex.op === 'getPushAuditV1' && ex.status === 200, (b) => ({ logs: b.views }));
      },
    }),
  },
  {
    name: 'v1-audit-without-successful',
    models: 'v1 audit entries lack successful, which pwpush-cli ≤ 0.13 reads (and fails without)',
    killers: ['V1-007'],
    start: () => ({
      response(ex) {
        mapJson(ex, ex.op === 'getPushAuditV1' && ex.status === 200, (b) => {
          for (const entry of b.views ?? []) delete entry.successful;
        });
      },
    }),
  },
]);

export const v1MediaFaults = define('media', [
  {
    name: 'v1-html-pages',
    models: "v1 .json paths under /p/ fall through to the web pages and answer the recipient page's HTML 404",
    killers: ['V1-002', 'V1-010'],
    start: () => ({
      response(ex) {
        if (!/^\/[pfr]\/.+\.json$/.test(ex.url.pathname)) return;
        ex.status = 404;
        ex.headers['content-type'] = 'text/html; charset=utf-8';
        ex.body = Buffer.from(
          '<!doctype html><html><head><title>Not found</title></head><body><h1>Not found</h1></body></html>',
        );
      },
    }),
  },
]);

export const v1AuthFaults = define('auth', [
  {
    name: 'v1-legacy-headers-ignored',
    models: 'v1 ignores X-User-Email + X-User-Token (what v1 clients send), so every v1 call runs anonymously',
    killers: ['V1-009', 'V1-006', 'V1-007', 'V1-008'],
    start: () => ({
      request(ex) {
        if (!isV1(ex)) return;
        delete ex.requestHeaders['x-user-email'];
        delete ex.requestHeaders['x-user-token'];
      },
    }),
  },
]);
