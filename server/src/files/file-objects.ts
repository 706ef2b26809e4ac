/**
 * File bytes in the object store (./object-store.ts), sealed on the way in and opened on the way out with the
 * streamed envelope (../crypto/file-stream.ts), so the store only ever holds ciphertext bound to its row. The push
 * and request services and the HTTP edge use this; with PWPUSH_FILE_STORAGE=postgres there is no FileObjects at all
 * and the bytes stay in `push_files.content` / `request_files.content` as before.
 *
 * Order of a create: the objects are stored first, then the rows in their transaction, so a row never names an object
 * that was not stored. An object whose row never committed (a refused or failed create, a crash in between) is deleted
 * by the request that made it, or else found by the sweeper's reconcile (./reconcile.ts) once it is older than
 * ORPHAN_GRACE_MS.
 */
import { pipeline, Readable, Transform } from 'node:stream';
import { ApiError, type StoredBytes } from '@secret-push/rules';
import type { Keyring } from '../crypto/envelope.js';
import { openStream, sealStream } from '../crypto/file-stream.js';
import { newFileId } from '../crypto/tokens.js';
import { StoreUnavailableError, type ObjectStore } from './object-store.js';

/** The areas whose files are kept as objects, each under its own folder of the prefix. */
export type FileArea = 'push' | 'request';

const FOLDER: Record<FileArea, string> = { push: 'push-files/', request: 'request-files/' };

/** Where logs of the file store go (names and counts only). */
export interface FileLog {
  warn(obj: object, msg: string): void;
}

/** The answer while the store cannot be reached: nothing was stored, no view was counted. */
export function storeUnavailable(what: 'create' | 'retrieve' | 'download'): ApiError {
  const message =
    what === 'create'
      ? 'File storage is unavailable right now; nothing was stored. Try again shortly.'
      : what === 'retrieve'
        ? 'The files of this push are unavailable right now; no view was counted. Try again shortly.'
        : 'This file is unavailable right now. Try again shortly.';
  return new ApiError('service_unavailable', message, { retryAfterSeconds: 30 });
}

/** Counts the bytes that pass (the plaintext size of an upload). */
function counter(): Transform & { bytes: number } {
  const t = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      t.bytes += chunk.length;
      done(null, chunk);
    },
  }) as Transform & { bytes: number };
  t.bytes = 0;
  return t;
}

export class FileObjects {
  constructor(
    readonly store: ObjectStore,
    private readonly keyring: Keyring,
    private readonly log?: FileLog,
  ) {}

  /** A new object key for a file of `area` (its id is random: ../crypto/tokens.ts). */
  keyFor(area: FileArea, fileId: string): string {
    return `${this.store.prefix}${FOLDER[area]}${fileId}`;
  }

  /**
   * Seals what `source` yields, as it comes, and stores it under `key`; the plaintext's size. A failure of the store
   * is StoreUnavailableError (nothing kept: a multipart upload is aborted); a failure of `source` is its own.
   */
  async storeStream(key: string, aad: string, source: Readable): Promise<number> {
    const count = counter();
    const sealed = sealStream(this.keyring, aad);
    // The store reads `sealed` as it needs (one part at a time); a failure of the source or the sealing ends the
    // upload with that failure, a failure of the store ends the source.
    pipeline(source, count, sealed, () => undefined);
    try {
      await this.store.put(key, sealed);
    } catch (error) {
      sealed.destroy();
      source.destroy();
      throw error;
    }
    return count.bytes;
  }

  /** Seals bytes held in memory and stores them under `key`. */
  async storeBytes(key: string, aad: string, bytes: Uint8Array): Promise<void> {
    await this.storeStream(key, aad, Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)]));
  }

  /**
   * The plaintext of the object under `key` as it streams (each segment checked before it is given out; a tampered
   * or cut object fails the stream), or null when the object is gone. StoreUnavailableError when the store is down.
   */
  async open(key: string, aad: string): Promise<Readable | null> {
    const body = await this.store.get(key);
    if (!body) return null;
    const opened = openStream(this.keyring, aad);
    pipeline(body, opened, () => undefined);
    return opened;
  }

  /** The whole plaintext of a small object (a request's attachment), or null when it is gone. */
  async read(key: string, aad: string): Promise<Buffer | null> {
    const opened = await this.open(key, aad);
    if (!opened) return null;
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of opened) chunks.push(chunk as Buffer);
    } catch (error) {
      throw error instanceof Error && error.name === 'DecryptionError' ? error : new StoreUnavailableError('read');
    }
    return Buffer.concat(chunks);
  }

  /** Throws 503 (ApiError) unless every object is there and the store answers (before a view is claimed). */
  async requireAvailable(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    let present: boolean[];
    try {
      present = await Promise.all(keys.map((key) => this.store.exists(key)));
    } catch (error) {
      this.log?.warn(
        { err: { name: (error as Error).name, reason: (error as StoreUnavailableError).reason } },
        'file store unavailable',
      );
      throw storeUnavailable('retrieve');
    }
    if (present.includes(false)) {
      this.log?.warn({ missing_objects: present.filter((p) => !p).length }, 'file objects missing for a retrieval');
      throw storeUnavailable('retrieve');
    }
  }

  /** Deletes objects whose rows are gone; a store that is down leaves them to the reconcile (never throws). */
  remove(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return Promise.resolve();
    return this.store.delete(keys).catch((error: unknown) => {
      this.log?.warn(
        { objects: keys.length, err: { name: (error as Error).name } },
        'file objects not deleted now: the sweeper reconciles them later',
      );
    });
  }

  /** The uploads of one request (the HTTP edge's body reader streams its file parts here). */
  uploads(area: FileArea, aad: (fileId: string) => string): RequestUploads {
    return new RequestUploads(this, area, aad);
  }
}

/** A file part already sealed and stored while the body was read: what stands for its bytes in the push rules. */
export class StreamedFile implements StoredBytes {
  readonly stored = true;
  /** Set once a committed row names the object (otherwise the request's end deletes it). */
  adopted = false;

  constructor(
    readonly fileId: string,
    readonly key: string,
    readonly length: number,
  ) {}
}

/**
 * The objects one request stored as it read its body. Whatever no committed row adopted is deleted when the request
 * ends (`discardUnadopted`, by the HTTP edge): a refused create, a replayed Idempotency-Key, a body that failed later.
 */
export class RequestUploads {
  private readonly taken: { key: string; file: StreamedFile | null }[] = [];

  constructor(
    private readonly objects: FileObjects,
    private readonly area: FileArea,
    private readonly aad: (fileId: string) => string,
  ) {}

  /** Seals and stores one file part as it streams; 503 (ApiError) when the store fails. */
  async take(part: Readable): Promise<StreamedFile> {
    const fileId = newFileId();
    const key = this.objects.keyFor(this.area, fileId);
    const entry: { key: string; file: StreamedFile | null } = { key, file: null };
    this.taken.push(entry);
    let size: number;
    try {
      size = await this.objects.storeStream(key, this.aad(fileId), part);
    } catch (error) {
      if (error instanceof StoreUnavailableError) throw storeUnavailable('create');
      throw error;
    }
    entry.file = new StreamedFile(fileId, key, size);
    return entry.file;
  }

  /** Deletes the objects no row adopted (in the background; the reconcile finds what a failure leaves). */
  discardUnadopted(): void {
    const keys = this.taken.filter((t) => !t.file?.adopted).map((t) => t.key);
    void this.objects.remove(keys);
  }
}
