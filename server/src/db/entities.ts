/**
 * The tables that go through MikroORM's entity API: users and their API tokens (see ./README.md for what the ORM is
 * and is not here). The schema itself is owned by the hand-written migrations in ./migrations; these definitions
 * must stay in step with them (server/test/domain/schema.test.ts checks that). The push tables are described by
 * server/src/push/push-tables.ts, the sign-in attempts by server/src/account/account-service.ts.
 *
 * Passwords are stored only as scrypt hashes; API tokens only as SHA-256 digests.
 */
import { defineEntity, p } from '@mikro-orm/core';

export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.uuid().primary(),
    email: p.string().length(320).unique(),
    passwordHash: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    /** Web sessions carry it; bumping it (sign-out) ends every session signed with the old value. */
    sessionVersion: p.integer().default(1),
    /** The TOTP secret as an envelope under the master key (account/two-factor.ts); null: no second factor. */
    totpSecret: p.text().nullable(),
    /** When the second factor was confirmed; null while an enrolment is pending. */
    totpEnabledAt: p.datetime().nullable(),
    /** The time step of the last TOTP code accepted: a code is accepted once. */
    totpLastStep: p.bigint('number').nullable(),
    /**
     * When the owner proved the address (a sign-up or reset link, the provider's verified email) or the operator made
     * the account; null: nobody proved it (a sign-up without email), and its first proof claims it (account/claim.ts).
     */
    emailConfirmedAt: p.datetime().nullable(),
    /** The operator made the account an administrator (`npm run users -- grant-admin`); see also PWPUSH_ADMIN_EMAILS. */
    admin: p.boolean().default(false),
    /** An administrator locked the account: no sign-in, and its token, keys and sessions are refused. */
    lockedAt: p.datetime().nullable(),
    /** The user's language (a catalogue's tag), recorded by the pages; null: English (owner mails, notices). */
    locale: p.string().length(35).nullable(),
  },
});

export const ApiToken = defineEntity({
  name: 'ApiToken',
  tableName: 'api_tokens',
  properties: {
    id: p.uuid().primary(),
    user: () => p.manyToOne(User).deleteRule('cascade').unique(),
    /** SHA-256 (hex) of the token; the token itself is shown once and never stored. */
    digest: p.string().length(64).unique(),
    createdAt: p.datetime(),
    /** When the token last authenticated a request (written at most once a minute per server process). */
    lastUsedAt: p.datetime().nullable(),
  },
});

export const entities = [User, ApiToken];
