/**
 * TEST DOUBLE — an in-memory Core for unit tests of the HTTP layer only (routing, validation mapping, auth,
 * headers). It is deliberately simple and NOT the domain: the integration tests in server/test/api use the real
 * Core on real PostgreSQL.
 */
import { versionReport } from '../../src/domain/index.js';
import { randomBytes } from 'node:crypto';
import {
  DomainError,
  type AuditEntry,
  type Core,
  type Page,
  type Push,
  type PushOwner,
  type PushRetrieval,
  type RequestContext,
  type Settings,
} from '../../src/domain/contract.js';

interface Stored {
  owner: PushOwner;
  payload: string | null;
  passphrase: string | null;
  ownerId: string | null;
  views: number;
  audit: AuditEntry[];
}

type MemoryCore = Core & { down: boolean; check(): void; record(s: Stored): Push };

export function memoryCore(
  settings: Settings,
  users: { userId: string; email: string; token: string }[] = [],
): MemoryCore {
  const pushes = new Map<string, Stored>();
  const core: MemoryCore = {
    down: false,
    settings,
    check() {
      if (core.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    },
    record(s: Stored): Push {
      const { name: _n, note: _o, ...rest } = s.owner;
      return rest;
    },
    pushes: {
      async create(input, ctx: RequestContext) {
        core.check();
        const now = new Date();
        const token = randomBytes(15).toString('hex').slice(0, 24);
        const days = input.expire_after_days ?? settings.expireAfterDays.default;
        const views = input.expire_after_views ?? settings.expireAfterViews.default;
        const kind = input.kind ?? (input.files?.length ? 'file' : 'text');
        if (kind === 'file' && !ctx.actor.userId && settings.filesRequireAuth) {
          throw new DomainError('authentication_required', 'File pushes need an API token.');
        }
        const owner: PushOwner = {
          url_token: token,
          kind,
          expired: false,
          expired_on: null,
          deleted: false,
          created_at: now.toISOString(),
          updated_at: now.toISOString(),
          expires_at: new Date(now.getTime() + days * 86_400_000).toISOString(),
          expire_after_days: days,
          expire_after_views: views,
          days_remaining: days,
          views_remaining: views,
          deletable_by_viewer: input.deletable_by_viewer ?? settings.deletableByViewerDefault,
          retrieval_step: input.retrieval_step ?? settings.retrievalStepDefault,
          passphrase_protected: Boolean(input.passphrase),
          json_url: `${ctx.baseUrl}/api/v2/pushes/${token}`,
          html_url: `${ctx.baseUrl}/p/${token}`,
          name: input.name ?? '',
          note: input.note ?? '',
        };
        const audit: AuditEntry[] = [
          { kind: 'creation', ip: ctx.actor.ip, user_agent: ctx.actor.userAgent, referrer: ctx.actor.referrer, created_at: owner.created_at },
        ];
        pushes.set(token, { owner, payload: input.payload ?? '', passphrase: input.passphrase ?? null, ownerId: ctx.actor.userId, views: 0, audit });
        return owner;
      },
      async retrieve(token, passphrase, ctx): Promise<PushRetrieval> {
        core.check();
        const s = pushes.get(token);
        if (!s) throw new DomainError('not_found', 'That push does not exist.');
        if (s.owner.expired) return { ...core.record(s), payload: null, files: [] };
        if (s.passphrase !== null && passphrase !== s.passphrase) {
          throw new DomainError(passphrase ? 'passphrase_incorrect' : 'passphrase_required', 'Passphrase needed.');
        }
        s.views += 1;
        s.owner.views_remaining = s.owner.expire_after_views - s.views;
        const answer: PushRetrieval = { ...core.record(s), payload: s.payload, files: [] };
        if (s.owner.views_remaining === 0) s.owner.expired = true;
        void ctx;
        return answer;
      },
      async preview(token) {
        core.check();
        const s = pushes.get(token);
        if (!s) throw new DomainError('not_found', 'That push does not exist.');
        return { url: s.owner.html_url };
      },
      async expire(token, ctx): Promise<Push> {
        core.check();
        const s = pushes.get(token);
        if (!s) throw new DomainError('not_found', 'That push does not exist.');
        if (s.ownerId !== ctx.actor.userId && !s.owner.deletable_by_viewer) {
          throw new DomainError(ctx.actor.userId ? 'forbidden' : 'authentication_required', 'Not yours.');
        }
        s.owner.expired = true;
        s.owner.deleted = true;
        s.owner.expired_on = new Date().toISOString();
        return core.record(s);
      },
      async audit(token, page, ctx): Promise<Page<AuditEntry>> {
        core.check();
        const s = pushes.get(token);
        if (!s) throw new DomainError('not_found', 'That push does not exist.');
        if (s.ownerId !== ctx.actor.userId) throw new DomainError('forbidden', 'Not yours.');
        return { items: s.audit.slice((page - 1) * 50, page * 50), total: s.audit.length, page, perPage: 50 };
      },
      async list(state, page, ctx): Promise<Page<PushOwner>> {
        core.check();
        const mine = [...pushes.values()]
          .filter((s) => s.ownerId === ctx.actor.userId && s.owner.expired === (state === 'expired'))
          .map((s) => s.owner)
          .reverse();
        return { items: mine.slice((page - 1) * 50, page * 50), total: mine.length, page, perPage: 50 };
      },
      async downloadFile() {
        throw new DomainError('invalid_link', 'The double has no files.');
      },
    },
    users: {
      async authenticate(token: string, email?: string) {
        core.check();
        const user = users.find((u) => u.token === token && (email === undefined || u.email === email));
        return user ? { userId: user.userId, email: user.email } : null;
      },
      async createUser(): Promise<{ userId: string; token: string }> {
        throw new Error('not in the double');
      },
      async rotateToken(): Promise<string> {
        throw new Error('not in the double');
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
    async close() {},
  };
  return core;
}
