/**
 * Attaching files to a push: bytes or a Blob become the wire's `FileUpload` (base64). Works in browsers and Node;
 * reading a file from a path lives in the Node-only entry (`@secret-push/sdk/node`).
 */
import type { FileUpload, PushInput } from './generated/types.gen.js';

/** A file to attach, before encoding. `data` is the raw bytes or a Blob (a browser `File` is a Blob). */
export interface FileAttachment {
  filename: string;
  /** Media type; defaults to the Blob's own type, else `application/octet-stream`. */
  contentType?: string | undefined;
  data: Uint8Array | Blob;
}

/** What `createPush` accepts in `files`: an attachment, or an already encoded `FileUpload`. */
export type FileInput = FileAttachment | FileUpload;

/** `createPush`'s input: the spec's `PushInput`, with files given as bytes, Blobs or encoded uploads. */
export type CreatePushParams = Omit<PushInput, 'files'> & { files?: FileInput[] | undefined };

/** An attachment from bytes. */
export function fileFromBytes(data: Uint8Array, filename: string, contentType?: string): FileAttachment {
  return { filename, contentType, data };
}

/** An attachment from a Blob or a browser `File` (whose name is used when `filename` is not given). */
export function fileFromBlob(blob: Blob, filename?: string, contentType?: string): FileAttachment {
  const name = filename ?? (blob as Blob & { name?: unknown }).name;
  if (typeof name !== 'string' || name === '') {
    throw new TypeError('fileFromBlob: a filename is needed for a Blob that is not a File');
  }
  return { filename: name, contentType: contentType ?? (blob.type || undefined), data: blob };
}

/** Standard base64 with padding, in chunks so large files do not overflow the argument list. */
export function bytesToBase64(bytes: Uint8Array): string {
  let binary = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    binary += String.fromCharCode(...bytes.subarray(i, i + chunk));
  }
  return btoa(binary);
}

export function base64ToBytes(base64: string): Uint8Array {
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

export function isFileUpload(file: FileInput): file is FileUpload {
  return typeof (file as FileUpload).content === 'string';
}

/** Encodes an attachment for the wire; a `FileUpload` passes through unchanged. */
export async function toFileUpload(file: FileInput): Promise<FileUpload> {
  if (isFileUpload(file)) return file;
  const bytes = file.data instanceof Uint8Array ? file.data : new Uint8Array(await file.data.arrayBuffer());
  const blobType = file.data instanceof Uint8Array ? undefined : file.data.type || undefined;
  return {
    filename: file.filename,
    content_type: file.contentType ?? blobType ?? 'application/octet-stream',
    content: bytesToBase64(bytes),
  };
}
