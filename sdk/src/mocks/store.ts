/**
 * The in-memory state of the stateful mock: pushes, views, passphrase attempts, audit entries, download links and
 * a settable clock. The rules follow /work/shared/design/api-decisions.md (the spec's descriptions); the HTTP layer
 * in ./server.ts only parses requests and shapes responses.
 */
import type {
  AuditEntry,
  ClientEncryption,
  PreviewResponse,
  Push,
  PushInput,
  PushKind,
  PushOwner,
  PushRetrieval,
  VersionReport,
} from '../generated/types.gen.js';
import { zPushInput } from '../generated/zod.gen.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const LINK_LIFETIME_MS = 5 * 60 * 1000;
const ATTEMPT_WINDOW_MS = 60 * 1000;
// The spec's URL pattern (PushInput, kind url); keep the two identical.
export const URL_PAYLOAD = /^[Hh][Tt][Tt][Pp][Ss]?:\/\/[A-Za-z0-9\[][^\s]*$/;

export interface MockUser {
  email: string;
  token: string;
}

export interface Bounds {
  default: number;
  min: number;
  max: number;
}

/** Instance settings the mock honours (the server's `PWPUSH_*` counterparts). */
export interface MockSettings {
  allowAnonymous: boolean;
  enableFilePushes: boolean;
  enableUrlPushes: boolean;
  enableQrPushes: boolean;
  filesRequireAuth: boolean;
  fileMaxCount: number;
  fileMaxBytes: number;
  expireAfterDays: Bounds;
  expireAfterViews: Bounds;
  deletableByViewerDefault: boolean;
  retrievalStepDefault: boolean;
  passphraseAttemptsPerMinute: number;
  /** End-to-end encrypted pushes: accepted, the pages' default, required (`features.pushes.client_encryption`). */
  clientEncryption: { enabled: boolean; default: boolean; required: boolean };
  /** `{base}` of json_url/html_url; else the request's origin. */
  publicBaseUrl: string | null;
}

export const defaultMockSettings: MockSettings = {
  allowAnonymous: true,
  enableFilePushes: true,
  enableUrlPushes: true,
  enableQrPushes: true,
  filesRequireAuth: true,
  fileMaxCount: 10,
  fileMaxBytes: 10 * 1024 * 1024,
  expireAfterDays: { default: 7, min: 1, max: 90 },
  expireAfterViews: { default: 5, min: 1, max: 100 },
  deletableByViewerDefault: true,
  retrievalStepDefault: false,
  passphraseAttemptsPerMinute: 5,
  clientEncryption: { enabled: true, default: false, required: false },
  publicBaseUrl: null,
};

export const defaultMockUsers: readonly MockUser[] = [
  { email: 'alice@example.com', token: 'spt_mock_alice_0000000000000000000000000000' },
  { email: 'bob@example.com', token: 'spt_mock_bob_000000000000000000000000000000' },
];

interface StoredFile {
  id: string;
  filename: string;
  contentType: string;
  bytes: Uint8Array | null;
}

interface StoredPush {
  urlToken: string;
  seq: number;
  kind: PushKind;
  payload: string | null;
  files: StoredFile[];
  /** Set for an end-to-end encrypted push: payload, names and bytes are the client's envelopes, kept as sent. */
  clientEncryption: ClientEncryption | null;
  passphrase: string | null;
  passphraseProtected: boolean;
  name: string;
  note: string;
  owner: string | null;
  createdAt: number;
  updatedAt: number;
  expireAfterDays: number;
  expireAfterViews: number;
  views: number;
  deletableByViewer: boolean;
  retrievalStep: boolean;
  expiredAt: number | null;
  deleted: boolean;
  audit: AuditEntry[];
  failedAttempts: number[];
}

/** Who is asking, as the HTTP layer resolved it. */
export interface MockActor {
  user: MockUser | null;
  ip: string;
  userAgent: string;
  referrer: string;
}

/** A rule the request broke; the HTTP layer turns it into the spec's error body. */
export class MockFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: { errors?: Record<string, string[]>; retryAfter?: number; headers?: Record<string, string> } = {},
  ) {
    super(message);
  }
}

export interface ListPage<T> {
  items: T[];
  total: number;
}

export const PAGE_SIZE = 50;

function randomString(length: number, alphabet: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = '';
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return out;
}

function decodeBase64Length(content: string): number | null {
  if (content.length % 4 !== 0) return null;
  const padding = content.endsWith('==') ? 2 : content.endsWith('=') ? 1 : 0;
  return (content.length / 4) * 3 - padding;
}

function base64Bytes(content: string): Uint8Array {
  const binary = atob(content);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export class MockStore {
  readonly settings: MockSettings;
  readonly users: readonly MockUser[];
  private pushes = new Map<string, StoredPush>();
  private links = new Map<string, { urlToken: string; fileId: string; expiresAt: number }>();
  private seq = 0;
  private clockBase: () => number;
  private clockOffset = 0;

  constructor(settings: MockSettings, users: readonly MockUser[], now?: Date | (() => Date)) {
    this.settings = settings;
    this.users = users;
    this.clockBase = typeof now === 'function' ? () => now().getTime() : now ? () => now.getTime() : () => Date.now();
  }

  now(): number {
    return this.clockBase() + this.clockOffset;
  }

  setClock(date: Date | string | number): void {
    const fixed = new Date(date).getTime();
    if (Number.isNaN(fixed)) throw new TypeError(`setClock: not a date: ${String(date)}`);
    this.clockBase = () => fixed;
    this.clockOffset = 0;
  }

  advanceClock(ms: number): void {
    this.clockOffset += ms;
  }

  reset(): void {
    this.pushes.clear();
    this.links.clear();
  }

  userByToken(token: string, email?: string): MockUser | null {
    const user = this.users.find((u) => u.token === token);
    if (!user) return null;
    if (email !== undefined && user.email.toLowerCase() !== email.toLowerCase()) return null;
    return user;
  }

  version(): VersionReport {
    const s = this.settings;
    return {
      application_version: '0.1.0',
      api_version: '2.1',
      edition: 'oss',
      features: {
        anonymous_access: s.allowAnonymous,
        api_token_authentication: true,
        accounts: { enabled: false },
        pushes: {
          enabled: true,
          email_auto_dispatch: false,
          file_attachments: { enabled: s.enableFilePushes, requires_authentication: s.filesRequireAuth },
          url_pushes: { enabled: s.enableUrlPushes },
          qr_code_pushes: { enabled: s.enableQrPushes },
          client_encryption: {
            ...s.clientEncryption,
            schemes: s.clientEncryption.enabled ? [{ scheme: 'aes-256-gcm', version: 1 }] : [],
          },
        },
        requests: { enabled: false },
      },
    };
  }

  // ---- create -------------------------------------------------------------------------------------------------

  /** Validates with the generated zod schema, then the per-kind and instance rules the schema cannot express. */
  create(raw: unknown, actor: MockActor, createdAt?: number): StoredPush {
    const parsed = zPushInput.safeParse(raw);
    if (!parsed.success) {
      const errors: Record<string, string[]> = {};
      for (const issue of parsed.error.issues) {
        const field = String(issue.path[0] ?? 'push');
        (errors[field] ??= []).push(issue.message);
      }
      throw new MockFailure(422, 'validation_failed', 'The push is not valid.', { errors });
    }
    const input = parsed.data as PushInput;
    const s = this.settings;
    const files = input.files ?? [];
    const kind: PushKind = input.kind ?? (files.length > 0 ? 'file' : 'text');

    if ((input.files !== undefined || kind === 'file') && s.filesRequireAuth && !actor.user) {
      throw new MockFailure(401, 'authentication_required', 'File pushes need an API token.');
    }

    const errors: Record<string, string[]> = {};
    const add = (field: string, message: string) => (errors[field] ??= []).push(message);
    if ((kind === 'file' && !s.enableFilePushes) || (kind === 'url' && !s.enableUrlPushes) || (kind === 'qr' && !s.enableQrPushes)) {
      add('kind', `${kind} pushes are disabled on this instance`);
    }
    const payload = input.payload;
    // An encrypted push's plaintext rules (URL shape, QR length) are the client's: the payload is an envelope.
    const encrypted = input.client_encryption != null;
    if (encrypted && !s.clientEncryption.enabled) add('client_encryption', 'end-to-end encrypted pushes are disabled on this instance');
    if (!encrypted && s.clientEncryption.required) add('client_encryption', 'this instance accepts only end-to-end encrypted pushes');
    if (kind === 'file') {
      if (files.length === 0) add('files', 'a file push needs at least one file');
    } else {
      if (files.length > 0) add('files', 'only file pushes take files');
      if (payload === undefined || payload === '') add('payload', 'Payload is required.');
      else if (kind === 'url' && !encrypted) {
        let ok = URL_PAYLOAD.test(payload);
        try {
          new URL(payload);
        } catch {
          ok = false;
        }
        if (!ok) add('payload', 'must be an absolute http or https URL');
      } else if (kind === 'qr' && !encrypted && payload.length > 1024) add('payload', 'must be at most 1024 characters for a QR push');
    }
    if (files.length > s.fileMaxCount) add('files', `at most ${s.fileMaxCount} files`);
    files.forEach((file, i) => {
      const size = decodeBase64Length(file.content);
      if (size === null) add('files', `file ${i + 1}: content is not valid base64`);
      else if (size > s.fileMaxBytes) add('files', `file ${i + 1}: larger than ${s.fileMaxBytes} bytes`);
    });
    const days = input.expire_after_days ?? s.expireAfterDays.default;
    if (days < s.expireAfterDays.min || days > s.expireAfterDays.max) {
      add('expire_after_days', `must be an integer from ${s.expireAfterDays.min} to ${s.expireAfterDays.max}`);
    }
    const views = input.expire_after_views ?? s.expireAfterViews.default;
    if (views < s.expireAfterViews.min || views > s.expireAfterViews.max) {
      add('expire_after_views', `must be an integer from ${s.expireAfterViews.min} to ${s.expireAfterViews.max}`);
    }
    if (Object.keys(errors).length > 0) throw new MockFailure(422, 'validation_failed', 'The push is not valid.', { errors });

    const at = createdAt ?? this.now();
    let urlToken: string;
    do urlToken = randomString(24, 'abcdefghijklmnopqrstuvwxyz234567');
    while (this.pushes.has(urlToken));
    const push: StoredPush = {
      urlToken,
      seq: ++this.seq,
      kind,
      payload: payload ?? '',
      files: files.map((f) => ({
        id: randomString(8, 'abcdefghijklmnopqrstuvwxyz0123456789'),
        filename: f.filename,
        contentType: f.content_type ?? 'application/octet-stream',
        bytes: base64Bytes(f.content),
      })),
      clientEncryption: input.client_encryption ?? null,
      passphrase: input.passphrase ?? null,
      passphraseProtected: input.passphrase !== undefined,
      name: input.name ?? '',
      note: input.note ?? '',
      owner: actor.user?.email ?? null,
      createdAt: at,
      updatedAt: at,
      expireAfterDays: days,
      expireAfterViews: views,
      views: 0,
      deletableByViewer: input.deletable_by_viewer ?? s.deletableByViewerDefault,
      retrievalStep: input.retrieval_step ?? s.retrievalStepDefault,
      expiredAt: null,
      deleted: false,
      audit: [],
      failedAttempts: [],
    };
    this.pushes.set(urlToken, push);
    this.log(push, 'creation', actor, at);
    return push;
  }

  // ---- reads and state changes ----------------------------------------------------------------------------------

  private find(urlToken: string): StoredPush {
    const push = this.pushes.get(urlToken);
    if (!push) throw new MockFailure(404, 'not_found', 'No push has this token.');
    this.settle(push);
    return push;
  }

  /** Time expiry is decided at read time: a push past `expires_at` is expired and its secret erased. */
  private settle(push: StoredPush): void {
    if (push.expiredAt !== null) return;
    const expiresAt = push.createdAt + push.expireAfterDays * DAY_MS;
    if (this.now() >= expiresAt) this.expire(push, expiresAt, false);
  }

  private expire(push: StoredPush, at: number, deleted: boolean): void {
    push.expiredAt = at;
    push.updatedAt = Math.max(push.updatedAt, at);
    push.deleted = deleted;
    push.payload = null;
    push.passphrase = null;
    push.note = '';
    if (deleted) for (const file of push.files) file.bytes = null;
  }

  private log(push: StoredPush, kind: AuditEntry['kind'], actor: MockActor, at = this.now()): void {
    push.audit.push({
      kind,
      ip: actor.ip,
      user_agent: actor.userAgent.slice(0, 255),
      referrer: actor.referrer.slice(0, 255),
      created_at: new Date(at).toISOString(),
    });
  }

  retrieve(urlToken: string, passphrase: string | undefined, actor: MockActor, base: string): PushRetrieval {
    const push = this.find(urlToken);
    const isOwner = actor.user !== null && actor.user.email === push.owner;
    if (push.expiredAt !== null) {
      // As the server: at most one failed_view per client address and minute.
      const now = this.now();
      const recent = push.audit.some(
        (e) => e.kind === 'failed_view' && e.ip === actor.ip && now - Date.parse(e.created_at) < 60_000,
      );
      if (!recent) this.log(push, 'failed_view', actor);
      return { ...this.record(push, base), payload: null, files: [] };
    }
    if (push.passphrase !== null) {
      const now = this.now();
      push.failedAttempts = push.failedAttempts.filter((t) => t > now - ATTEMPT_WINDOW_MS);
      if (push.failedAttempts.length >= this.settings.passphraseAttemptsPerMinute) {
        const retryAfter = Math.max(1, Math.ceil((push.failedAttempts[0]! + ATTEMPT_WINDOW_MS - now) / 1000));
        throw new MockFailure(429, 'too_many_attempts', 'Too many passphrase attempts. Please try again in a minute.', {
          retryAfter,
        });
      }
      if (passphrase === undefined || passphrase === '') {
        this.log(push, 'failed_passphrase', actor);
        push.failedAttempts.push(now);
        throw new MockFailure(401, 'passphrase_required', 'This push needs a passphrase.');
      }
      if (passphrase !== push.passphrase) {
        this.log(push, 'failed_passphrase', actor);
        push.failedAttempts.push(now);
        throw new MockFailure(401, 'passphrase_incorrect', 'The passphrase is incorrect.');
      }
    }
    const now = this.now();
    const files = push.files.map((file) => {
      const token = randomString(48, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');
      this.links.set(token, { urlToken: push.urlToken, fileId: file.id, expiresAt: now + LINK_LIFETIME_MS });
      return {
        id: file.id,
        filename: file.filename,
        content_type: file.contentType,
        size: file.bytes?.length ?? 0,
        url: `${base}/api/v2/pushes/${push.urlToken}/files/${file.id}?token=${token}`,
      };
    });
    const payload = push.payload;
    if (isOwner) {
      this.log(push, 'owner_view', actor);
      return { ...this.record(push, base), payload, files };
    }
    push.views += 1;
    push.updatedAt = now;
    this.log(push, 'view', actor);
    // The view that uses the last one still answers `expired: false` with the payload; the push expires with it.
    const answer: PushRetrieval = { ...this.record(push, base), payload, files };
    if (push.views >= push.expireAfterViews) this.expire(push, now, false);
    return answer;
  }

  preview(urlToken: string, base: string): PreviewResponse {
    const push = this.find(urlToken);
    return { url: this.record(push, base).html_url, client_encryption: push.clientEncryption };
  }

  expireByRequest(urlToken: string, actor: MockActor, base: string): Push {
    const push = this.find(urlToken);
    const isOwner = actor.user !== null && actor.user.email === push.owner;
    if (!isOwner && !push.deletableByViewer) {
      if (!actor.user) throw new MockFailure(401, 'authentication_required', 'Only the owner may expire this push.');
      throw new MockFailure(403, 'forbidden', 'You do not own this push.');
    }
    if (push.expiredAt === null) {
      const now = this.now();
      this.expire(push, now, true);
      this.log(push, 'expire', actor, now);
    }
    return this.record(push, base);
  }

  audit(urlToken: string, page: number, actor: MockActor): ListPage<AuditEntry> {
    if (!actor.user) throw new MockFailure(401, 'authentication_required', 'This needs an API token.');
    const push = this.find(urlToken);
    if (push.owner !== actor.user.email) throw new MockFailure(403, 'forbidden', 'You do not own this push.');
    return { items: push.audit.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE), total: push.audit.length };
  }

  list(state: 'active' | 'expired', page: number, actor: MockActor, base: string): ListPage<PushOwner> {
    if (!actor.user) throw new MockFailure(401, 'authentication_required', 'This needs an API token.');
    const owner = actor.user.email;
    const mine = [...this.pushes.values()].filter((p) => p.owner === owner);
    for (const push of mine) this.settle(push);
    const matching = mine
      .filter((p) => (state === 'active') === (p.expiredAt === null))
      .sort((a, b) => b.createdAt - a.createdAt || b.seq - a.seq);
    return {
      items: matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map((p) => this.ownerRecord(p, base)),
      total: matching.length,
    };
  }

  download(urlToken: string, fileId: string, token: string): { filename: string; contentType: string; bytes: Uint8Array } {
    const link = this.links.get(token);
    if (!link || link.urlToken !== urlToken || link.fileId !== fileId) {
      throw new MockFailure(403, 'invalid_link', 'The download link is not valid.');
    }
    if (this.now() >= link.expiresAt) throw new MockFailure(403, 'link_expired', 'The download link has expired.');
    const push = this.pushes.get(urlToken);
    const file = push?.files.find((f) => f.id === fileId);
    if (!push || !file || file.bytes === null) throw new MockFailure(404, 'not_found', 'The file is gone.');
    return { filename: file.filename, contentType: file.contentType, bytes: file.bytes };
  }

  // ---- records --------------------------------------------------------------------------------------------------

  record(push: StoredPush, base: string): Push {
    const now = this.now();
    const expiresAt = push.createdAt + push.expireAfterDays * DAY_MS;
    const expiredByTime = now >= expiresAt;
    const daysElapsed = Math.floor((now - push.createdAt) / DAY_MS);
    return {
      url_token: push.urlToken,
      kind: push.kind,
      expired: push.expiredAt !== null,
      expired_on: push.expiredAt === null ? null : new Date(push.expiredAt).toISOString(),
      deleted: push.deleted,
      created_at: new Date(push.createdAt).toISOString(),
      updated_at: new Date(push.updatedAt).toISOString(),
      expires_at: new Date(expiresAt).toISOString(),
      expire_after_days: push.expireAfterDays,
      expire_after_views: push.expireAfterViews,
      days_remaining: expiredByTime ? 0 : Math.max(push.expireAfterDays - daysElapsed, 0),
      views_remaining: Math.max(push.expireAfterViews - push.views, 0),
      deletable_by_viewer: push.deletableByViewer,
      retrieval_step: push.retrievalStep,
      passphrase_protected: push.passphraseProtected,
      client_encryption: push.clientEncryption,
      json_url: `${base}/api/v2/pushes/${push.urlToken}`,
      html_url: `${base}/p/${push.urlToken}${push.retrievalStep ? '/r' : ''}`,
    };
  }

  ownerRecord(push: StoredPush, base: string): PushOwner {
    return { ...this.record(push, base), name: push.name, note: push.note };
  }
}
