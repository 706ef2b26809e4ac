/**
 * TEST DOUBLE — an in-memory Core for unit tests of the HTTP layer only (routing, validation mapping, auth,
 * headers). It keeps pushes in a Map instead of PostgreSQL and compares passphrases in plain text, but applies the
 * same push rules as the real Core and the stateful mock (`@secret-push/rules`). The integration tests in
 * server/test/api use the real Core on real PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import {
  ApiError,
  checkPushSchema,
  isExpired,
  isOwner,
  lastViewAnswer,
  newPushState,
  normalizePushInput,
  notFound,
  ownerRecord,
  PAGE_SIZE,
  pushRecord,
  requireAuditCaller,
  requireAuditOwner,
  requireCallerAllowed,
  requireListCaller,
  requireMayCreate,
  requireMayExpire,
  type PushState,
  type SchemaValidPushInput,
  validationFailed,
} from '@secret-push/rules';
import {
  versionReport,
  type AuditEntry,
  type Core,
  type PushOwner,
  type RequestContext,
  type Settings,
} from '../../src/core.js';
import { pushSchema } from '../../src/push/push-schema.js';

interface Stored {
  state: PushState;
  payload: string | null;
  passphrase: string | null;
  name: string;
  note: string;
  audit: AuditEntry[];
}

type MemoryCore = Core & { down: boolean; check(): void };

export function memoryCore(
  settings: Settings,
  users: { userId: string; email: string; token: string }[] = [],
): MemoryCore {
  const pushes = new Map<string, Stored>();
  const base = (ctx: RequestContext) => settings.publicBaseUrl ?? ctx.baseUrl;
  const find = (token: string): Stored => {
    const s = pushes.get(token);
    if (!s) throw notFound();
    return s;
  };
  const log = (s: Stored, kind: AuditEntry['kind'], ctx: RequestContext) =>
    s.audit.push({
      kind,
      ip: ctx.actor.ip,
      user_agent: ctx.actor.userAgent,
      referrer: ctx.actor.referrer,
      created_at: new Date().toISOString(),
    });

  const create = async (input: SchemaValidPushInput, ctx: RequestContext): Promise<PushOwner> => {
    core.check();
    const now = new Date();
    const valid = normalizePushInput(input, settings);
    const state = newPushState(
      valid,
      { urlToken: randomBytes(15).toString('hex').slice(0, 24), ownerId: ctx.actor.userId },
      now,
    );
    const stored: Stored = {
      state,
      payload: valid.payload,
      passphrase: valid.passphrase,
      name: valid.name,
      note: valid.note,
      audit: [],
    };
    pushes.set(state.urlToken, stored);
    log(stored, 'creation', ctx);
    return ownerRecord(state, now, base(ctx), stored);
  };

  const core: MemoryCore = {
    down: false,
    settings,
    check() {
      if (core.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    },
    pushes: {
      async create(input, ctx) {
        requireMayCreate(settings, ctx.actor.userId, input);
        return create(checkPushSchema(pushSchema(), input), ctx);
      },
      async createValidated(input, ctx) {
        requireMayCreate(settings, ctx.actor.userId, input);
        return create(input, ctx);
      },
      async retrieve(token, passphrase, ctx) {
        core.check();
        requireCallerAllowed(settings, ctx.actor.userId);
        const now = new Date();
        const s = find(token);
        if (isExpired(s.state, now)) return { ...pushRecord(s.state, now, base(ctx)), payload: null, files: [] };
        if (s.passphrase !== null && passphrase !== s.passphrase) {
          throw new ApiError(passphrase ? 'passphrase_incorrect' : 'passphrase_required', 'Passphrase needed.');
        }
        if (isOwner(s.state, ctx.actor.userId))
          return { ...pushRecord(s.state, now, base(ctx)), payload: s.payload, files: [] };
        const payload = s.payload;
        s.state.viewsUsed += 1;
        if (s.state.viewsUsed >= s.state.expireAfterViews) {
          Object.assign(s.state, { expired: true, expiredOn: now });
          s.payload = null;
        }
        log(s, 'view', ctx);
        return { ...pushRecord(lastViewAnswer(s.state), now, base(ctx)), payload, files: [] };
      },
      async requestAccessCode(token) {
        core.check();
        find(token);
        // This double sends no mail, so no push of it has recipients (the real core: push/access-codes.ts).
        throw validationFailed({ email: ['cannot be used for this push'] });
      },
      async preview(token, ctx) {
        core.check();
        const record = pushRecord(find(token).state, new Date(), base(ctx));
        return { url: record.html_url, client_encryption: record.client_encryption };
      },
      async expire(token, ctx) {
        core.check();
        const s = find(token);
        requireMayExpire(s.state, ctx.actor.userId);
        const now = new Date();
        if (!isExpired(s.state, now)) Object.assign(s.state, { expired: true, deleted: true, expiredOn: now });
        return pushRecord(s.state, now, base(ctx));
      },
      async audit(token, page, ctx) {
        core.check();
        requireAuditCaller(ctx.actor.userId);
        const s = find(token);
        requireAuditOwner(s.state, ctx.actor.userId);
        return {
          items: s.audit.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE),
          total: s.audit.length,
          page,
          perPage: PAGE_SIZE,
        };
      },
      async list(which, page, ctx) {
        core.check();
        requireListCaller(ctx.actor.userId);
        const now = new Date();
        const mine = [...pushes.values()]
          .filter((s) => isOwner(s.state, ctx.actor.userId) && isExpired(s.state, now) === (which === 'expired'))
          .reverse()
          .map((s) => ownerRecord(s.state, now, base(ctx), s));
        return {
          items: mine.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE),
          total: mine.length,
          page,
          perPage: PAGE_SIZE,
        };
      },
      async downloadFile() {
        throw new ApiError('invalid_link', 'The double has no files.');
      },
      async state(token, ctx) {
        const s = pushes.get(token);
        return s ? pushRecord(s.state, new Date(), base(ctx)) : null;
      },
      async pageState(token, ctx) {
        const s = pushes.get(token);
        if (!s) return null;
        // The double has no gates (a push for specific people opens for none): only whether the page must ask.
        const access = { networkRefused: false, needsProof: s.state.recipientEmails.length > 0 };
        return { push: pushRecord(s.state, new Date(), base(ctx)), access, workspaceId: null };
      },
      async createAnswer(): Promise<never> {
        throw new Error('not in the double');
      },
    },
    // Requests run only on the real Core (server/test/api/requests.test.ts); the HTTP-layer tests do not reach them.
    requests: new Proxy({} as Core['requests'], {
      get: () => () => Promise.reject(new Error('not in the double')),
    }),
    users: {
      async authenticate(token: string, email?: string) {
        core.check();
        const user = users.find((u) => u.token === token && (email === undefined || u.email === email));
        return user ? { userId: user.userId, email: user.email } : null;
      },
      async createUser(): Promise<{ userId: string; token: string }> {
        throw new Error('not in the double');
      },
      async listUsers(): Promise<never> {
        throw new Error('not in the double');
      },
      async revokeToken(): Promise<never> {
        throw new Error('not in the double');
      },
      async userIdOf(): Promise<never> {
        throw new Error('not in the double');
      },
      async deleteUserRecords(): Promise<never> {
        throw new Error('not in the double');
      },
      async endEverything(): Promise<never> {
        throw new Error('not in the double');
      },
      async rotateToken(): Promise<string> {
        throw new Error('not in the double');
      },
      keys: {
        async authenticate() {
          return null;
        },
        async create(): Promise<never> {
          throw new Error('not in the double');
        },
        async listOfWorkspace(): Promise<never> {
          throw new Error('not in the double');
        },
        async ownerOf(): Promise<never> {
          throw new Error('not in the double');
        },
        async list(): Promise<never> {
          throw new Error('not in the double');
        },
        async revoke(): Promise<never> {
          throw new Error('not in the double');
        },
      },
    },
    version() {
      // The real report, built from the same settings (the double replaces only storage, not this pure function).
      return versionReport(settings);
    },
    async ping() {
      core.check();
    },
    async sweep() {
      return { erasedPushes: 0, erasedFiles: 0 };
    },
    // Files in memory, never in an object store.
    async reconcileFiles() {
      return null;
    },
    async close() {},
  };
  return core;
}
