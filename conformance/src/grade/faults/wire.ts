/** Faults on the wire: statuses, fields, headers and media types that break the contract's shape. */
import { randomUUID } from 'node:crypto';
import { define, mapJson, mapRecords } from '../fault.js';

const isError = (status: number) => status >= 400;

export const statusFaults = define('status', [
  {
    name: 'forbidden-as-401',
    models: "an authenticated non-owner's forbidden request answers 401, as the reference does, instead of 403",
    killers: ['DEL-004', 'AUD-004'],
    start: () => ({
      response(ex) {
        if (ex.status === 403 && ex.json?.code === 'forbidden') {
          ex.fail(401, 'authentication_required', 'You are not allowed to do that.');
          ex.headers['www-authenticate'] = 'Bearer';
        }
      },
    }),
  },
  {
    name: 'validation-as-400',
    models: 'a field that breaks a rule answers 400 (a framework default) instead of 422',
    killers: ['CRE-007'],
    start: () => ({
      response(ex) {
        if (ex.status === 422) ex.status = 400;
      },
    }),
  },
  {
    name: 'expired-as-404',
    models: 'retrieving an expired push answers 404 instead of 200 with the expired record',
    killers: ['VIEW-002'],
    start: () => ({
      response(ex) {
        if (ex.op === 'getPush' && ex.status === 200 && ex.json?.expired === true)
          ex.fail(404, 'not_found', 'No push has this token.');
      },
    }),
  },
  {
    name: 'created-as-200',
    models: 'a create answers 200 instead of 201 Created',
    killers: ['CRE-001'],
    start: () => ({
      response(ex) {
        if (ex.op === 'createPush' && ex.status === 201) ex.status = 200;
      },
    }),
  },
  {
    name: 'wrong-passphrase-as-403',
    models: 'a wrong passphrase answers 403 forbidden instead of 401 passphrase_incorrect',
    killers: ['PASS-002'],
    start: () => ({
      response(ex) {
        if (ex.op === 'getPush' && ex.json?.code === 'passphrase_incorrect')
          ex.fail(403, 'forbidden', 'Wrong passphrase.');
      },
    }),
  },
  {
    name: 'attempt-limit-as-401',
    models:
      'past the passphrase attempt limit the answer stays 401 passphrase_incorrect, with no 429 and no Retry-After',
    killers: ['PASS-005'],
    start: () => ({
      response(ex) {
        if (ex.op === 'getPush' && ex.status === 429) {
          ex.fail(401, 'passphrase_incorrect', 'The passphrase is not right.');
          delete ex.headers['retry-after'];
        }
      },
    }),
  },
  {
    name: 'api-catch-all-page',
    models: 'a catch-all web route answers unknown /api/v2 paths with a 200 HTML page instead of a JSON 404',
    killers: ['ERR-002'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'noRoute') return;
        ex.status = 200;
        ex.headers['content-type'] = 'text/html; charset=utf-8';
        ex.body = Buffer.from('<!doctype html><title>Secret Push</title><div id="app"></div>');
      },
    }),
  },
  {
    name: 'method-as-404',
    models: 'a method a path does not define answers 404 no_route (a router without 405 support)',
    killers: ['ERR-003', 'ERR-006'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'methodNotAllowed' || ex.status !== 405) return;
        ex.fail(404, 'no_route', 'No such API route.');
        delete ex.headers.allow;
      },
    }),
  },
]);

export const fieldFaults = define('field', [
  {
    name: 'list-drops-views-remaining',
    models: 'the owner lists serialize records without views_remaining',
    killers: ['LIST-001'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'listActivePushes' && ex.op !== 'listExpiredPushes') return;
        mapRecords(ex, (r) => {
          delete r.views_remaining;
        });
      },
    }),
  },
  {
    name: 'timestamps-without-milliseconds',
    models: 'timestamps are serialized without milliseconds (2026-11-21T08:00:00Z)',
    killers: ['CRE-001'],
    start: () => ({
      response(ex) {
        const cut = (v: unknown) => (typeof v === 'string' ? v.replace(/\.\d{3}Z$/, 'Z') : v);
        mapRecords(ex, (r) => {
          for (const k of ['created_at', 'updated_at', 'expires_at', 'expired_on']) r[k] = cut(r[k]);
        });
        mapJson(ex, ex.op === 'getPushAudit' && ex.status === 200, (b) => {
          for (const entry of b.logs ?? []) entry.created_at = cut(entry.created_at);
        });
      },
    }),
  },
  {
    name: 'expired-on-only-on-delete',
    models: 'expired_on is set only by a delete, so a push expired by its views says expired with expired_on null',
    killers: ['VIEW-002'],
    start: () => ({
      response(ex) {
        mapRecords(ex, (r) => {
          if (r.expired === true && r.deleted === false) r.expired_on = null;
        });
      },
    }),
  },
  {
    name: 'deleted-on-view-expiry',
    models: 'a push expired by its view limit reports deleted true, as if deleted',
    killers: ['VIEW-005'],
    start: () => ({
      response(ex) {
        mapRecords(ex, (r) => {
          if (r.expired === true && r.views_remaining === 0) r.deleted = true;
        });
      },
    }),
  },
  {
    name: 'error-without-code',
    models: 'error bodies carry only a message, no machine-readable code',
    killers: ['CRE-012', 'ERR-001'],
    start: () => ({
      response(ex) {
        mapJson(ex, isError(ex.status), (b) => {
          delete b.code;
        });
      },
    }),
  },
  {
    name: 'validation-errors-as-list',
    models: "a 422's errors are a flat list of sentences instead of messages per field",
    killers: ['CRE-009'],
    start: () => ({
      response(ex) {
        mapJson(ex, ex.status === 422, (b) => {
          if (b.errors && typeof b.errors === 'object') {
            b.errors = Object.entries(b.errors as Record<string, string[]>).flatMap(([field, messages]) =>
              messages.map((m) => `${field} ${m}`),
            );
          }
        });
      },
    }),
  },
]);

export const headerFaults = define('header', [
  {
    name: 'no-www-authenticate',
    models: 'a 401 for a missing or invalid token sends no WWW-Authenticate challenge',
    killers: ['HDR-005', 'HDR-004'],
    start: () => ({
      response(ex) {
        delete ex.headers['www-authenticate'];
      },
    }),
  },
  {
    name: 'no-challenge-on-passphrase-401',
    models: 'a passphrase 401 sends no WWW-Authenticate (the token 401s do), as if only sign-in were authentication',
    killers: ['HDR-007', 'HDR-004'],
    start: () => ({
      response(ex) {
        if (ex.status === 401 && /^passphrase_/.test(String(ex.json?.code))) delete ex.headers['www-authenticate'];
      },
    }),
  },
  {
    name: 'ratelimit-unlisted-policy',
    models:
      'a RateLimit item names a policy its RateLimit-Policy does not list (the client cannot tell which limit it is)',
    killers: ['HDR-008'],
    start: () => ({
      response(ex) {
        if (ex.headers.ratelimit !== undefined) ex.headers['ratelimit-policy'] = '"another";q=1;w=60';
      },
    }),
  },
  {
    name: 'no-allow-on-405',
    models: 'a 405 does not say which methods the path answers (no Allow)',
    killers: ['ERR-003'],
    start: () => ({
      response(ex) {
        if (ex.status === 405) delete ex.headers.allow;
      },
    }),
  },
  {
    name: 'no-retry-after',
    models: 'a 429 (or 503) does not say when to try again (no Retry-After)',
    killers: ['PASS-005'],
    start: () => ({
      response(ex) {
        if (ex.status === 429 || ex.status === 503) delete ex.headers['retry-after'];
      },
    }),
  },
  {
    name: 'version-without-cache-control',
    models: 'the version report is served by a route outside the middleware that sets Cache-Control',
    killers: ['HDR-004'],
    start: () => ({
      response(ex) {
        if (ex.op === 'getVersion') delete ex.headers['cache-control'];
      },
    }),
  },
  {
    name: 'retrieval-cacheable',
    models: 'a retrieval that carries the secret may be cached (Cache-Control: private, max-age=60)',
    killers: ['HDR-001'],
    start: () => ({
      response(ex) {
        if (ex.op === 'getPush' && ex.status === 200) ex.headers['cache-control'] = 'private, max-age=60';
      },
    }),
  },
  {
    name: 'no-total-count',
    models: 'lists and the audit log page without X-Total-Count',
    killers: ['LIST-005', 'AUD-006'],
    start: () => ({
      response(ex) {
        delete ex.headers['x-total-count'];
      },
    }),
  },
  {
    name: 'total-count-of-page',
    models: 'X-Total-Count counts the items of this page, not of all pages',
    killers: ['LIST-005'],
    start: () => ({
      response(ex) {
        if (ex.headers['x-total-count'] === undefined) return;
        const body = ex.json;
        const items = Array.isArray(body) ? body : body?.logs;
        if (Array.isArray(items)) ex.headers['x-total-count'] = String(items.length);
      },
    }),
  },
  {
    name: 'link-without-prev',
    models: 'the Link header gives rel=next but never rel=prev',
    killers: ['LIST-009'],
    start: () => ({
      response(ex) {
        const link = ex.header('link');
        if (!link) return;
        const kept = link.split(',').filter((part) => !/rel="?prev"?/.test(part));
        if (kept.length) ex.headers.link = kept.join(',');
        else delete ex.headers.link;
      },
    }),
  },
  {
    name: 'link-next-on-last-page',
    models: 'the Link header always offers rel=next, also on the last page',
    killers: ['LIST-005'],
    start: () => ({
      response(ex) {
        if (ex.headers['x-total-count'] === undefined || /rel="?next"?/.test(ex.header('link') ?? '')) return;
        const page = Number(ex.url.searchParams.get('page') ?? '1') || 1;
        const next = new URL(ex.url.pathname, ex.url);
        next.searchParams.set('page', String(page + 1));
        ex.headers.link = [ex.header('link'), `<${next.href}>; rel="next"`].filter(Boolean).join(', ');
      },
    }),
  },
  {
    name: 'request-id-not-echoed',
    models: 'the server makes its own X-Request-Id even when the client sends a safe one, so logs cannot be matched',
    killers: ['HDR-006'],
    start: () => ({
      response(ex) {
        const id = randomUUID();
        ex.headers['x-request-id'] = id;
        mapJson(ex, isError(ex.status), (b) => {
          if ('request_id' in b) b.request_id = id;
        });
      },
    }),
  },
  {
    name: 'download-without-disposition',
    models: 'a download is sent without Content-Disposition, so browsers may render it inline',
    killers: ['FILE-008'],
    start: () => ({
      response(ex) {
        if (ex.op === 'downloadPushFile') delete ex.headers['content-disposition'];
      },
    }),
  },
]);

export const mediaFaults = define('media', [
  {
    name: 'json-as-text-plain',
    models: 'JSON answers are labelled text/plain (a body written with res.send(string))',
    // Every answer is checked against the contract, media type included: the first requirement to read JSON sees it.
    killers: ['HDR-003', 'VER-001'],
    start: () => ({
      response(ex) {
        if (/json/i.test(ex.header('content-type') ?? '')) ex.headers['content-type'] = 'text/plain; charset=utf-8';
      },
    }),
  },
  {
    name: 'errors-as-problem-json',
    models: 'error answers are labelled application/problem+json, a type the contract does not document',
    // As above: the first requirement that meets an error answer (a 422 of the create rules) sees the media type.
    killers: ['HDR-003', 'CRE-007'],
    start: () => ({
      response(ex) {
        if (isError(ex.status) && /json/i.test(ex.header('content-type') ?? ''))
          ex.headers['content-type'] = 'application/problem+json';
      },
    }),
  },
  {
    name: 'download-as-declared-type',
    models: 'a download is served under the uploaded file’s declared type, inline (script could run on the origin)',
    killers: ['FILE-008'],
    start: () => {
      const declared = new Map<string, string>();
      return {
        response(ex) {
          if (ex.op === 'getPush' && ex.status === 200) {
            for (const f of ex.json?.files ?? []) declared.set(String(f.id), String(f.content_type));
          }
          if (ex.op === 'downloadPushFile' && ex.status === 200) {
            const type = declared.get(ex.params.file_id ?? '');
            if (type) ex.headers['content-type'] = type;
            ex.headers['content-disposition'] = 'inline';
          }
        },
      };
    },
  },
  {
    name: 'html-404-page',
    models: 'an unknown API path answers the web framework’s HTML 404 page',
    killers: ['ERR-002'],
    start: () => ({
      response(ex) {
        if (ex.op !== 'noRoute') return;
        ex.headers['content-type'] = 'text/html; charset=utf-8';
        ex.body = Buffer.from('<!doctype html><title>404</title><h1>Not Found</h1>');
      },
    }),
  },
]);
