/**
 * Node-only helpers (`@secret-push/sdk/node`). Kept out of the main entry so browser bundles import no Node built-in.
 */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { FileAttachment } from './files.js';

export * from './index.js';

/** Reads a file from disk into an attachment for `createPush({ files: [...] })`. */
export async function fileFromPath(
  path: string,
  options: { filename?: string; contentType?: string } = {},
): Promise<FileAttachment> {
  const bytes = await readFile(path);
  return {
    filename: options.filename ?? basename(path),
    contentType: options.contentType,
    data: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength),
  };
}
