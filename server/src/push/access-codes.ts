/**
 * Who may open a push (issue 42), on the server: the network gate and the specific people's one-time codes.
 *
 * - `requestAccessCode`: a recipient names an address; when it is one of the push's, an 8-digit code is emailed to
 *   it through the instance's mailer, right after the answer (not through the queue: the recipient is waiting, and
 *   the answer's timing must not tell a listed address from another). Every request is a row of
 *   `push_access_codes` (the code's scrypt hash, or null when nothing was sent), which the limits per push and per
 *   client address count; the answer is the same whether or not the address is listed.
 * - `gate`: before a retrieval spends a view (push-service.ts `retrieve`): the client's address against the push's
 *   ranges (403 `network_not_allowed`, logged `failed_view`), then the code (passphrase-gate.ts `checkAccessCode`:
 *   the passphrase's places and failure count), or a page visitor signed in by single sign-on as a listed address.
 *   A right code is used up only once every gate has passed, the passphrase's too (`AccessPass.useCode`, a
 *   conditional UPDATE: single use, across processes): a wrong passphrase leaves the code to the next try, within its
 *   lifetime and the attempts limit.
 *
 * Its SQL is here, not in push-repository.ts: these statements touch only `push_access_codes`.
 */
import { randomInt } from 'node:crypto';
import type { Push } from '@secret-push/sdk/generated';
import {
  ACCESS_CODE_DIGITS,
  ACCESS_CODE_SECONDS,
  ACCESS_CODE_WINDOW_SECONDS,
  ACCESS_CODES_PER_CLIENT,
  ACCESS_CODES_PER_PUSH,
  ApiError,
  ERRORS,
  FAILED_VIEW_DEDUPE_MS,
  inAllowedNetworks,
  isExpired,
  isOwner,
  isPlainAddress,
  isRecipient,
  readAccessCode,
  validationFailed,
} from '@secret-push/rules';
import type { Settings } from '../config/settings.js';
import { clientAddressKey } from '../client-address.js';
import { hashPassphrase, verifyPassphrase } from '../crypto/passphrase.js';
import { column, defineTable } from '../db/table.js';
import { sql, type Db } from '../db/sql.js';
import type { Mailer } from '../mail/mailer.js';
import { accessCodeMessage, type MailBrand, type MailBrandOf } from '../mail/messages.js';
import type { RequestContext } from '../request-context.js';
import { checkAccessCode } from './passphrase-gate.js';
import type { PushRepository } from './push-repository.js';
import type { PushRow } from './push-tables.js';

/** One `requestAccessCode`: the code's hash when one was sent, else null (counted all the same). */
interface AccessCodeRow {
  id: string;
  pushId: string;
  clientScope: string;
  codeHash: string | null;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

export const PUSH_ACCESS_CODES = defineTable<AccessCodeRow>('push_access_codes', {
  id: column.bigint('id'),
  pushId: column.text('push_id'),
  clientScope: column.text('client_scope'),
  codeHash: column.textOrNull('code_hash'),
  createdAt: column.date('created_at'),
  expiresAt: column.date('expires_at'),
  usedAt: column.dateOrNull('used_at'),
});

const S = {
  /**
   * A request counted and recorded in one statement, under the push's row lock (so a push's requests are counted one
   * after the other on every instance); refused (no row) when either limit is reached. The client's count is read
   * without a lock: concurrent requests of one client for different pushes may pass it by a few.
   */
  record: sql<
    {
      pushId: string;
      clientScope: string;
      codeHash: string | null;
      now: Date;
      expiresAt: Date;
      since: Date;
      perPush: number;
      perClient: number;
    },
    { id: string | null; push_full: boolean; push_reset_ms: number | null; client_reset_ms: number | null }
  >(
    `with locked as (select id from pushes where id = :pushId::uuid for update),
     push_count as (select count(*) as n, min(created_at) as first from push_access_codes
       where push_id = :pushId::uuid and created_at > :since and exists (select 1 from locked)),
     client_count as (select count(*) as n, min(created_at) as first from push_access_codes
       where client_scope = :clientScope and created_at > :since),
     added as (
       insert into push_access_codes (push_id, client_scope, code_hash, created_at, expires_at)
       select :pushId::uuid, :clientScope::text, :codeHash::text, :now::timestamptz, :expiresAt::timestamptz
       where (select n from push_count) < :perPush::int and (select n from client_count) < :perClient::int
       returning id
     )
     select (select id from added) as id, (select n from push_count) >= :perPush::int as push_full,
       (extract(epoch from (select first from push_count) - :since::timestamptz) * 1000)::float8 as push_reset_ms,
       (extract(epoch from (select first from client_count) - :since::timestamptz) * 1000)::float8 as client_reset_ms`,
  ),
  live: sql<{ pushId: string; now: Date }, { id: string; code_hash: string }>(
    `select id, code_hash from push_access_codes
     where push_id = :pushId::uuid and code_hash is not null and used_at is null and expires_at > :now
     order by created_at desc limit 10`,
  ),
  use: sql<{ id: string; now: Date }, { id: string }>(
    `update push_access_codes set used_at = :now where id = :id and used_at is null and expires_at > :now returning id`,
  ),
  forget: sql<{ before: Date }>(`delete from push_access_codes where created_at < :before`),
};

/** What a retrieval brings for the gate: the code it presents, and the address a page visitor signed in with. */
export interface AccessProof {
  accessCode?: string | undefined;
  /** A verified email of the page's signed-in user (single sign-on), if any. */
  signedInEmail?: string | null;
}

export interface AccessCodes {
  /**
   * `requestAccessCode`: 202's `expires_in`; 404, 422, 429 or 503 as the contract says. `locale`: the language of the
   * page the recipient asked from (the mail's; null, English).
   */
  request(
    row: PushRow | null,
    email: string,
    ctx: RequestContext,
    locale: string | null,
  ): Promise<{ expires_in: number }>;
  /**
   * The gates of a retrieval, before anything is claimed; passes at once for a push without lists and its owner. A
   * right code is not used up yet: the caller does so with the pass once the passphrase's gate has passed too.
   */
  gate(row: PushRow, proof: AccessProof, ctx: RequestContext, now: Date, deadline: Date): Promise<AccessPass>;
  /** The sweeper's: rows older than a day go. */
  forget(now: Date): Promise<void>;
}

/** A retrieval through the gates: `useCode` uses up the code it presented, if any (401 when another used it first). */
interface AccessPass {
  useCode(): Promise<void>;
}

const NO_CODE: AccessPass = { useCode: async () => undefined };

/** What a recipient's page must offer before its reveal step, decided from the push's row alone (writes nothing). */
export interface PageAccess {
  /** The client's address lies outside the push's ranges: the page refuses at once, and nothing is spent. */
  networkRefused: boolean;
  /** The push names people and this visitor has not shown to be one: the page asks for a code (or a sign-in). */
  needsProof: boolean;
}

/** A push as its recipient's page sees it: its record, what to ask first, its workspace (whose brand it carries). */
export interface PageState {
  push: Push;
  access: PageAccess;
  workspaceId: number | null;
}

/** `PageAccess` of a visitor: the owner passes both gates; `signedInEmail` as `AccessProof.signedInEmail`. */
export function pageAccessOf(row: PushRow, ctx: RequestContext, signedInEmail: string | null): PageAccess {
  if (isOwner(row, ctx.actor.userId)) return { networkRefused: false, needsProof: false };
  return {
    networkRefused: row.allowedNetworks.length > 0 && !inAllowedNetworks(ctx.actor.ip, row.allowedNetworks),
    needsProof:
      row.recipientEmails.length > 0 && !(signedInEmail !== null && isRecipient(signedInEmail, row.recipientEmails)),
  };
}

function newCode(): string {
  return String(randomInt(0, 10 ** ACCESS_CODE_DIGITS)).padStart(ACCESS_CODE_DIGITS, '0');
}

/** The code's message in the recipient's language, with a Message-ID of its own row. */
function codeMessage(
  code: string,
  settings: Pick<Settings, 'mail'>,
  id: string,
  locale: string | null,
  brand: MailBrand,
) {
  const instance = settings.mail.instanceName;
  const { subject, text, html } = accessCodeMessage(locale, {
    code,
    instanceName: instance,
    minutes: ACCESS_CODE_SECONDS / 60,
    brand,
  });
  return {
    subject: subject.replace(/[\r\n]+/g, ' '),
    text,
    html,
    messageId: `<${id}@access-code.${instance.replace(/[^A-Za-z0-9]/g, '') || 'secretpush'}>`,
  };
}

function notFound(): ApiError {
  return new ApiError('not_found', 'No push has this token.');
}

function limited(resetMs: number | null): ApiError {
  return new ApiError('rate_limited', 'Too many access code requests; try again later.', {
    retryAfterSeconds: Math.max(1, Math.ceil(Number(resetMs ?? 60_000) / 1000)),
  });
}

export function createAccessCodes(deps: {
  db: Db;
  repo: PushRepository;
  settings: Pick<Settings, 'mail' | 'brand' | 'passphraseAttemptsPerMinute'>;
  mailer: Mailer | null;
  /** The brand of the code's mail: the push's workspace's, else the instance's (absent: the instance's). */
  mailBrandOf?: MailBrandOf;
}): AccessCodes {
  const { db, repo, settings, mailer } = deps;
  const mailBrandOf: MailBrandOf = deps.mailBrandOf ?? (() => Promise.resolve(settings.brand));

  /** The id of the push's live code that `code` is, or null. */
  async function liveCodeOf(row: PushRow, code: string, now: Date): Promise<string | null> {
    if (code === '') return null;
    for (const live of await db.query(S.live, { pushId: row.id, now })) {
      if (await verifyPassphrase(code, live.code_hash)) return live.id;
    }
    return null;
  }

  /** The pass of a right code: it is used up when the retrieval calls it, if no other retrieval used it first. */
  function codePass(id: string, now: Date): AccessPass {
    return {
      async useCode() {
        if ((await db.query(S.use, { id, now })).length === 1) return;
        throw new ApiError('access_code_incorrect', ERRORS.access_code_incorrect.message);
      },
    };
  }

  return {
    async request(row, email, ctx, locale) {
      if (!row) throw notFound();
      const now = ctx.now ?? new Date();
      const address = email.trim();
      if (!isPlainAddress(address)) throw validationFailed({ email: ['is invalid'] });
      if (row.recipientEmails.length === 0 || isExpired(row, now) || !mailer) {
        throw validationFailed({ email: ['cannot be used for this push'] });
      }
      // Mailed to the address as the sender wrote it.
      const listed = row.recipientEmails.find((r) => isRecipient(address, [r])) ?? null;
      const code = listed ? newCode() : null;
      const [recorded] = await db.query(S.record, {
        pushId: row.id,
        clientScope: clientAddressKey(ctx.actor.ip),
        // Hashed either way (the same time for a listed address and another); only a listed one's hash is kept.
        codeHash: await hashPassphrase(code ?? newCode()).then((hash) => (code ? hash : null)),
        now,
        expiresAt: new Date(now.getTime() + ACCESS_CODE_SECONDS * 1000),
        since: new Date(now.getTime() - ACCESS_CODE_WINDOW_SECONDS * 1000),
        perPush: ACCESS_CODES_PER_PUSH,
        perClient: ACCESS_CODES_PER_CLIENT,
      });
      if (!recorded?.id) {
        // The window's first request leaves it that long after `since`: then a place frees.
        throw limited(recorded?.push_full ? recorded.push_reset_ms : (recorded?.client_reset_ms ?? null));
      }
      // Sent after the answer, so that its time says nothing of whether the address is listed (both paths hashed
      // a code above). A code the relay refused is used up at once: nobody can have received it.
      if (code && listed) {
        const id = recorded.id;
        void mailBrandOf(row.workspaceId)
          .then((brand) => mailer.send({ to: listed, ...codeMessage(code, settings, id, locale, brand) }))
          .then(async (sent) => {
            if (!sent.ok) await db.query(S.use, { id, now: new Date() }).catch(() => undefined);
          });
      }
      return { expires_in: ACCESS_CODE_SECONDS };
    },

    async gate(row, proof, ctx, now, deadline) {
      if (isOwner(row, ctx.actor.userId)) return NO_CODE;
      if (row.allowedNetworks.length > 0 && !inAllowedNetworks(ctx.actor.ip, row.allowedNetworks)) {
        await repo.recordFailedView(row.id, ctx.actor, now, FAILED_VIEW_DEDUPE_MS, deadline);
        throw new ApiError('network_not_allowed', 'This push cannot be opened from your network.');
      }
      if (row.recipientEmails.length === 0) return NO_CODE;
      if (proof.signedInEmail && isRecipient(proof.signedInEmail, row.recipientEmails)) return NO_CODE;
      // A code that cannot be one (letters, too short) is a wrong code, counted as one; none at all is asked for.
      const presented = proof.accessCode ? (readAccessCode(proof.accessCode) ?? '') : null;
      const found: { id: string | null } = { id: null };
      const verify = async (code: string) => (found.id = await liveCodeOf(row, code, now)) !== null;
      await checkAccessCode(row, presented, verify, {
        repo,
        limit: settings.passphraseAttemptsPerMinute,
        actor: ctx.actor,
        now,
        deadline,
      });
      return found.id === null ? NO_CODE : codePass(found.id, now);
    },

    async forget(now) {
      await db.query(S.forget, { before: new Date(now.getTime() - 86_400_000) });
    },
  };
}
