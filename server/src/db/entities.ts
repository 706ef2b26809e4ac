/**
 * The persistent model (MikroORM 7, `defineEntity`). The schema itself is owned by the hand-written migrations in
 * ./migrations; these definitions must stay in step with them (server/test/domain/schema.test.ts checks that).
 *
 * Secrets are stored only as AES-256-GCM envelopes (`*_ciphertext`, `content`) or as a scrypt hash
 * (`passphrase_hash`); API tokens only as SHA-256 digests.
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
  },
});

export const Push = defineEntity({
  name: 'Push',
  tableName: 'pushes',
  properties: {
    id: p.uuid().primary(),
    urlToken: p.string().length(64).unique(),
    kind: p.string().length(8),
    user: () => p.manyToOne(User).nullable().deleteRule('set null'),
    payloadCiphertext: p.text().nullable(),
    nameCiphertext: p.text().nullable(),
    noteCiphertext: p.text().nullable(),
    passphraseHash: p.text().nullable(),
    passphraseProtected: p.boolean(),
    expireAfterDays: p.integer(),
    expireAfterViews: p.integer(),
    viewsUsed: p.integer().default(0),
    deletableByViewer: p.boolean(),
    retrievalStep: p.boolean(),
    expired: p.boolean().default(false),
    expiredOn: p.datetime().nullable(),
    deleted: p.boolean().default(false),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
    expiresAt: p.datetime(),
  },
  indexes: [
    // Owner lists: by user and state; scanned backwards for newest first.
    { name: 'pushes_owner_list_idx', properties: ['user', 'expired', 'createdAt', 'id'], where: '"user_id" is not null' },
    // Sweeper: unexpired pushes by the end of their time.
    { name: 'pushes_sweep_idx', properties: ['expiresAt'], where: 'not "expired"' },
    // File-byte sweep and purge: expired pushes by expiry time.
    { name: 'pushes_expired_on_idx', properties: ['expiredOn'], where: '"expired"' },
  ],
  checks: [
    { name: 'pushes_kind_check', expression: `"kind" in ('text', 'file', 'url', 'qr')` },
    { name: 'pushes_expire_after_days_check', expression: '"expire_after_days" >= 1 and "expire_after_days" <= 90' },
    { name: 'pushes_expire_after_views_check', expression: '"expire_after_views" >= 1 and "expire_after_views" <= 100' },
    { name: 'pushes_views_used_check', expression: '"views_used" >= 0 and "views_used" <= "expire_after_views"' },
    {
      name: 'pushes_expired_erased',
      expression:
        'not "expired" or ("payload_ciphertext" is null and "passphrase_hash" is null and "note_ciphertext" is null and "expired_on" is not null)',
    },
  ],
});

export const PushFile = defineEntity({
  name: 'PushFile',
  tableName: 'push_files',
  properties: {
    id: p.string().length(32).primary(),
    push: () => p.manyToOne(Push).deleteRule('cascade'),
    position: p.integer(),
    filenameCiphertext: p.text(),
    contentType: p.string().length(255),
    size: p.integer(),
    content: p.blob(),
    createdAt: p.datetime(),
  },
  indexes: [{ name: 'push_files_push_idx', properties: ['push', 'position'] }],
});

export const AuditEntry = defineEntity({
  name: 'AuditEntry',
  tableName: 'audit_entries',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    push: () => p.manyToOne(Push).deleteRule('cascade'),
    kind: p.string().length(32),
    ip: p.string().length(255),
    userAgent: p.string().length(255),
    referrer: p.string().length(255),
    user: () => p.manyToOne(User).nullable().deleteRule('set null'),
    createdAt: p.datetime(),
  },
  indexes: [{ name: 'audit_entries_push_idx', properties: ['push', 'createdAt', 'id'] }],
});

/** One row per failed (or in-flight) passphrase attempt; the per-push limit counts them, on every instance. */
export const PassphraseAttempt = defineEntity({
  name: 'PassphraseAttempt',
  tableName: 'passphrase_attempts',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    push: () => p.manyToOne(Push).deleteRule('cascade'),
    attemptedAt: p.datetime(),
  },
  indexes: [{ name: 'passphrase_attempts_push_idx', properties: ['push', 'attemptedAt'] }],
});

/** One row per failed (or in-flight) web sign-in; the per-email and per-address limits count them on every instance. */
export const LoginAttempt = defineEntity({
  name: 'LoginAttempt',
  tableName: 'login_attempts',
  properties: {
    id: p.bigint('string').primary().autoincrement(),
    email: p.string().length(320),
    ip: p.string().length(255),
    attemptedAt: p.datetime(),
  },
  indexes: [
    { name: 'login_attempts_email_idx', properties: ['email', 'attemptedAt'] },
    { name: 'login_attempts_ip_idx', properties: ['ip', 'attemptedAt'] },
  ],
});

export const entities = [User, ApiToken, Push, PushFile, AuditEntry, PassphraseAttempt, LoginAttempt];
