/**
 * Start-up proof that the configured master keys open what the database holds, so a wrong or lost key cannot go
 * unnoticed until a recipient's retrieval fails.
 *
 * The `key_checks` table holds, per key id that has served this database, an envelope of a fixed text. At start-up:
 * - if it has rows, at least one must open with a configured key (PWPUSH_MASTER_KEY or PWPUSH_MASTER_KEY_PREVIOUS);
 * - if it is empty (a new database, or one from before this table), one stored secret (a push's payload, name or note,
 *   or a file's name) must open;
 * then the current key's row is added when missing. Otherwise start-up fails with MasterKeyMismatch, whose message
 * names the variables and how to make a key, and never a key, a value or a secret. Keys ids of rows no configured
 * key opens are reported (data written under them can no longer be read).
 */
import { sql, type Db } from '../db/sql.js';
import { column, defineTable } from '../db/table.js';
import { envelopeContexts } from '../push/push-service.js';
import type { Keyring } from './envelope.js';

interface KeyCheckRow {
  keyId: string;
  envelope: string;
  createdAt: Date;
}

export const KEY_CHECKS = defineTable<KeyCheckRow>('key_checks', {
  keyId: column.text('key_id'),
  envelope: column.text('envelope'),
  createdAt: column.date('created_at'),
});

const CHECK_TEXT = 'secret-push master key check v1';
const CHECK_AAD = 'key_checks.envelope';

/** The command the messages point at (scripts/key.mjs). */
const NEW_KEY_COMMAND = 'npm run key';

export class MasterKeyMismatch extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MasterKeyMismatch';
  }
}

const ROWS = sql<Record<string, never>, { key_id: string; envelope: string }>(
  `select key_id, envelope from ${KEY_CHECKS.name} order by created_at`,
);
const INSERT = sql<{ keyId: string; envelope: string }>(
  `insert into ${KEY_CHECKS.name} (key_id, envelope, created_at) values (:keyId, :envelope, now()) on conflict (key_id) do nothing`,
);
/** One stored secret of the server's own envelopes (any one: no ordering, so no scan of a large table). */
const SAMPLE = sql<
  Record<string, never>,
  { id: string; ciphertext: string; context: 'payload' | 'name' | 'note' | 'filename' }
>(
  `(select id::text as id, payload_ciphertext as ciphertext, 'payload'::text as context from pushes where payload_ciphertext is not null limit 1)
   union all (select id::text, name_ciphertext, 'name' from pushes where name_ciphertext is not null limit 1)
   union all (select id::text, note_ciphertext, 'note' from pushes where note_ciphertext is not null limit 1)
   union all (select id::text, filename_ciphertext, 'filename' from push_files limit 1)
   limit 1`,
);

const opens = (keyring: Keyring, envelope: string, aad: string, expected?: string): boolean => {
  try {
    const plain = keyring.decryptText(envelope, aad);
    return expected === undefined || plain === expected;
  } catch {
    return false;
  }
};

const idOf = (keyring: Keyring, envelope: string): string | null => {
  try {
    return keyring.keyIdOf(envelope);
  } catch {
    return null;
  }
};

function mismatch(configured: string[], stored: string[]): MasterKeyMismatch {
  return new MasterKeyMismatch(
    `the configured master keys cannot decrypt what this database holds ` +
      `(configured key ids: ${configured.join(', ')}; the database's data is under key ids: ${stored.join(', ') || 'unknown'}). ` +
      `Set PWPUSH_MASTER_KEY (or PWPUSH_MASTER_KEY_FILE) to the key this database was written with, and after a rotation keep the ` +
      `old key in PWPUSH_MASTER_KEY_PREVIOUS. A key's id is the part before ":" or, without one, the first 8 hex characters of its ` +
      `SHA-256. Only for a new, empty database: make a new key with \`${NEW_KEY_COMMAND}\` (prints 64 hex characters).`,
  );
}

/**
 * Proves the keyring opens the database's data (see the module comment); records the current key. Returns the key
 * ids of checks no configured key opens (for a warning). Throws MasterKeyMismatch.
 */
export async function verifyMasterKeys(
  db: Db,
  keyring: Keyring,
  configured: string[],
): Promise<{ unopened: string[] }> {
  const rows = await db.query(ROWS, {});
  const unopened: string[] = [];
  let proven = false;
  for (const row of rows) {
    if (opens(keyring, row.envelope, CHECK_AAD, CHECK_TEXT)) proven = true;
    else unopened.push(row.key_id);
  }
  if (rows.length > 0 && !proven) throw mismatch(configured, unopened);
  if (rows.length === 0) {
    const [sample] = await db.query(SAMPLE, {});
    if (sample && !opens(keyring, sample.ciphertext, envelopeContexts[sample.context](sample.id))) {
      throw mismatch(configured, [idOf(keyring, sample.ciphertext) ?? 'unknown']);
    }
  }
  if (!rows.some((r) => r.key_id === keyring.currentKeyId)) {
    await db.query(INSERT, { keyId: keyring.currentKeyId, envelope: keyring.encryptText(CHECK_TEXT, CHECK_AAD) });
  }
  return { unopened };
}
