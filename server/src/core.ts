/**
 * The server's core: `createCore(settings)` connects to `settings.databaseUrl` (main.ts and the tests start the
 * embedded PostgreSQL first when there is no DATABASE_URL, and pass its url in), applies the migrations and wires the
 * services of each area (push, user, account) and the sweeper. The HTTP layer and the pages call only these.
 *
 * Database outages: every service method, `ping()` and `sweep()` throw ApiError('service_unavailable') when
 * PostgreSQL cannot be reached; `createCore` itself lets the original connection error surface (start-up should fail
 * loudly).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Pool } from 'pg';
import type { Push, VersionReport } from '@secret-push/sdk/generated';
import { versionReport as reportOf } from '@secret-push/rules';
import { accountMailDelivery, ACCOUNT_QUEUE, createAccountMail, type AccountMail } from './account/account-mail.js';
import { createAccountService, type AccountService } from './account/account-service.js';
import { securityEvents } from './account/security-events.js';
import { createAdminService, type AdminService } from './admin/admin-service.js';
import { createSingleSignOn, type SingleSignOn } from './account/single-sign-on.js';
import { createTwoFactorService, type TwoFactorService } from './account/two-factor.js';
import { emailAvailable, mailLinkBase, repoRoot, type Settings } from './config/settings.js';
import { createKeyring } from './crypto/envelope.js';
import { verifyMasterKeys } from './crypto/key-check.js';
import { guard, guarded } from './db/database-errors.js';
import { migrateDatabase, nativePool, openOrm } from './db/orm.js';
import { CLOCK_SKEW_WARN_MS, databaseClockSkewMs } from './db/deadlines.js';
import { poolDb, sql } from './db/sql.js';
import { startJobQueue, type JobQueue, type QueueDepth, type QueueOptions } from './jobs/queue.js';
import { createMailer } from './mail/mailer.js';
import type { MailBrandOf } from './mail/messages.js';
import { createNotifyService, notifyDelivery, NOTIFY_QUEUE, type NotifyService } from './mail/notify-service.js';
import type { MailMetrics } from './mail/send-each.js';
import { FileObjects } from './files/file-objects.js';
import { openObjectStore } from './files/object-store.js';
import { reconcileFiles, RECONCILE_EVERY_MS, type ReconcileResult } from './files/reconcile.js';
import { KEY_LIFETIME_MS } from './push/idempotency.js';
import { createPushRepository } from './push/push-repository.js';
import { createPushService, type PushService } from './push/push-service.js';
import { createAccessCodes } from './push/access-codes.js';
import type { RequestContext } from './request-context.js';
import { sweep as runSweep } from './push/sweeper.js';
import { createRequestRepository } from './request/request-repository.js';
import { REQUEST_MAIL_QUEUE, requestMailDelivery, requestMailFollower } from './request/request-mail.js';
import { createRequestService, type RequestService } from './request/request-service.js';
import { createUserService, type UserService } from './user/user-service.js';
import { INVITATION_QUEUE, invitationMailDelivery } from './workspace/invitation-mail.js';
import { invitationArea, workspaceArea } from './workspace/workspace-area.js';
import type { WorkspaceService } from './workspace/workspace-service.js';
import type { WorkspaceBrandService } from './workspace/brand-service.js';
import type { InvitationService } from './workspace/invitation-service.js';
import type { Resolver } from './webhooks/targets.js';
import { startWebhookArea, type WebhookArea } from './webhooks/webhook-area.js';
import type { WebhookService } from './webhooks/webhook-service.js';

export type { Settings } from './config/settings.js';
export type { Page } from './push/push-service.js';
export type { Actor, RequestContext } from './request-context.js';
export type { AuditEntry, Push, PushInput, PushOwner, VersionReport } from '@secret-push/sdk/generated';

/** Read-only queries and accounts for the web pages. */
export interface WebServices {
  accounts: AccountService;
  /** The second factor of password accounts (TOTP and recovery codes). */
  twoFactor: TwoFactorService;
  /** Single sign-on with the OpenID Connect provider of PWPUSH_OIDC_*, or null when none is set. */
  singleSignOn: SingleSignOn | null;
  /** Account emails (sign-up confirmation, password reset, notices); absent without an SMTP relay. */
  accountMail?: AccountMail;
  /** A push's record without its secret (a page GET must consume nothing): see PushService.state. */
  pushState(urlToken: string, ctx: RequestContext): Promise<Push | null>;
  /** The same with what the recipient's page must offer first (issue 42): see PushService.pageState. */
  pushPage: PushService['pageState'];
}

/** What `createCore(settings)` returns: the database is connected and migrated. */
export interface Core {
  settings: Settings;
  pushes: PushService;
  /** Requests (issue 24); their moves' email jobs are written by the move followers (request/request-mail.ts). */
  requests: RequestService;
  users: UserService;
  /** Workspaces (issue 41): the caller's list, a new one; optional so that HTTP test doubles need not provide it. */
  workspaces?: WorkspaceService;
  /** A workspace's brand (issue 42): its operations, and what its recipients' pages and mails carry; optional too. */
  workspaceBrands?: WorkspaceBrandService;
  /** A workspace's invitations (issue 41); optional so that HTTP test doubles need not provide it. */
  invitations?: InvitationService;
  /** Emailing a push's link (`notifyEmails`); optional so that HTTP test doubles need not provide it. */
  notify?: NotifyService;
  /** The webhooks of owners (`createWebhook`, …); absent when PWPUSH_WEBHOOKS is false (the routes answer 404). */
  webhooks?: WebhookService;
  /** Accounts and page queries for the web pages; optional so that HTTP test doubles need not provide them. */
  web?: WebServices;
  /** The admin console's operations (/admin, issue 41); optional so that HTTP test doubles need not provide them. */
  admin?: AdminService;
  version(): VersionReport;
  /** Throws when the database is unreachable (for /readyz and the 503 mapping). */
  ping(): Promise<void>;
  /** Runs one sweep now (the core also runs it every `sweepIntervalSeconds` when started with sweeper: true). */
  sweep(now?: Date): Promise<{ erasedPushes: number; erasedFiles: number }>;
  /**
   * File bytes in an object store (PWPUSH_FILE_STORAGE=s3://…); absent when they are kept in PostgreSQL. The HTTP edge
   * streams file parts of creates to it.
   */
  files?: FileObjects;
  /**
   * Reconciles the object store with the rows now (files/reconcile.ts; the sweeper also runs it every 15 minutes);
   * null without an object store.
   */
  reconcileFiles(now?: Date): Promise<ReconcileResult | null>;
  close(): Promise<void>;
}

export interface CoreOptions {
  /** Run the sweeper every `settings.sweepIntervalSeconds` (and once at start). Default false. */
  sweeper?: boolean;
  /**
   * The sweeper's first run (and its interval) waits for this: serve passes its server listening. Building the HTTP
   * app holds the event loop for seconds on a busy machine, and a sweep started before it found its pooled
   * connection's 5 s timer fired first ("sweep failed" at every start). Default: at once.
   */
  sweepAfter?: Promise<unknown>;
  /** Where the sweeper reports counts and failures (never secrets). Default: silent. */
  logger?: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
  /** Size of the connection pool (default 10). */
  poolMax?: number;
  /** Where the sweeper's runs and the pool's use are counted (the server's Prometheus metrics). Default: nowhere. */
  metrics?: CoreMetrics;
  /** The job queue's timing (tests poll faster). */
  queue?: QueueOptions;
  /** Work the queue's jobs in this process (default true; a test turns it off to see jobs wait). */
  jobWorkers?: boolean;
  /** Resolves webhook hosts (default: the system's resolver; tests give their own, e.g. to rebind a name). */
  webhookResolver?: Resolver;
  /**
   * Seconds a webhook delivery claimed by this process is leased to it (default 60): after a crash, it is due again
   * then (a restart test shortens it).
   */
  webhookLeaseSeconds?: number;
  /** Seconds of the webhook send budget's window (default 60: a minute, as its settings say; a test shortens it). */
  webhookBudgetWindowSeconds?: number;
}

/** What the core reports to the metrics (counts and times only). */
export interface CoreMetrics {
  sweepRan(result: { erasedPushes: number; erasedFiles: number; purgedPushes: number }): void;
  sweepFailed(): void;
  /** A reconcile of the object store with the rows ran (its counts), or failed. */
  filesReconciled?(result: ReconcileResult): void;
  filesReconcileFailed?(): void;
  /** Reports the pool's connections on every scrape and times each wait for a connection. */
  observePool(pool: Pool): void;
  /** Emails: messages by outcome, notifications by final status. */
  mail?: MailMetrics;
  /** Reports the job queue's depth on every scrape. */
  observeQueue?(depth: () => Promise<QueueDepth[]>): void;
}

function applicationVersion(): string {
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}

/**
 * What start-up checks of the database before anything is served: the configured keys open what it holds
 * (MasterKeyMismatch otherwise, the ORM closed), and warnings for a superuser connection and a clock apart from ours.
 */
async function checkDatabase(
  db: ReturnType<typeof poolDb>,
  orm: Awaited<ReturnType<typeof openOrm>>,
  keyring: ReturnType<typeof createKeyring>,
  settings: Settings,
  opts: CoreOptions,
): Promise<void> {
  const skewMs = await databaseClockSkewMs(async () => Number((await db.query(CLOCK, {}))[0]!.ms));
  try {
    // Before anything is served: the configured keys must open what the database holds (MasterKeyMismatch otherwise).
    const { unopened } = await verifyMasterKeys(
      db,
      keyring,
      settings.masterKeys.map((k) => k.id),
    );
    if (unopened.length > 0) {
      opts.logger?.warn(
        { key_ids: unopened },
        'data written under these master key ids cannot be read with the configured keys: add the old key to PWPUSH_MASTER_KEY_PREVIOUS if any of it is still needed',
      );
    }
  } catch (error) {
    await orm.close(true);
    throw error;
  }
  if ((await db.query(SUPERUSER, {}))[0]?.superuser) {
    // Names the fix, never the URL or its password.
    opts.logger?.warn(
      { database_role_superuser: true },
      'the server connects to PostgreSQL as a superuser: anything that reaches its connection could run programs and read files on the database host. Connect as a role with only the grants listed in docs/operations.md ("The database role")',
    );
  }
  if (Math.abs(skewMs) > CLOCK_SKEW_WARN_MS) {
    opts.logger?.warn(
      { skew_ms: skewMs },
      "the database's clock differs from this host's: synchronize them (NTP), or a 503 may hide a commit",
    );
  }
}

/** The version report of an instance with these settings. */
export function versionReport(settings: Settings, version = applicationVersion()): VersionReport {
  return reportOf(settings, version, {
    idempotencyKeyHours: KEY_LIFETIME_MS / 3_600_000,
    requests: settings.enableRequests,
    apiKeys: true,
    storageQuotas: {
      anonymousBytesPerHour: settings.anonymousStoragePerHour || null,
      userActiveBytes: settings.userStorageBytes || null,
    },
    emailAutoDispatch: emailAvailable(settings),
    webhooks: { enabled: settings.webhooks.enabled, readReceipts: settings.mail.smtpUrl !== null },
    recipientAccess: { emailCodes: settings.mail.smtpUrl !== null, singleSignOn: settings.oidc !== null },
    workspaces: true,
  });
}

const PING = sql('select 1');
const SUPERUSER = sql<Record<string, never>, { superuser: boolean }>(
  'select rolsuper as superuser from pg_roles where rolname = current_user',
);
const CLOCK = sql<Record<string, never>, { ms: number }>(
  'select (extract(epoch from clock_timestamp()) * 1000)::float8 as ms',
);

export async function createCore(settings: Settings, opts: CoreOptions = {}): Promise<Core> {
  if (!settings.databaseUrl) {
    throw new Error(
      'settings.databaseUrl is not set: start the embedded PostgreSQL (startEmbeddedPostgres) and pass its url',
    );
  }
  const keyring = createKeyring(settings.masterKeys);
  await migrateDatabase(settings.databaseUrl);
  const orm = await openOrm(settings.databaseUrl, { poolMax: opts.poolMax });
  const pool = await nativePool(orm);
  opts.metrics?.observePool(pool);
  const db = poolDb(pool);
  await checkDatabase(db, orm, keyring, settings, opts);
  const files = await openFiles(settings, keyring, opts);
  const repository = createPushRepository(db, files ? (keys) => void files.remove(keys) : undefined);
  const accounts = guarded(createAccountService(orm, db, settings));
  const area = workspaceArea(db, settings, files ? (keys) => void files.remove(keys) : undefined, (facts) =>
    opts.logger?.info(facts, 'workspace deleted'),
  );
  const { workspaces, workspaceBrands, mailBrandOf } = area;
  const jobs = await startJobs(settings, opts, db, repository, keyring, mailBrandOf);
  const hooks = jobs?.webhooks ?? null;
  // Not guarded as a whole: its synchronous checks run inside the push service's own (guarded) create.
  const notify = createNotifyService({ db, settings, pushes: repository, queue: jobs?.queue ?? null });
  // Who may open a push (issue 42): codes go out at once through a mailer of their own (the recipient is waiting).
  const codeMailer = await mailerOf(settings);
  const access = createAccessCodes({ db, repo: repository, settings, mailer: codeMailer, mailBrandOf });
  let requests: RequestService | null = null;
  const invitations = invitationArea(db, settings, area.repository, jobs?.queue ?? null);
  const pushes = guarded(
    createPushService({
      repository,
      settings,
      keyring,
      notify,
      answerRetrieved: (pushId, actor, now) => requests!.answerRetrieved(pushId, actor, now),
      access,
      // A push for specific people can be opened by an emailed code, or by single sign-on as a listed address.
      recipientLists: codeMailer !== null || settings.oidc !== null,
      workspaces,
      ...(hooks ? { events: hooks.events } : {}),
      ...(files ? { files } : {}),
    }),
  );
  requests = guarded(
    createRequestService({
      repository: createRequestRepository(db),
      pushes,
      settings,
      keyring,
      // What follows each move, in its transaction: the email job, then the webhooks' request.* events.
      followers: [requestMailFollower(db, settings, jobs?.queue ?? null), hooks?.requestEvents ?? null].filter(
        (f) => f !== null,
      ),
      ...(files ? { files } : {}),
      ...(workspaces ? { workspaces } : {}),
    }),
  );
  const requestService = requests;
  const accountMail =
    jobs?.queue && settings.mail.smtpUrl !== null ? guarded(createAccountMail(db, jobs.queue, accounts)) : undefined;
  const twoFactor = guarded(createTwoFactorService(db, keyring, settings));
  const ssoFailure = (failure: object) => opts.logger?.warn({ single_sign_on: failure }, 'single sign-on failed');
  const singleSignOn = settings.oidc ? guarded(createSingleSignOn(settings.oidc, db, ssoFailure)) : null;
  const forgetLoginAttempts = async (now: Date) => {
    await accounts.forgetAttempts(now);
    await twoFactor.forgetAttempts(now);
    await accountMail?.forget(now);
    await hooks?.forget(now);
    await securityEvents.forget(db, now);
    await access.forget(now);
  };
  const report = versionReport(settings);
  const reconciler = startReconciler(opts, files ? (now) => reconcileFiles(db, files, now, opts.logger?.warn) : null);
  const sweeper = startSweeper(settings, opts, (now) =>
    runSweep(
      {
        pushes: repository,
        requests: requestService,
        forgetLoginAttempts,
        settings,
        ...(hooks ? { expired: hooks.sweptWithin } : {}),
      },
      now,
    ),
  );
  const users = guarded(createUserService(orm, db));
  return {
    settings,
    pushes,
    requests: requestService,
    users,
    admin: guarded(createAdminService({ db, settings, users, accounts, twoFactor, pushes, deletion: area.deletion })),
    workspaces,
    workspaceBrands,
    invitations,
    notify: { ...notify, notify: (...args) => guard(() => notify.notify(...args)) },
    ...(hooks?.service ? { webhooks: guarded(hooks.service) } : {}),
    web: {
      accounts,
      twoFactor,
      singleSignOn,
      pushState: pushes.state,
      pushPage: pushes.pageState,
      ...(accountMail ? { accountMail } : {}),
    },
    version: () => structuredClone(report),
    ping: () => guard(async () => void (await db.query(PING, {}))),
    sweep: async (now?: Date) => {
      const { erasedPushes, erasedFiles } = await sweeper.once(now);
      return { erasedPushes, erasedFiles };
    },
    ...(files ? { files } : {}),
    reconcileFiles: reconciler.once,
    close: async () => {
      await sweeper.stop();
      await reconciler.stop();
      files?.store.close();
      codeMailer?.close();
      await jobs?.stop();
      // The anonymous quota's unused leases go back to their windows (address-leases.ts), while the pool is open.
      await repository.returnQuotaLeases();
      await orm.close(true);
    },
  };
}

/**
 * The background work, when something needs it: the job queue of emails and its workers (email needs an SMTP relay),
 * and the webhooks area with its dispatcher (webhooks on, or read receipts by email). Null when neither (nothing is
 * enqueued then). A server with webhooks but no relay does not start (or load) the job queue: webhook deliveries are
 * sent from their own table (webhooks/dispatcher.ts).
 */
/** A mailer on the SMTP relay of PWPUSH_SMTP_URL, or null without one. */
async function mailerOf(settings: Settings) {
  return settings.mail.smtpUrl === null ? null : await createMailer(settings.mail.smtpUrl, settings.mail.from);
}

/**
 * Workspaces (issue 41) and their brands (issue 42), with the brand of the mails of a workspace's pushes and
 * requests (`mailBrandOf`, which the mail jobs and the access codes take).
 */
async function startJobs(
  settings: Settings,
  opts: CoreOptions,
  db: ReturnType<typeof poolDb>,
  pushes: ReturnType<typeof createPushRepository>,
  keyring: ReturnType<typeof createKeyring>,
  mailBrandOf: MailBrandOf,
): Promise<{ queue: JobQueue | null; webhooks: WebhookArea | null; stop(): Promise<void> } | null> {
  // Anything that sends mail needs the relay: pushes' links (when PWPUSH_NOTIFY_BY_EMAIL allows) and account emails.
  if (settings.mail.smtpUrl === null && !settings.webhooks.enabled) return null;
  if (settings.mail.smtpUrl !== null) mailLinkBase(settings); // refuses a relay without PWPUSH_PUBLIC_BASE_URL
  const mailer = await mailerOf(settings);
  const queue = mailer
    ? await startJobQueue(settings.databaseUrl!, {
        ...opts.queue,
        onError: (error) => opts.logger?.warn({ err: { name: error.name } }, 'job queue error'),
      })
    : null;
  if (mailer && queue) {
    for (const name of [NOTIFY_QUEUE, ACCOUNT_QUEUE, REQUEST_MAIL_QUEUE, INVITATION_QUEUE]) {
      await queue.define(name, {
        attempts: settings.mail.attempts,
        retryDelaySeconds: settings.mail.retrySeconds,
        retryDelayMaxSeconds: 3600,
        expireInSeconds: 300,
      });
    }
    if (opts.jobWorkers !== false) {
      // Up to 4 messages side by side, fetched again at once while a burst lasts (one job per fetch waited a poll,
      // 2 s, between messages).
      const batch = { batchSize: 4 };
      const metrics = opts.metrics?.mail;
      await queue.work(NOTIFY_QUEUE, notifyDelivery({ db, settings, pushes, mailer, metrics, mailBrandOf }), batch);
      await queue.work(ACCOUNT_QUEUE, accountMailDelivery(db, settings, mailer), batch);
      await queue.work(REQUEST_MAIL_QUEUE, requestMailDelivery({ db, settings, mailer, metrics, mailBrandOf }), batch);
      await queue.work(INVITATION_QUEUE, invitationMailDelivery(db, settings, mailer), batch);
    }
  }
  const webhooks =
    settings.webhooks.enabled || mailer
      ? await startWebhookArea({
          db,
          settings,
          keyring,
          queue,
          mailer,
          workers: opts.jobWorkers !== false,
          ...(opts.queue?.pollingIntervalSeconds !== undefined
            ? { pollSeconds: opts.queue.pollingIntervalSeconds }
            : {}),
          ...(opts.webhookLeaseSeconds !== undefined ? { leaseSeconds: opts.webhookLeaseSeconds } : {}),
          ...(opts.webhookBudgetWindowSeconds !== undefined
            ? { budgetWindowSeconds: opts.webhookBudgetWindowSeconds }
            : {}),
          ...(opts.webhookResolver ? { resolve: opts.webhookResolver } : {}),
          onError: (error) =>
            opts.logger?.warn({ err: { name: (error as Error | undefined)?.name } }, 'webhook dispatcher error'),
        })
      : null;
  opts.metrics?.observeQueue?.(async () => [
    ...(queue ? await queue.depth() : []),
    ...(webhooks ? [await webhooks.depth()] : []),
  ]);
  return {
    queue,
    webhooks,
    async stop() {
      await webhooks?.stop();
      await queue?.stop();
      mailer?.close();
    },
  };
}

/**
 * The object store of file bytes, when PWPUSH_FILE_STORAGE names one (the AWS SDK is loaded only then). A store that
 * does not answer at start-up is only a warning: text pushes do not need it, and creates with files answer 503 until
 * it is back.
 */
async function openFiles(
  settings: Settings,
  keyring: ReturnType<typeof createKeyring>,
  opts: CoreOptions,
): Promise<FileObjects | undefined> {
  if (settings.fileStorage.kind !== 's3') return undefined;
  const store = await openObjectStore(settings.fileStorage);
  const files = new FileObjects(store, keyring, opts.logger);
  try {
    await store.exists(files.keyFor('push', 'start-up-check'));
  } catch (error) {
    opts.logger?.warn(
      {
        file_store: store.location,
        err: { name: (error as Error).name, reason: (error as { reason?: string }).reason },
      },
      'the file store does not answer: creates with files answer 503 until it does',
    );
  }
  return files;
}

/** Reconciles the object store every RECONCILE_EVERY_MS when the sweeper runs (never two at a time). */
function startReconciler(opts: CoreOptions, reconcile: ((now: Date) => Promise<ReconcileResult>) | null) {
  let running: Promise<unknown> | null = null;
  const once = async (now?: Date): Promise<ReconcileResult | null> => {
    if (!reconcile) return null;
    let result: ReconcileResult;
    try {
      result = await guard(() => reconcile(now ?? new Date()));
    } catch (error) {
      opts.metrics?.filesReconcileFailed?.();
      throw error;
    }
    opts.metrics?.filesReconciled?.(result);
    if (result.objectsWithoutRow + result.rowsWithoutObject > 0) opts.logger?.info(result, 'file store reconciled');
    return result;
  };
  const timer =
    opts.sweeper && reconcile
      ? setInterval(() => {
          running ??= once()
            .catch((err: unknown) =>
              opts.logger?.error({ err: { name: (err as Error).name } }, 'file store reconcile failed'),
            )
            .finally(() => (running = null));
        }, RECONCILE_EVERY_MS)
      : null;
  timer?.unref();
  return {
    once,
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}

/** Runs `sweepOnce` every interval when asked (never two at a time), reporting counts and failures. */
function startSweeper(
  settings: Settings,
  opts: CoreOptions,
  sweepOnce: (now: Date) => Promise<{ erasedPushes: number; erasedFiles: number; purgedPushes: number }>,
) {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<unknown> | null = null;
  let closed = false;
  const once = (now?: Date) =>
    guard(async () => {
      let result: Awaited<ReturnType<typeof sweepOnce>>;
      try {
        result = await sweepOnce(now ?? new Date());
      } catch (err) {
        opts.metrics?.sweepFailed();
        throw err;
      }
      opts.metrics?.sweepRan(result);
      if (result.erasedPushes + result.erasedFiles + result.purgedPushes > 0) opts.logger?.info(result, 'sweep');
      return result;
    });
  const tick = () => {
    if (running || closed) return;
    running = once()
      .catch((err: unknown) => {
        opts.logger?.error(
          { err: err instanceof Error ? { name: err.name, code: (err as { code?: string }).code } : {} },
          'sweep failed',
        );
      })
      .finally(() => {
        running = null;
      });
  };
  if (opts.sweeper) {
    void (opts.sweepAfter ?? Promise.resolve()).then(() => {
      if (closed) return;
      timer = setInterval(tick, settings.sweepIntervalSeconds * 1000);
      timer.unref();
      tick();
    });
  }
  return {
    once,
    async stop() {
      if (closed) return;
      closed = true;
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
