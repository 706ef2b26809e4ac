/** Where file bytes are kept: PostgreSQL, or an S3-compatible object store (docs/object-storage.md). */
import { type Env, flag, httpUrl, secret, SettingsError, text } from '../setting.js';

/**
 * Where file bytes are kept (PWPUSH_FILE_STORAGE): in PostgreSQL (`push_files.content`, `request_files.content`), or in
 * an S3-compatible bucket under a prefix (../files/).
 */
export type FileStorageSettings = { kind: 'postgres' } | S3StorageSettings;

export interface S3StorageSettings {
  kind: 's3';
  bucket: string;
  /** Prepended to every object key: '' or ending in `/` (`secret-push/`). */
  prefix: string;
  /** PWPUSH_S3_ENDPOINT; null: AWS S3. */
  endpoint: string | null;
  region: string;
  forcePathStyle: boolean;
  /** PWPUSH_S3_ACCESS_KEY_ID and PWPUSH_S3_SECRET_ACCESS_KEY (or their _FILE); null: the AWS SDK's default chain. Secret. */
  credentials: { accessKeyId: string; secretAccessKey: string } | null;
}

const FILE_STORAGE = text('PWPUSH_FILE_STORAGE', {
  default: 'postgres',
  accepts: '`postgres`, `s3://bucket/prefix`',
  meaning:
    'Where the bytes of files (file pushes, request attachments) are kept: `postgres` (in the database) or `s3://bucket/prefix` (an S3-compatible object store: AWS S3, MinIO, Cloudflare R2, Backblaze B2, …; the prefix is optional). Either way they are encrypted here first, so the store never sees a plaintext. See docs/object-storage.md; `npm run files -- migrate --to s3` moves existing files.',
});
const S3_ENDPOINT = httpUrl('PWPUSH_S3_ENDPOINT', {
  shown: "unset (AWS S3's own)",
  meaning:
    "The store's base URL, for any store but AWS S3: `https://<account>.r2.cloudflarestorage.com`, `https://s3.us-west-004.backblazeb2.com`, `http://minio:9000`.",
});
const S3_REGION = text('PWPUSH_S3_REGION', {
  default: 'us-east-1',
  accepts: 'a region name',
  meaning: "The bucket's region (`auto` for Cloudflare R2).",
});
const S3_FORCE_PATH_STYLE = flag('PWPUSH_S3_FORCE_PATH_STYLE', false, {
  meaning:
    'Address the bucket in the path (`<endpoint>/<bucket>/<key>`) rather than as a subdomain: MinIO and most self-hosted stores need `true`.',
});
const S3_ACCESS_KEY_ID = secret('PWPUSH_S3_ACCESS_KEY_ID', {
  shown: 'unset',
  accepts: 'an access key id',
  meaning:
    "The store's access key id (with `PWPUSH_S3_SECRET_ACCESS_KEY`; set both or neither). Neither: the AWS SDK's default chain (environment, profile, container or instance role).",
  what: "the object store's access key id (docs/object-storage.md)",
});
const S3_SECRET_ACCESS_KEY = secret('PWPUSH_S3_SECRET_ACCESS_KEY', {
  shown: 'unset',
  accepts: 'a secret access key',
  meaning: "The store's secret access key. Secret: never logged.",
  what: "the object store's secret access key",
});

export const FILE_STORAGE_SETTINGS = [
  FILE_STORAGE,
  S3_ENDPOINT,
  S3_REGION,
  S3_FORCE_PATH_STYLE,
  S3_ACCESS_KEY_ID,
  S3_SECRET_ACCESS_KEY,
];

/** PWPUSH_FILE_STORAGE (`postgres`, or `s3://bucket/prefix`) and the store's PWPUSH_S3_* settings. */
export function readFileStorage(env: Env): FileStorageSettings {
  const value = FILE_STORAGE.read(env);
  if (value.toLowerCase() === 'postgres') return { kind: 'postgres' };
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(value);
  const prefix = match?.[2] ?? '';
  if (!match || prefix.startsWith('/') || prefix.includes('//') || /[\u0000-\u001f\u007f\\]/.test(prefix)) {
    throw new SettingsError(
      'PWPUSH_FILE_STORAGE',
      `PWPUSH_FILE_STORAGE must be postgres or s3://bucket/prefix (a bucket name of 3 to 63 lower-case letters, digits, dots and hyphens; the prefix optional) (got "${value}")`,
    );
  }
  const accessKeyId = S3_ACCESS_KEY_ID.read(env)?.value;
  const secretAccessKey = S3_SECRET_ACCESS_KEY.read(env)?.value;
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new SettingsError(
      accessKeyId === undefined ? 'PWPUSH_S3_ACCESS_KEY_ID' : 'PWPUSH_S3_SECRET_ACCESS_KEY',
      'Set both PWPUSH_S3_ACCESS_KEY_ID and PWPUSH_S3_SECRET_ACCESS_KEY (or their _FILE), or neither (the AWS SDK then finds credentials itself)',
    );
  }
  return {
    kind: 's3',
    bucket: match[1]!,
    prefix: prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`,
    endpoint: S3_ENDPOINT.read(env),
    region: S3_REGION.read(env),
    forcePathStyle: S3_FORCE_PATH_STYLE.read(env),
    credentials: accessKeyId && secretAccessKey ? { accessKeyId, secretAccessKey } : null,
  };
}
