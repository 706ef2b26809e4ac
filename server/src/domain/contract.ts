/**
 * The seam between the HTTP layer (server/src/http) and the domain + persistence layer (server/src/domain,
 * server/src/db). Handlers call only these services; the services never see express or openapi-backend.
 * Wire shapes come from the generated SDK types, so the spec stays the single source of truth.
 */
import type {
  AuditEntry,
  Push,
  PushInput,
  PushOwner,
  PushRetrieval,
  VersionReport,
} from '../../../sdk/src/generated/types.gen.js';

export type { AuditEntry, Push, PushInput, PushOwner, PushRetrieval, VersionReport };

/** Who is asking, as the HTTP layer resolved it. `userId` is null for anonymous callers. */
export interface Actor {
  userId: string | null;
  ip: string;
  userAgent: string;
  referrer: string;
}

/** What the domain needs of the request to build URLs: `{base}` of the decisions (configured or request origin). */
export interface RequestContext {
  actor: Actor;
  baseUrl: string;
  now?: Date;
  /**
   * Set by the HTTP layer only, when openapi-backend has already validated the request body against the same
   * bundled `PushInput` schema: create then skips its own schema pass (a 1 MiB payload costs ~10 ms to check) and
   * applies only the instance's rules. Callers without that validation in front (the web form) leave it unset.
   */
  inputValidatedBySchema?: boolean;
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  perPage: number;
}

/** Every failure a service reports; the HTTP error mapper turns each into the spec's ErrorResponse. */
export type DomainErrorCode =
  | 'not_found'
  | 'authentication_required'
  | 'forbidden'
  | 'passphrase_required'
  | 'passphrase_incorrect'
  | 'too_many_attempts'
  | 'validation_failed'
  | 'invalid_link'
  | 'link_expired'
  | 'service_unavailable';

export class DomainError extends Error {
  constructor(
    readonly code: DomainErrorCode,
    message: string,
    readonly details: { fields?: Record<string, string[]>; retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.name = 'DomainError';
  }
}

export interface PushService {
  /** Per-kind rules the schema cannot know (instance bounds, disabled kinds, file sizes) → validation_failed. */
  create(input: PushInput, ctx: RequestContext): Promise<PushOwner>;
  /** Counts a view with one atomic claim; expired → record with payload null; passphrase errors per the spec. */
  retrieve(urlToken: string, passphrase: string | undefined, ctx: RequestContext): Promise<PushRetrieval>;
  preview(urlToken: string, ctx: RequestContext): Promise<{ url: string }>;
  expire(urlToken: string, ctx: RequestContext): Promise<Push>;
  audit(urlToken: string, page: number, ctx: RequestContext): Promise<Page<AuditEntry>>;
  list(state: 'active' | 'expired', page: number, ctx: RequestContext): Promise<Page<PushOwner>>;
  /** Verifies the signed download token and returns the bytes. */
  downloadFile(
    urlToken: string,
    fileId: string,
    token: string,
  ): Promise<{ filename: string; contentType: string; bytes: Buffer }>;
}

export interface UserService {
  /** Resolves a bearer token (or the legacy pair, when `email` is given) to a user id; null when invalid. */
  authenticate(token: string, email?: string): Promise<{ userId: string; email: string } | null>;
  createUser(email: string, password?: string): Promise<{ userId: string; token: string }>;
  rotateToken(email: string): Promise<string>;
}

/** Bounds an instance applies to an expiry field; always inside the spec's widest bounds. */
export interface Bounds {
  default: number;
  min: number;
  max: number;
}

/**
 * Instance settings, read and validated once at start-up from `PWPUSH_*`, `DATABASE_URL`, `PORT` and the data
 * directory (server/src/config/settings.ts: `loadSettings(env)`, which throws SettingsError with a clear message
 * on a bad value). Nothing else reads process.env.
 */
export interface Settings {
  env: 'development' | 'production' | 'test';
  host: string;
  port: number;
  dataDir: string;
  databaseUrl: string | null;
  publicBaseUrl: string | null;
  trustProxy: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
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
  rateLimitPerMinute: number;
  sweepIntervalSeconds: number;
  purgeExpiredAfterDays: number | null;
  /** Current key first; older keys only decrypt. Ids are short strings stored with each ciphertext. */
  masterKeys: { id: string; key: Buffer }[];
  /** Signs download links (and, later, sessions): derived from the master key unless set. */
  signingSecret: Buffer;
  /** Web pages: visitors may make an account at /users/sign_up (PWPUSH_ENABLE_SIGNUPS). */
  enableSignups: boolean;
  /** Web pages: how long a sign-in lasts (PWPUSH_SESSION_LIFETIME_HOURS). */
  sessionLifetimeHours: number;
  /** Web pages: failed sign-ins per email, and per client address, within 15 minutes before 429 (PWPUSH_LOGIN_ATTEMPTS). */
  loginAttemptsPer15Minutes: number;
}

/** A web-page session's user: `sessionVersion` changes on sign-out, which ends every session made before. */
export interface AccountUser {
  userId: string;
  email: string;
  sessionVersion: number;
}

/**
 * Accounts for the web pages (server/src/web): email + password sign-up and sign-in with a failed-attempt limit held
 * in PostgreSQL, session versions, and whether a user has an API token. Tokens themselves are made by
 * UserService.rotateToken.
 */
export interface AccountService {
  /** validation_failed for a bad email, a short password or an email already registered. */
  signUp(email: string, password: string): Promise<AccountUser>;
  /** authentication_required for a wrong email or password; too_many_attempts (with retryAfterSeconds) past the limit. */
  signIn(email: string, password: string, ip: string, now?: Date): Promise<AccountUser>;
  /** The user of a session, or null when the user is gone or the session's version is stale. */
  sessionUser(userId: string, sessionVersion: number): Promise<AccountUser | null>;
  /** Ends every session of the user (bumps the session version). */
  endSessions(userId: string): Promise<void>;
  tokenStatus(userId: string): Promise<{ hasToken: boolean; createdAt: string | null }>;
}

/** Read-only queries for the web pages. */
export interface WebServices {
  accounts: AccountService;
  /**
   * A push's record without its secret, from its real state (time expiry included), or null for an unknown token.
   * Like preview it never counts a view or writes an audit entry: a link previewer's GET must consume nothing.
   */
  pushState(urlToken: string, ctx: RequestContext): Promise<Push | null>;
}

/** What server/src/domain/index.ts `createCore(settings)` returns: the database is connected and migrated. */
export interface Core {
  settings: Settings;
  pushes: PushService;
  users: UserService;
  /** Accounts and page queries for the web pages; optional so that HTTP test doubles need not provide them. */
  web?: WebServices;
  version(): VersionReport;
  /** Throws when the database is unreachable (for /readyz and the 503 mapping). */
  ping(): Promise<void>;
  /** Runs one sweep now (the core also runs it every `sweepIntervalSeconds` when started with sweeper: true). */
  sweep(now?: Date): Promise<{ erasedPushes: number; erasedFiles: number }>;
  close(): Promise<void>;
}
