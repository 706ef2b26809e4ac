/**
 * The in-memory state of the stateful mock: pushes, views, passphrase attempts, audit entries, download links and
 * a settable clock. The rules are the server's own, imported from `@secret-push/rules` (the same functions the server runs):
 * the contract's PushInput schema (compiled from the generated schemas) and the instance rules on create, the push
 * record, who may do what, the passphrase window, the failed-view dedupe and the last-view answer. What is left
 * here is storage. The HTTP layer in ./server.ts only parses requests and shapes responses.
 */
import type { MockGrantor } from './api-keys.js';
import type {
  AuditEntry,
  PreviewResponse,
  Push,
  PushOwner,
  PushRetrieval,
  VersionReport,
} from '../generated/types.gen.js';
import {
  ApiError,
  checkPushSchema,
  DEFAULT_PUSH_RULE_SETTINGS,
  FAILED_VIEW_DEDUPE_MS,
  generatedPushSchema,
  isExpired,
  isOwner,
  lastViewAnswer,
  notifyLimit,
  emailUnavailable,
  notifyRefused,
  NOTIFY_CALLS_PER_MINUTE,
  NOTIFY_DAILY_LIMIT_DEFAULT,
  NOTIFY_MAX_RECIPIENTS,
  NOTIFY_TEXT,
  readNotifyRequest,
  requireNotifyScope,
  LINK_LIFETIME_MS,
  newPushState,
  bytesInMemory,
  normalizePushInput,
  notFound,
  ownerRecord,
  PAGE_SIZE,
  passphraseRetryAfter,
  pushRecord,
  requireAuditCaller,
  requireAuditOwner,
  requireListCaller,
  requireMayCreate,
  requireMayExpire,
  versionReport,
  ACCESS_CODE_SECONDS,
  ERRORS,
  inAllowedNetworks,
  readAccessCode,
  turnOn,
  validationFailed,
  type PushRuleSettings,
  type PushState,
  type ApiKeyScope,
} from '@secret-push/rules';
import { MockAccessCodes } from './recipient-access.js';

export interface MockUser {
  email: string;
  token: string;
}

/** Instance settings the mock honours (the server's `PWPUSH_*` counterparts). */
export interface MockSettings extends PushRuleSettings {
  /** `{base}` of json_url/html_url; else the request's origin. */
  publicBaseUrl: string | null;
  /**
   * Emailing links (`features.pushes.email_auto_dispatch`): the mock "sends" at once (every delivery `completed`)
   * into its outbox (`sentEmails()`). Default false, as a server without an SMTP relay.
   */
  emailAutoDispatch: boolean;
}

export const defaultMockSettings: MockSettings = {
  ...DEFAULT_PUSH_RULE_SETTINGS,
  publicBaseUrl: null,
  emailAutoDispatch: false,
};

/** An email the mock "sent": one per recipient, with the link it carried (never the secret). */
export interface MockEmail {
  to: string;
  locale: string | null;
  link: string;
  /** The push's token, or the request's for a request's email. */
  urlToken: string;
  /** A push for specific people: the one-time code this email carried (`requestAccessCode`); the link is the push's. */
  accessCode?: string;
  /** A request's email: which move it tells of (`created`: the link to a listed address; else: the requester). */
  request?: 'created' | 'fulfilled' | 'collected' | 'expired' | 'revoked';
}

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

/** A push as the mock keeps it: the shared state (owners are identified by email) plus its secrets and log. */
interface StoredPush {
  state: PushState;
  seq: number;
  payload: string | null;
  files: StoredFile[];
  passphrase: string | null;
  name: string;
  note: string;
  audit: AuditEntry[];
  failedAttempts: Date[];
  /** The workspace the push was made in, or null: its owner's personal space. */
  workspaceId: number | null;
  /** What the create asked to email (echoed in its answer only). */
  notifyEcho?: { notify_emails_to: string; notify_emails_to_locale: string | null };
}

/** Who is asking, as the HTTP layer resolved it. */
export interface MockActor {
  user: MockUser | null;
  /** The scopes of the caller's API key; absent for every scope (the account token) or an anonymous caller. */
  scopes?: readonly ApiKeyScope[];
  /** The caller's API key, what a key it makes must stay inside; absent with the account token. */
  grantor?: MockGrantor;
  ip: string;
  userAgent: string;
  referrer: string;
}

export interface ListPage<T> {
  items: T[];
  total: number;
}

function randomString(length: number, alphabet: string): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = '';
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return out;
}

const userIdOf = (actor: MockActor): string | null => actor.user?.email ?? null;

export class MockStore {
  readonly settings: MockSettings;
  readonly users: readonly MockUser[];
  private pushes = new Map<string, StoredPush>();
  private links = new Map<string, { urlToken: string; fileId: string; expiresAt: number }>();
  private seq = 0;
  private outbox: MockEmail[] = [];
  private notifyCalls = new Map<string, number[]>();
  private access = new MockAccessCodes();
  private clockBase: () => number;
  private clockOffset = 0;
  /** Told of every successful retrieval (the requests of ./requests.ts move a request to `collected`). */
  onRetrieved: ((urlToken: string, actor: MockActor) => void) | undefined;

  constructor(settings: MockSettings, users: readonly MockUser[], now?: Date | (() => Date)) {
    this.settings = settings;
    this.users = users;
    this.clockBase = typeof now === 'function' ? () => now().getTime() : now ? () => now.getTime() : () => Date.now();
  }

  now(): number {
    return this.clockBase() + this.clockOffset;
  }

  private date(): Date {
    return new Date(this.now());
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

  /** A deleted workspace's (deleteWorkspace): they go with it. */
  dropWorkspace(workspaceId: number): void {
    for (const [id, item] of this.pushes) if (item.workspaceId === workspaceId) this.pushes.delete(id);
  }

  reset(): void {
    this.pushes.clear();
    this.links.clear();
    this.outbox = [];
    this.notifyCalls.clear();
    this.access.clear();
  }

  sentEmails(): MockEmail[] {
    return this.outbox.map((m) => ({ ...m }));
  }

  userByToken(token: string, email?: string): MockUser | null {
    const user = this.users.find((u) => u.token === token);
    if (!user) return null;
    if (email !== undefined && user.email.toLowerCase() !== email.toLowerCase()) return null;
    return user;
  }

  version(): VersionReport {
    return versionReport(this.settings, '0.1.0', {
      requests: true,
      apiKeys: true,
      emailAutoDispatch: this.settings.emailAutoDispatch,
      recipientAccess: { emailCodes: this.settings.emailAutoDispatch, singleSignOn: false },
      workspaces: true,
    });
  }

  // ---- create -------------------------------------------------------------------------------------------------

  /** The contract's schema, then the instance's rules (as the server), then storage. */
  create(raw: unknown, actor: MockActor, createdAt?: number, workspaceId: number | null = null): StoredPush {
    requireMayCreate(this.settings, userIdOf(actor), raw);
    const input = checkPushSchema(generatedPushSchema(), raw);
    const valid = normalizePushInput(input, this.settings);
    if (valid.recipientEmails.length > 0 && !this.settings.emailAutoDispatch) {
      const field = input.recipient_emails ? 'recipient_emails' : 'authenticated_recipients';
      throw validationFailed({ [field]: [`are not available: ${turnOn('email', this.settings.env)}`] });
    }
    const to = input.notify_emails_to;
    const notify = to === undefined || to.trim() === '' ? null : this.checkNotify(input, actor);
    const at = new Date(createdAt ?? this.now());
    let urlToken: string;
    do urlToken = randomString(24, 'abcdefghijklmnopqrstuvwxyz234567');
    while (this.pushes.has(urlToken));
    const push: StoredPush = {
      state: newPushState(valid, { urlToken, ownerId: userIdOf(actor), workspaceId }, at),
      seq: ++this.seq,
      payload: valid.payload,
      files: valid.files.map((f) => ({
        id: randomString(8, 'abcdefghijklmnopqrstuvwxyz0123456789'),
        filename: f.filename,
        contentType: f.contentType,
        bytes: bytesInMemory(f.bytes),
      })),
      passphrase: valid.passphrase,
      name: valid.name,
      note: valid.note,
      audit: [],
      failedAttempts: [],
      workspaceId,
    };
    this.pushes.set(urlToken, push);
    this.log(push, 'creation', actor, at);
    if (notify) {
      this.send(push, notify.recipients, notify.locale, actor, at);
      push.notifyEcho = { notify_emails_to: to!, notify_emails_to_locale: notify.locale };
    }
    return push;
  }

  // ---- email (the server's rules; the mock's outbox instead of SMTP) ------------------------------------------

  private checkNotify(
    input: { notify_emails_to?: string; notify_emails_to_locale?: string | null; client_encryption?: unknown },
    actor: MockActor,
  ) {
    requireNotifyScope(actor.scopes);
    if (!this.settings.emailAutoDispatch) throw emailUnavailable('no_relay', this.settings.env);
    if (!actor.user) throw notifyRefused(NOTIFY_TEXT.anonymous);
    const request = readNotifyRequest(input.notify_emails_to, input.notify_emails_to_locale);
    if (input.client_encryption) throw notifyRefused([NOTIFY_TEXT.encrypted]);
    const today = this.outbox.length; // one mock instance is one user's world enough: all sends count
    if (today + request.recipients.length > NOTIFY_DAILY_LIMIT_DEFAULT) throw notifyLimit(NOTIFY_TEXT.daily);
    return request;
  }

  /**
   * A request's emails (./requests.ts), "sent" at once when email is on: the links to listed addresses count against
   * the daily limit as the pushes' do (422 on base over it, before anything is stored); the requester's notices do not.
   */
  mailRequest(emails: MockEmail[]): void {
    if (!this.settings.emailAutoDispatch) return;
    const links = emails.filter((e) => e.request === 'created').length;
    if (links > 0 && this.outbox.length + links > NOTIFY_DAILY_LIMIT_DEFAULT) throw notifyLimit(NOTIFY_TEXT.daily);
    this.outbox.push(...emails.map((e) => ({ ...e })));
  }

  /** The delivery, at once: one email per recipient, the entry `completed`. */
  private send(push: StoredPush, recipients: string[], locale: string | null, actor: MockActor, at: Date): void {
    const link = pushRecord(push.state, at, this.settings.publicBaseUrl ?? 'http://localhost').html_url;
    for (const to of recipients) this.outbox.push({ to, locale, link, urlToken: push.state.urlToken });
    this.log(push, 'creation_email_send', actor, at);
    push.audit[push.audit.length - 1]!.notify_by_email = {
      recipients: recipients.join(','),
      locale,
      status: 'completed',
      successful_sends: recipients.join(','),
      proceed_at: at.toISOString(),
    };
  }

  /** `notifyEmails`: the server's checks in its order, then the delivery. */
  notifyEmails(
    urlToken: string,
    body: { notify_emails_to?: string; notify_emails_to_locale?: string | null },
    actor: MockActor,
  ): { message: string } {
    const userId = userIdOf(actor);
    if (userId === null) throw new ApiError('authentication_required', 'This operation needs an API token.');
    const push = this.find(urlToken);
    if (!isOwner(push.state, userId)) throw new ApiError('forbidden', "That push doesn't belong to you.");
    const now = this.now();
    const calls = (this.notifyCalls.get(userId) ?? []).filter((t) => now - t < 60_000);
    if (calls.length >= NOTIFY_CALLS_PER_MINUTE) {
      throw new ApiError('rate_limited', NOTIFY_TEXT.rateLimited, {
        retryAfterSeconds: Math.max(1, Math.ceil((calls[0]! + 60_000 - now) / 1000)),
      });
    }
    this.notifyCalls.set(userId, [...calls, now]);
    if (!this.settings.emailAutoDispatch) throw emailUnavailable('no_relay', this.settings.env);
    const request = readNotifyRequest(body.notify_emails_to, body.notify_emails_to_locale);
    if (push.state.expired) throw notifyRefused(NOTIFY_TEXT.expired);
    if (push.state.clientEncryption) throw notifyRefused([NOTIFY_TEXT.encrypted]);
    const already = push.audit.reduce((n, e) => n + (e.notify_by_email?.recipients.split(',').length ?? 0), 0);
    if (already + request.recipients.length > NOTIFY_MAX_RECIPIENTS) throw notifyLimit(NOTIFY_TEXT.perPush(already));
    this.send(push, request.recipients, request.locale, actor, this.date());
    return { message: NOTIFY_TEXT.queued };
  }

  // ---- reads and state changes ----------------------------------------------------------------------------------

  private find(urlToken: string): StoredPush {
    const push = this.pushes.get(urlToken);
    if (!push) throw notFound();
    this.settle(push);
    return push;
  }

  /** Time expiry is decided at read time: a push past `expires_at` is expired and its secret erased. */
  private settle(push: StoredPush): void {
    if (!push.state.expired && isExpired(push.state, this.date())) this.expire(push, push.state.expiresAt, false);
  }

  private expire(push: StoredPush, at: Date, deleted: boolean): void {
    Object.assign(push.state, {
      expired: true,
      expiredOn: at,
      deleted,
      updatedAt: new Date(Math.max(push.state.updatedAt.getTime(), at.getTime())),
    });
    push.payload = null;
    push.passphrase = null;
    push.note = '';
    if (deleted) for (const file of push.files) file.bytes = null;
  }

  private log(push: StoredPush, kind: AuditEntry['kind'], actor: MockActor, at = this.date()): void {
    push.audit.push({
      kind,
      ip: actor.ip,
      user_agent: actor.userAgent.slice(0, 255),
      referrer: actor.referrer.slice(0, 255),
      created_at: at.toISOString(),
    });
  }

  private checkPassphrase(push: StoredPush, passphrase: string | undefined, actor: MockActor): void {
    const now = this.date();
    const retryAfterSeconds = passphraseRetryAfter(push.failedAttempts, now, this.settings.passphraseAttemptsPerMinute);
    if (retryAfterSeconds !== null) {
      throw new ApiError('too_many_attempts', 'Too many passphrase attempts for this push; try again later.', {
        retryAfterSeconds,
      });
    }
    if (passphrase === undefined || passphrase === '' || passphrase !== push.passphrase) {
      this.log(push, 'failed_passphrase', actor);
      push.failedAttempts.push(now);
      if (passphrase === undefined || passphrase === '') {
        throw new ApiError('passphrase_required', 'This push needs a passphrase (send it in the X-Passphrase header).');
      }
      throw new ApiError('passphrase_incorrect', 'That passphrase is incorrect.');
    }
  }

  private fileLinks(push: StoredPush, base: string): PushRetrieval['files'] {
    return push.files.map((file) => {
      const token = randomString(48, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');
      this.links.set(token, {
        urlToken: push.state.urlToken,
        fileId: file.id,
        expiresAt: this.now() + LINK_LIFETIME_MS,
      });
      return {
        id: file.id,
        filename: file.filename,
        content_type: file.contentType,
        size: file.bytes?.length ?? 0,
        url: `${base}/api/v2/pushes/${push.state.urlToken}/files/${file.id}?token=${token}`,
      };
    });
  }

  /** `requestAccessCode`: a code into the outbox when the address is one of the push's; the same answer otherwise. */
  requestAccessCode(urlToken: string, email: string, actor: MockActor): { expires_in: number } {
    const push = this.find(urlToken);
    const sent = this.access.request(push.state, email, actor.ip, this.now(), this.settings.emailAutoDispatch);
    if (sent) {
      const link = pushRecord(push.state, this.date(), this.settings.publicBaseUrl ?? 'http://localhost').html_url;
      this.outbox.push({ to: sent.to, locale: null, link, urlToken, accessCode: sent.code });
    }
    return { expires_in: ACCESS_CODE_SECONDS };
  }

  /** Who may open it (issue 42), as the server decides, before the passphrase and before a view is spent. */
  private accessGate(push: StoredPush, accessCode: string | undefined, actor: MockActor): void {
    const { state } = push;
    if (isOwner(state, userIdOf(actor))) return;
    if (state.allowedNetworks.length > 0 && !inAllowedNetworks(actor.ip, state.allowedNetworks)) {
      this.logFailedView(push, actor);
      throw new ApiError('network_not_allowed', 'This push cannot be opened from your network.');
    }
    if (state.recipientEmails.length === 0) return;
    if (!accessCode) throw new ApiError('access_code_required', ERRORS.access_code_required.message);
    const now = this.date();
    const retryAfterSeconds = passphraseRetryAfter(push.failedAttempts, now, this.settings.passphraseAttemptsPerMinute);
    if (retryAfterSeconds !== null) {
      throw new ApiError('too_many_attempts', 'Too many passphrase attempts for this push; try again later.', {
        retryAfterSeconds,
      });
    }
    if (!this.access.use(state.urlToken, readAccessCode(accessCode) ?? '', now.getTime())) {
      this.log(push, 'failed_passphrase', actor);
      push.failedAttempts.push(now);
      throw new ApiError('access_code_incorrect', ERRORS.access_code_incorrect.message);
    }
  }

  private logFailedView(push: StoredPush, actor: MockActor): void {
    const now = this.date();
    // As the server: at most one failed_view per client address and window.
    const recent = push.audit.some(
      (e) =>
        e.kind === 'failed_view' &&
        e.ip === actor.ip &&
        now.getTime() - Date.parse(e.created_at) < FAILED_VIEW_DEDUPE_MS,
    );
    if (!recent) this.log(push, 'failed_view', actor);
  }

  retrieve(
    urlToken: string,
    passphrase: string | undefined,
    actor: MockActor,
    base: string,
    accessCode?: string,
  ): PushRetrieval {
    const push = this.find(urlToken);
    const now = this.date();
    if (push.state.expired) {
      this.logFailedView(push, actor);
      return { ...this.record(push, base), payload: null, files: [] };
    }
    this.accessGate(push, accessCode, actor);
    if (push.passphrase !== null) this.checkPassphrase(push, passphrase, actor);
    const files = this.fileLinks(push, base);
    const payload = push.payload;
    if (isOwner(push.state, userIdOf(actor))) {
      this.log(push, 'owner_view', actor);
      this.onRetrieved?.(urlToken, actor);
      return { ...this.record(push, base), payload, files };
    }
    push.state.viewsUsed += 1;
    push.state.updatedAt = now;
    this.log(push, 'view', actor);
    if (push.state.viewsUsed >= push.state.expireAfterViews) this.expire(push, now, false);
    this.onRetrieved?.(urlToken, actor);
    return { ...pushRecord(lastViewAnswer(push.state), now, base), payload, files };
  }

  preview(urlToken: string, base: string): PreviewResponse {
    const record = this.record(this.find(urlToken), base);
    return { url: record.html_url, client_encryption: record.client_encryption };
  }

  expireByRequest(urlToken: string, actor: MockActor, base: string): Push {
    const push = this.find(urlToken);
    requireMayExpire(push.state, userIdOf(actor));
    if (!push.state.expired) {
      const now = this.date();
      this.expire(push, now, true);
      this.log(push, 'expire', actor, now);
    }
    return this.record(push, base);
  }

  audit(urlToken: string, page: number, actor: MockActor): ListPage<AuditEntry> {
    const userId = userIdOf(actor);
    requireAuditCaller(userId);
    const push = this.find(urlToken);
    requireAuditOwner(push.state, userId);
    return { items: push.audit.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE), total: push.audit.length };
  }

  /**
   * The caller's personal pushes, or (with `scope`, a membership the caller holds) a workspace's: every push of it,
   * or the caller's own there, as the server lists them.
   */
  list(
    which: 'active' | 'expired',
    page: number,
    actor: MockActor,
    base: string,
    scope: { workspaceId: number; seesAll: boolean } | null = null,
  ): ListPage<PushOwner> {
    const userId = userIdOf(actor);
    requireListCaller(userId);
    const mine = [...this.pushes.values()].filter((p) =>
      scope
        ? p.workspaceId === scope.workspaceId && (scope.seesAll || isOwner(p.state, userId))
        : p.workspaceId === null && isOwner(p.state, userId),
    );
    for (const push of mine) this.settle(push);
    const matching = mine
      .filter((p) => (which === 'expired') === p.state.expired)
      .sort((a, b) => b.state.createdAt.getTime() - a.state.createdAt.getTime() || b.seq - a.seq);
    return {
      items: matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map((p) => this.ownerRecord(p, base)),
      total: matching.length,
    };
  }

  download(
    urlToken: string,
    fileId: string,
    token: string,
  ): { filename: string; contentType: string; bytes: Uint8Array } {
    const link = this.links.get(token);
    if (!link || link.urlToken !== urlToken || link.fileId !== fileId) {
      throw new ApiError('invalid_link');
    }
    if (this.now() >= link.expiresAt) throw new ApiError('link_expired');
    const file = this.pushes.get(urlToken)?.files.find((f) => f.id === fileId);
    if (!file || file.bytes === null) throw new ApiError('not_found', 'This file is no longer available.');
    return { filename: file.filename, contentType: file.contentType, bytes: file.bytes };
  }

  // ---- records --------------------------------------------------------------------------------------------------

  record(push: StoredPush, base: string): Push {
    return pushRecord(push.state, this.date(), base);
  }

  ownerRecord(push: StoredPush, base: string): PushOwner {
    return ownerRecord(push.state, this.date(), base, push);
  }
}
