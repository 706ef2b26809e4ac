/**
 * What the server holds of a push, as its operator could read it: the row's `client_encryption` marker and the
 * payload and file names decrypted with the instance's master keys (its at-rest encryption). For an end-to-end
 * encrypted push these are still the client's envelopes: tests of other workspaces (the CLI, the MCP server) check
 * that no plaintext reached the server.
 */
import { createKeyring } from '../../src/crypto/envelope.js';
import { envelopeContexts } from '../../src/push/push-service.js';
import type { Settings } from '../../src/core.js';
import type { TestDatabase } from './db.js';

export interface StoredPush {
  clientEncryption: unknown;
  /** The payload as the server decrypts it (null once erased). */
  payload: string | null;
  fileNames: string[];
  fileContents: Buffer[];
}

export async function storedPush(
  db: TestDatabase,
  settings: Pick<Settings, 'masterKeys'>,
  urlToken: string,
): Promise<StoredPush> {
  const keyring = createKeyring(settings.masterKeys);
  const [row] = await db.query<{ id: string; payload_ciphertext: string | null; client_encryption: unknown }>(
    'select id, payload_ciphertext, client_encryption from pushes where url_token = $1',
    [urlToken],
  );
  if (!row) throw new Error(`no push ${urlToken}`);
  const files = await db.query<{ id: string; filename_ciphertext: string; content: Buffer }>(
    'select id, filename_ciphertext, content from push_files where push_id = $1 order by position',
    [row.id],
  );
  return {
    clientEncryption: row.client_encryption,
    payload:
      row.payload_ciphertext === null
        ? null
        : keyring.decryptText(row.payload_ciphertext, envelopeContexts.payload(row.id)),
    fileNames: files.map((f) => keyring.decryptText(f.filename_ciphertext, envelopeContexts.filename(f.id))),
    fileContents: files.map((f) => keyring.decrypt(f.content, envelopeContexts.content(f.id))),
  };
}
