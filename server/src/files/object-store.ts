/**
 * The object store of file bytes (PWPUSH_FILE_STORAGE=s3://bucket/prefix): AWS S3 or any S3-compatible store
 * (MinIO, Cloudflare R2, Backblaze B2, …) through `@aws-sdk/client-s3`. The SDK is loaded only when the setting names
 * a bucket (`openObjectStore`, a dynamic import): an instance keeping its files in PostgreSQL never loads it.
 *
 * What this module sees is already sealed (../crypto/file-stream.ts): keys are random file ids under the prefix, and
 * bodies are ciphertext. Uploads stream in parts of PART_BYTES (S3's smallest part; R2 wants every part but the last
 * the same size), one part in flight, so an upload holds at most about one part in memory whatever the file's size;
 * an object of one part or less is one PutObject. Downloads are the store's response stream, read as it is consumed.
 *
 * Every failure but "no such object" is a StoreUnavailableError (the store is down, refuses our credentials, times
 * out): the callers answer 503 and change nothing. Only error names and status codes are kept, never a key's secret.
 */
import type { Readable } from 'node:stream';
import type { S3StorageSettings } from '../config/settings.js';

/** Bytes of every part of a multipart upload but the last. */
const PART_BYTES = 5 * 1024 * 1024;
/** A connection the store does not accept within this long fails (a store that is down answers 503 promptly). */
const CONNECT_TIMEOUT_MS = 3_000;
/** A request whose response has not begun (or that stalls) this long fails. */
const REQUEST_TIMEOUT_MS = 15_000;

/** The store could not do what was asked (down, refused, timed out): nothing is known to have changed. */
export class StoreUnavailableError extends Error {
  constructor(readonly reason: string) {
    super(`the file store is unavailable (${reason})`);
    this.name = 'StoreUnavailableError';
  }
}

export interface ListedObject {
  key: string;
  lastModified: Date;
}

export interface ObjectStore {
  /** `s3://bucket/prefix` (for messages; never a credential). */
  readonly location: string;
  /** The prefix every key of this instance starts with ('' or ending in `/`). */
  readonly prefix: string;
  /**
   * Stores what `body` yields under `key`; the number of bytes stored. StoreUnavailableError for the store's
   * failures, `body`'s own error for its (a multipart upload begun is aborted either way).
   */
  put(key: string, body: AsyncIterable<Buffer>): Promise<number>;
  /** The object's bytes as they come, or null when there is no such object. */
  get(key: string): Promise<Readable | null>;
  /** Whether the object exists (a store that cannot say throws StoreUnavailableError). */
  exists(key: string): Promise<boolean>;
  /** Deletes the objects (absent ones are no error). */
  delete(keys: readonly string[]): Promise<void>;
  /** One page of the keys under the prefix, in the store's (binary) order; `next` continues it, null at the end. */
  list(next: string | null): Promise<{ objects: ListedObject[]; next: string | null }>;
  close(): void;
}

type S3 = typeof import('@aws-sdk/client-s3');

interface S3Failure {
  name?: string;
  $metadata?: { httpStatusCode?: number };
}

const missing = (error: unknown) => {
  const e = error as S3Failure;
  return e.name === 'NoSuchKey' || e.name === 'NotFound' || e.$metadata?.httpStatusCode === 404;
};

const unavailable = (error: unknown) => {
  const e = error as S3Failure & { code?: string };
  const status = e.$metadata?.httpStatusCode;
  return new StoreUnavailableError([e.name ?? 'Error', e.code, status].filter((x) => x !== undefined).join(' '));
};

/** Runs a call on the store, every failure as StoreUnavailableError. */
async function onStore<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw error instanceof StoreUnavailableError ? error : unavailable(error);
  }
}

/** The object store of these settings (loads the AWS SDK). */
export async function openObjectStore(settings: S3StorageSettings): Promise<ObjectStore> {
  const s3: S3 = await import('@aws-sdk/client-s3');
  const client = new s3.S3Client({
    region: settings.region,
    ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
    forcePathStyle: settings.forcePathStyle,
    ...(settings.credentials ? { credentials: settings.credentials } : {}),
    // Checksums only where S3 requires them (DeleteObjects): R2, B2 and older stores refuse or mangle the default
    // CRC32 trailers of streamed bodies. Integrity is the envelope's GCM tags, checked on every read.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 2,
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
  });
  const Bucket = settings.bucket;

  /** A call to the store: any failure of it is StoreUnavailableError. */
  const send = <T>(call: Promise<T>): Promise<T> =>
    call.catch((error: unknown) => {
      throw unavailable(error);
    });

  /**
   * Stores `body` in parts as it comes, each gathered in one buffer of PART_BYTES that is used again for the next part
   * once the store has it (no garbage per part); a failure of `body` itself is thrown as it is (not the store's).
   */
  async function putParts(Key: string, body: AsyncIterable<Buffer>): Promise<number> {
    let part: Buffer | null = null;
    let filled = 0;
    let total = 0;
    let uploadId: string | undefined;
    const parts: { ETag: string; PartNumber: number }[] = [];
    const sendPart = async (Body: Buffer) => {
      uploadId ??= (await send(client.send(new s3.CreateMultipartUploadCommand({ Bucket, Key })))).UploadId;
      const PartNumber = parts.length + 1;
      const { ETag } = await send(
        client.send(
          new s3.UploadPartCommand({ Bucket, Key, UploadId: uploadId, PartNumber, Body, ContentLength: Body.length }),
        ),
      );
      parts.push({ ETag: ETag ?? '', PartNumber });
    };
    try {
      for await (const chunk of body) {
        total += chunk.length;
        for (let at = 0; at < chunk.length;) {
          part ??= Buffer.allocUnsafe(PART_BYTES);
          const copied = chunk.copy(part, filled, at);
          filled += copied;
          at += copied;
          if (filled === PART_BYTES) {
            await sendPart(part);
            filled = 0;
          }
        }
      }
      const rest = part ? part.subarray(0, filled) : Buffer.alloc(0);
      if (uploadId === undefined) {
        await send(client.send(new s3.PutObjectCommand({ Bucket, Key, Body: rest, ContentLength: rest.length })));
        return total;
      }
      if (rest.length > 0) await sendPart(rest);
      await send(
        client.send(
          new s3.CompleteMultipartUploadCommand({ Bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }),
        ),
      );
      return total;
    } catch (error) {
      if (uploadId !== undefined) {
        await client
          .send(new s3.AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId }))
          .catch(() => undefined);
      }
      throw error;
    }
  }

  return {
    location: `s3://${Bucket}/${settings.prefix}`,
    prefix: settings.prefix,
    put: putParts,
    async get(Key) {
      try {
        const { Body } = await client.send(new s3.GetObjectCommand({ Bucket, Key }));
        return (Body as Readable | undefined) ?? null;
      } catch (error) {
        if (missing(error)) return null;
        throw unavailable(error);
      }
    },
    async exists(Key) {
      try {
        await client.send(new s3.HeadObjectCommand({ Bucket, Key }));
        return true;
      } catch (error) {
        if (missing(error)) return false;
        throw unavailable(error);
      }
    },
    async delete(keys) {
      for (let i = 0; i < keys.length; i += 1000) {
        const Objects = keys.slice(i, i + 1000).map((Key) => ({ Key }));
        const { Errors } = await onStore(() =>
          client.send(new s3.DeleteObjectsCommand({ Bucket, Delete: { Objects, Quiet: true } })),
        );
        const failed = (Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
        if (failed.length > 0) throw new StoreUnavailableError(`DeleteObjects ${failed[0]!.Code ?? 'error'}`);
      }
    },
    async list(next) {
      const page = await onStore(() =>
        client.send(
          new s3.ListObjectsV2Command({
            Bucket,
            Prefix: settings.prefix,
            MaxKeys: 1000,
            ...(next ? { ContinuationToken: next } : {}),
          }),
        ),
      );
      return {
        objects: (page.Contents ?? []).map((o) => ({ key: o.Key ?? '', lastModified: o.LastModified ?? new Date(0) })),
        next: page.IsTruncated ? (page.NextContinuationToken ?? null) : null,
      };
    },
    close: () => client.destroy(),
  };
}
