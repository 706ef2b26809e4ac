/**
 * A small in-memory implementation of the API (node:http, no database) for the suite's self-test, with named
 * faults that can be switched on one by one. With every fault off it should pass everything it implements; each
 * fault must make exactly the requirements that observe it fail. File pushes are not implemented: the version
 * report says so, and the suite must skip them.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes, randomUUID } from 'node:crypto';

export const FAULTS = {
  /** GET of an expired push answers 404 instead of 200 with the expired record. */
  'expired-404': 'an expired push answers 404 instead of 200 { expired: true, payload: null }',
  /** The owner lists (active, expired) omit `views_remaining` from each record. */
  'list-missing-views-remaining': 'list records have no views_remaining',
  /** A preview consumes a view. */
  'preview-counts-view': 'preview counts as a view',
  /** A push expired by its view limit keeps serving its payload. */
  'payload-after-expiry': 'the payload is still served after the view limit expired the push',
  /** A retrieval of an expired push (failed_view) still uses up a view. */
  'failed-view-counts': 'retrieving an expired push lowers views_remaining',
  /** `page` is read with Number(): `1e2`, `0x10` and ` 5` pass as pages. */
  'lenient-page': 'page accepts anything Number() reads as an integer 1..200',
} as const;
export type Fault = keyof typeof FAULTS;

/** The fixture's request body limit (what `--max-body-bytes` says for it). */
export const MAX_BODY_BYTES = 64 * 1024;

interface User {
  email: string;
  token: string;
}

interface StoredPush {
  seq: number;
  url_token: string;
  kind: 'text' | 'url' | 'qr';
  payload: string | null;
  passphrase: string | null;
  name: string;
  note: string;
  owner: string | null;
  expire_after_days: number;
  expire_after_views: number;
  views: number;
  deletable_by_viewer: boolean;
  retrieval_step: boolean;
  created_at: Date;
  updated_at: Date;
  expired_on: Date | null;
  deleted: boolean;
  audit: { kind: string; ip: string; user_agent: string; referrer: string; created_at: string }[];
  failures: number[];
}

export interface BrokenServer {
  baseUrl: string;
  users: { a: User; b: User };
  close(): Promise<void>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const DAY = 86_400_000;
/** The days of `expire_after_duration` 6..17 (the contract's table). */
const DURATION_DAYS = [1, 2, 3, 4, 5, 6, 7, 14, 21, 30, 60, 90];
const PER_PAGE = 50;

export async function startBrokenServer(faults: Fault[] = []): Promise<BrokenServer> {
  const on = (fault: Fault) => faults.includes(fault);
  const users = {
    a: { email: 'a@broken.test', token: `spt_${randomBytes(20).toString('hex')}` },
    b: { email: 'b@broken.test', token: `spt_${randomBytes(20).toString('hex')}` },
  };
  const pushes = new Map<string, StoredPush>();
  let seq = 0;
  let base = '';

  const newToken = () => {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
    return Array.from(randomBytes(24), (b) => alphabet[b % 32]).join('');
  };

  function isExpired(p: StoredPush, now: Date): boolean {
    if (p.expired_on) return true;
    if (now.getTime() >= p.created_at.getTime() + p.expire_after_days * DAY) {
      p.expired_on = new Date(p.created_at.getTime() + p.expire_after_days * DAY);
      return true;
    }
    return false;
  }

  function record(p: StoredPush, now: Date): Record<string, unknown> {
    const expired = isExpired(p, now);
    const elapsedDays = Math.floor((now.getTime() - p.created_at.getTime()) / DAY);
    return {
      url_token: p.url_token,
      kind: p.kind,
      expired,
      expired_on: p.expired_on?.toISOString() ?? null,
      deleted: p.deleted,
      created_at: p.created_at.toISOString(),
      updated_at: p.updated_at.toISOString(),
      expires_at: new Date(p.created_at.getTime() + p.expire_after_days * DAY).toISOString(),
      expire_after_days: p.expire_after_days,
      // Lifetimes by days only (no expire_after_duration: the report does not offer it): the enum value when one
      // matches, the exact seconds and the seconds left.
      expire_after_duration: DURATION_DAYS.includes(p.expire_after_days)
        ? DURATION_DAYS.indexOf(p.expire_after_days) + 6
        : null,
      expire_after_seconds: p.expire_after_days * (DAY / 1000),
      seconds_remaining: expired
        ? 0
        : Math.max(Math.floor((p.created_at.getTime() + p.expire_after_days * DAY - now.getTime()) / 1000), 0),
      expire_after_views: p.expire_after_views,
      days_remaining: expired ? 0 : Math.max(p.expire_after_days - elapsedDays, 0),
      views_remaining: Math.max(p.expire_after_views - p.views, 0),
      deletable_by_viewer: p.deletable_by_viewer,
      retrieval_step: p.retrieval_step,
      passphrase_protected: p.passphrase !== null,
      // End-to-end encrypted pushes are not implemented (the version report does not offer them).
      client_encryption: null,
      json_url: `${base}/api/v2/pushes/${p.url_token}`,
      html_url: `${base}/p/${p.url_token}${p.retrieval_step ? '/r' : ''}`,
    };
  }
  const ownerRecord = (p: StoredPush, now: Date) => ({ ...record(p, now), name: p.name, note: p.note });

  function log(p: StoredPush, kind: string, req: IncomingMessage) {
    p.audit.push({
      kind,
      ip: req.socket.remoteAddress ?? '',
      user_agent: String(req.headers['user-agent'] ?? '').slice(0, 255),
      referrer: String(req.headers['referer'] ?? '').slice(0, 255),
      created_at: new Date().toISOString(),
    });
  }

  function expire(p: StoredPush, now: Date, deleted: boolean) {
    p.expired_on ??= now;
    p.updated_at = now;
    p.deleted ||= deleted;
    if (!on('payload-after-expiry') || deleted) p.payload = null;
    p.passphrase = null;
    p.note = '';
  }

  /** The caller: a user, anonymous (null), or 401 for a token that matches nobody. */
  function caller(req: IncomingMessage): User | null {
    const auth = req.headers.authorization;
    const legacyToken = req.headers['x-user-token'];
    const legacyEmail = req.headers['x-user-email'];
    if (auth) {
      const match = /^Bearer (.+)$/.exec(auth);
      const user = Object.values(users).find((u) => u.token === match?.[1]);
      if (!user) throw new HttpError(401, 'invalid_token', 'The token is not valid.');
      return user;
    }
    if (legacyToken || legacyEmail) {
      const user = Object.values(users).find((u) => u.token === legacyToken && u.email === legacyEmail);
      if (!user) throw new HttpError(401, 'invalid_token', 'The token is not valid.');
      return user;
    }
    return null;
  }

  function requireUser(user: User | null): User {
    if (!user) throw new HttpError(401, 'authentication_required', 'Authentication required.');
    return user;
  }

  function page(url: URL): number {
    const raw = url.searchParams.get('page');
    if (raw === null) return 1;
    const integer = on('lenient-page') ? Number.isInteger(Number(raw)) && raw.trim() !== '' : /^\d+$/.test(raw);
    if (!integer || Number(raw) < 1 || Number(raw) > 200) {
      throw new HttpError(400, 'invalid_page', 'page must be an integer from 1 to 200.');
    }
    return Number(raw);
  }

  function paged<T>(items: T[], n: number, url: URL): { items: T[]; headers: Record<string, string> } {
    const slice = items.slice((n - 1) * PER_PAGE, n * PER_PAGE);
    const link = (p: number) => `<${base}${url.pathname}?page=${p}>`;
    const links: string[] = [];
    if (n * PER_PAGE < items.length) links.push(`${link(n + 1)}; rel="next"`);
    if (n > 1) links.push(`${link(n - 1)}; rel="prev"`);
    const headers: Record<string, string> = { 'x-total-count': String(items.length) };
    if (links.length) headers.link = links.join(', ');
    return { items: slice, headers };
  }

  function find(token: string): StoredPush {
    const p = pushes.get(token);
    if (!p) throw new HttpError(404, 'not_found', 'No push has this token.');
    return p;
  }

  function validate(input: Record<string, unknown>): Record<string, string[]> {
    const errors: Record<string, string[]> = {};
    const add = (field: string, message: string) => (errors[field] ??= []).push(message);
    const kind = input.kind ?? (Array.isArray(input.files) && input.files.length > 0 ? 'file' : 'text');
    if (!['text', 'url', 'qr', 'file'].includes(kind as string)) add('kind', 'must be text, file, url or qr');
    else if (kind === 'file' || input.files !== undefined) add('kind', 'file pushes are disabled on this instance');
    const payload = input.payload;
    if (typeof payload !== 'string' || payload.length === 0) add('payload', 'is required');
    else if (kind === 'url' && !/^https?:\/\/[^\s/?#]+\S*$/i.test(payload)) add('payload', 'must be an http(s) URL');
    else if (kind === 'qr' && payload.length > 1024) add('payload', 'is too long (1,024 at most)');
    else if (payload.length > 1_048_576) add('payload', 'is too long');
    const int = (field: string, min: number, max: number) => {
      const v = input[field];
      if (v !== undefined && (!Number.isInteger(v) || (v as number) < min || (v as number) > max)) {
        add(field, `must be an integer from ${min} to ${max}`);
      }
    };
    int('expire_after_days', 1, 90);
    int('expire_after_views', 1, 100);
    for (const field of ['deletable_by_viewer', 'retrieval_step']) {
      if (input[field] !== undefined && typeof input[field] !== 'boolean') add(field, 'must be a boolean');
    }
    const str = (field: string, min: number, max: number) => {
      const v = input[field];
      if (v !== undefined && (typeof v !== 'string' || v.length < min || v.length > max)) add(field, 'is not valid');
    };
    str('passphrase', 1, 1024);
    str('name', 0, 1024);
    str('note', 0, 10_000);
    return errors;
  }

  /** A text-only form read the contract's way (`push[field]`, digits as integers, true/false/1/0 as booleans). */
  async function formBody(raw: string, contentType: string): Promise<{ push: Record<string, unknown> }> {
    const form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
    const push: Record<string, unknown> = {};
    for (const [name, value] of form) {
      const field = /^push\[(\w+)\]$/.exec(name)?.[1];
      if (!field || typeof value !== 'string') continue;
      const booleanField = field === 'deletable_by_viewer' || field === 'retrieval_step';
      if (booleanField)
        push[field] = /^(true|1|on|yes)$/i.test(value) ? true : /^(false|0|off|no)$/i.test(value) ? false : value;
      else push[field] = /^\d+$/.test(value) && field.startsWith('expire_after_') ? Number(value) : value;
    }
    return { push };
  }

  async function readBody(req: IncomingMessage): Promise<string> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }

  type Out = { status: number; body: unknown; headers?: Record<string, string> };

  async function route(req: IncomingMessage, url: URL): Promise<Out> {
    const now = new Date();
    const path = url.pathname.replace(/\.json$/, '');
    const method = req.method ?? 'GET';
    const allow = (methods: string) => {
      throw new HttpError(405, 'method_not_allowed', 'Method not allowed.', {}, { allow: methods });
    };

    if (path === '/api/v2/version') {
      if (method !== 'GET') allow('GET');
      return {
        status: 200,
        body: {
          application_version: '0.0.1',
          api_version: '2.1',
          edition: 'oss',
          features: {
            anonymous_access: true,
            api_token_authentication: true,
            accounts: { enabled: false },
            pushes: {
              enabled: true,
              email_auto_dispatch: false,
              file_attachments: { enabled: false, requires_authentication: true },
              url_pushes: { enabled: true },
              qr_code_pushes: { enabled: true },
            },
            requests: { enabled: false },
          },
        },
      };
    }

    if (path === '/api/v2/pushes') {
      if (method !== 'POST') allow('POST');
      const user = caller(req);
      const contentType = req.headers['content-type'] ?? '';
      const isForm = /^(application\/x-www-form-urlencoded|multipart\/form-data)\b/.test(contentType);
      if (!/^application\/json\b/.test(contentType) && !isForm) {
        throw new HttpError(400, 'unsupported_media_type', 'Send the body as JSON, multipart or form-urlencoded.');
      }
      const raw = await readBody(req);
      if (Buffer.byteLength(raw) > MAX_BODY_BYTES) {
        throw new HttpError(413, 'payload_too_large', 'The request body is larger than this instance accepts.');
      }
      let body: unknown;
      try {
        body = isForm ? await formBody(raw, contentType) : JSON.parse(raw);
      } catch {
        throw new HttpError(400, 'invalid_json', 'The body is not JSON.');
      }
      const input = (body as { push?: unknown } | null)?.push;
      if (!input || typeof input !== 'object' || Array.isArray(input)) {
        throw new HttpError(400, 'missing_push', 'The body has no push object.');
      }
      const fields = input as Record<string, unknown>;
      // No email on this instance (email_auto_dispatch false): recipients answer the reference's 422.
      if (typeof fields.notify_emails_to === 'string' && fields.notify_emails_to.trim() !== '') {
        throw new HttpError(422, 'validation_failed', 'notify_emails_to: are not available', {
          errors: { notify_emails_to: ['are not available'] },
        });
      }
      const errors = validate(fields);
      if (Object.keys(errors).length > 0) {
        throw new HttpError(422, 'validation_failed', 'The push is not valid.', { errors });
      }
      const p: StoredPush = {
        seq: ++seq,
        url_token: newToken(),
        kind: (fields.kind as StoredPush['kind']) ?? 'text',
        payload: fields.payload as string,
        passphrase: (fields.passphrase as string) ?? null,
        name: (fields.name as string) ?? '',
        note: (fields.note as string) ?? '',
        owner: user?.email ?? null,
        expire_after_days: (fields.expire_after_days as number) ?? 7,
        expire_after_views: (fields.expire_after_views as number) ?? 5,
        views: 0,
        deletable_by_viewer: (fields.deletable_by_viewer as boolean) ?? true,
        retrieval_step: (fields.retrieval_step as boolean) ?? false,
        created_at: now,
        updated_at: now,
        expired_on: null,
        deleted: false,
        audit: [],
        failures: [],
      };
      pushes.set(p.url_token, p);
      log(p, 'creation', req);
      return { status: 201, body: ownerRecord(p, now) };
    }

    const listMatch = /^\/api\/v2\/pushes\/(active|expired)$/.exec(path);
    if (listMatch) {
      if (method !== 'GET') allow('GET');
      const user = requireUser(caller(req));
      const n = page(url);
      const state = listMatch[1];
      const mine = [...pushes.values()]
        .filter((p) => p.owner === user.email && isExpired(p, now) === (state === 'expired'))
        .sort((a, b) => b.seq - a.seq)
        .map((p) => {
          const r: Record<string, unknown> = ownerRecord(p, now);
          if (on('list-missing-views-remaining')) delete r.views_remaining;
          return r;
        });
      const { items, headers } = paged(mine, n, url);
      return { status: 200, body: items, headers };
    }

    const pushMatch = /^\/api\/v2\/pushes\/([^/]+)(?:\/(preview|audit))?$/.exec(path);
    if (!pushMatch) throw new HttpError(404, 'no_route', 'No route.');
    const token = decodeURIComponent(pushMatch[1]!);
    const sub = pushMatch[2];

    if (sub === 'preview') {
      if (method !== 'GET') allow('GET');
      caller(req);
      const p = find(token);
      if (on('preview-counts-view') && !isExpired(p, now)) {
        p.views += 1;
        if (p.views >= p.expire_after_views) expire(p, now, false);
      }
      return { status: 200, body: { url: record(p, now).html_url, client_encryption: null } };
    }

    if (sub === 'audit') {
      if (method !== 'GET') allow('GET');
      const user = requireUser(caller(req));
      const n = page(url);
      const p = find(token);
      if (p.owner !== user.email) throw new HttpError(403, 'forbidden', 'Not your push.');
      const { items, headers } = paged(p.audit, n, url);
      return { status: 200, body: { logs: items }, headers };
    }

    if (method === 'DELETE') {
      const user = caller(req);
      const p = find(token);
      const isOwner = user !== null && p.owner === user.email;
      if (!isOwner && !p.deletable_by_viewer) {
        if (!user) throw new HttpError(401, 'authentication_required', 'Only the owner may expire this push.');
        throw new HttpError(403, 'forbidden', 'Only the owner may expire this push.');
      }
      if (!isExpired(p, now)) {
        expire(p, now, true);
        log(p, 'expire', req);
      }
      return { status: 200, body: record(p, now) };
    }
    if (method !== 'GET') allow('GET, DELETE');

    const user = caller(req);
    const given = (req.headers['x-passphrase'] as string | undefined) ?? url.searchParams.get('passphrase');
    if (given != null && given.length > 1024) {
      throw new HttpError(400, 'invalid_parameter', 'The passphrase is longer than 1,024 characters.');
    }
    const p = find(token);
    if (isExpired(p, now)) {
      log(p, 'failed_view', req);
      if (on('failed-view-counts')) p.views += 1;
      if (on('expired-404')) throw new HttpError(404, 'not_found', 'No push has this token.');
      return { status: 200, body: { ...record(p, now), payload: p.payload, files: [] } };
    }
    if (p.passphrase !== null) {
      p.failures = p.failures.filter((t) => now.getTime() - t < 60_000);
      if (p.failures.length >= 5) {
        const retry = Math.ceil((p.failures[0]! + 60_000 - now.getTime()) / 1000);
        throw new HttpError(
          429,
          'too_many_attempts',
          'Too many attempts.',
          { retry_after: retry },
          { 'retry-after': String(retry) },
        );
      }
      if (given !== p.passphrase) {
        p.failures.push(now.getTime());
        log(p, 'failed_passphrase', req);
        if (given == null) throw new HttpError(401, 'passphrase_required', 'This push needs a passphrase.');
        throw new HttpError(401, 'passphrase_incorrect', 'The passphrase is not right.');
      }
    }
    const payload = p.payload;
    if (user && user.email === p.owner) {
      log(p, 'owner_view', req);
      return { status: 200, body: { ...record(p, now), payload, files: [] } };
    }
    p.views += 1;
    p.updated_at = now;
    log(p, 'view', req);
    const body = { ...record(p, now), payload, files: [] };
    if (p.views >= p.expire_after_views) expire(p, now, false);
    return { status: 200, body };
  }

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? '/', base);
    const incoming = req.headers['x-request-id'];
    const requestId =
      typeof incoming === 'string' && /^[A-Za-z0-9._-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    let out: Out;
    try {
      out = await route(req, url);
    } catch (error) {
      if (!(error instanceof HttpError)) {
        out = { status: 500, body: { error: 'Internal error.', code: 'internal_error', request_id: requestId } };
      } else {
        // Every 401 carries a challenge (RFC 9110 §15.5.2): Bearer for the token, the passphrase scheme otherwise.
        const challenge =
          error.status !== 401
            ? undefined
            : /^passphrase_/.test(error.code)
              ? 'Passphrase header="X-Passphrase"'
              : 'Bearer';
        out = {
          status: error.status,
          body: { error: error.message, code: error.code, ...error.extra, request_id: requestId },
          headers: { ...error.headers, ...(challenge ? { 'www-authenticate': challenge } : {}) },
        };
      }
    }
    res.writeHead(out.status, {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'x-request-id': requestId,
      ...(out.headers ?? {}),
    });
    res.end(JSON.stringify(out.body));
  }

  const server: Server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl: base,
    users,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
