/** Pushes and requests: which kinds are on, files, lifetimes, defaults, passphrases, end-to-end encryption, quotas. */
import { CLIENT_ENCRYPTION_MODES, clientEncryptionSetting, DURATION_MIN_BOUNDS, SPEC_LIMITS } from '@secret-push/rules';
import { bounds, byteSize, type Env, flag, integer, MIB, oneOf } from '../setting.js';

const ALLOW_ANONYMOUS = flag('PWPUSH_ALLOW_ANONYMOUS', true, {
  meaning: 'Allow creating and retrieving pushes without a token (`features.anonymous_access`).',
});
const ENABLE_FILE_PUSHES = flag('PWPUSH_ENABLE_FILE_PUSHES', true, { meaning: 'Allow `file` pushes.' });
const ENABLE_URL_PUSHES = flag('PWPUSH_ENABLE_URL_PUSHES', true, { meaning: 'Allow `url` pushes.' });
const ENABLE_QR_PUSHES = flag('PWPUSH_ENABLE_QR_PUSHES', true, { meaning: 'Allow `qr` pushes.' });
const ENABLE_REQUESTS = flag('PWPUSH_ENABLE_REQUESTS', true, {
  meaning: 'Requests (`/api/v2/requests`): ask someone to send you a secret.',
});
const FILES_REQUIRE_AUTH = flag('PWPUSH_FILES_REQUIRE_AUTH', true, {
  meaning: 'File pushes (and any `files` property) need a token.',
});
const FILE_MAX_COUNT = integer('PWPUSH_FILE_MAX_COUNT', {
  default: SPEC_LIMITS.fileMaxCount,
  min: 1,
  max: SPEC_LIMITS.fileMaxCount,
  meaning: 'Most files per push.',
});
const FILE_MAX_BYTES = integer('PWPUSH_FILE_MAX_BYTES', {
  default: SPEC_LIMITS.fileMaxBytes,
  min: 1,
  max: SPEC_LIMITS.fileMaxBytes,
  meaning: 'Largest file in bytes after decoding.',
});
const EXPIRE_AFTER_DAYS = bounds('PWPUSH_EXPIRE_AFTER_DAYS', SPEC_LIMITS.expireAfterDays, 'expire_after_days');
const EXPIRE_AFTER_DURATION_MIN = integer('PWPUSH_EXPIRE_AFTER_DURATION_MIN', {
  ...DURATION_MIN_BOUNDS,
  meaning:
    'Shortest `expire_after_duration` under a day accepted: 0 = 15 minutes, 1 = 30 minutes, 2 = 45 minutes, 3 = 1 hour, 4 = 6 hours, 5 = 12 hours, 6 = nothing under a day. Durations of a day or more follow the days bounds; `features.pushes.expire_after_duration` reports what is accepted.',
});
const EXPIRE_AFTER_VIEWS = bounds('PWPUSH_EXPIRE_AFTER_VIEWS', SPEC_LIMITS.expireAfterViews, 'expire_after_views');
const DELETABLE_BY_VIEWER_DEFAULT = flag('PWPUSH_DELETABLE_BY_VIEWER_DEFAULT', true, {
  meaning: 'Default of `deletable_by_viewer`.',
});
const RETRIEVAL_STEP_DEFAULT = flag('PWPUSH_RETRIEVAL_STEP_DEFAULT', false, {
  meaning: 'Default of `retrieval_step`.',
});
const PASSPHRASE_ATTEMPTS_PER_MINUTE = integer('PWPUSH_PASSPHRASE_ATTEMPTS_PER_MINUTE', {
  default: 5,
  min: 1,
  max: 1000,
  meaning: 'Failed passphrase attempts per push per minute before 429 (held in PostgreSQL).',
});
const CLIENT_ENCRYPTION = oneOf('PWPUSH_CLIENT_ENCRYPTION', CLIENT_ENCRYPTION_MODES, 'allowed', {
  meaning:
    'End-to-end encrypted pushes (encrypted by the client, the key only in the link): `off` (refused with 422), `allowed`, `default` (the create page starts with "Encrypt in my browser" on) or `required` (ordinary pushes refused with 422: existing clients that do not encrypt cannot create pushes). Reported in `features.pushes.client_encryption`.',
});
const ANONYMOUS_STORAGE_PER_HOUR = byteSize('PWPUSH_ANONYMOUS_STORAGE_PER_HOUR', 100 * MIB, {
  meaning:
    'Storage quota of anonymous creators: bytes of secrets (payload and file contents) one client address (an IPv6 /64 counts as one) may store per clock hour (UTC). Independent of the request limit: `PWPUSH_RATE_LIMIT_PER_MINUTE=0` leaves it on. Over it: 429 `storage_quota_exceeded` with `Retry-After` (the next hour), nothing stored.',
});
const USER_STORAGE = byteSize('PWPUSH_USER_STORAGE', 1024 * MIB, {
  meaning:
    "Storage quota of each user: bytes of secrets the user's active pushes (payload and file contents) and open requests (the files attached to their asks) may hold at once. Space comes back as pushes expire (by views, by time, or deleted) and as requests close (answered, expired, revoked: their ask and files are erased). Over it: 429 `storage_quota_exceeded` with `Retry-After` (when enough will have expired by time), nothing stored.",
});
const USER_OPEN_REQUESTS = integer('PWPUSH_USER_OPEN_REQUESTS', {
  default: 100,
  min: 0,
  max: 100_000,
  meaning:
    'Requests each user may have open (pending: neither answered, expired nor revoked) at once; `0` turns the limit off. Over it: 429 `too_many_open_requests` with `Retry-After` (when the first of them expires by time), nothing stored.',
});

export const PUSH_SETTINGS = [
  ALLOW_ANONYMOUS,
  ENABLE_FILE_PUSHES,
  ENABLE_URL_PUSHES,
  ENABLE_QR_PUSHES,
  ENABLE_REQUESTS,
  FILES_REQUIRE_AUTH,
  FILE_MAX_COUNT,
  FILE_MAX_BYTES,
  ...EXPIRE_AFTER_DAYS.settings,
  EXPIRE_AFTER_DURATION_MIN,
  ...EXPIRE_AFTER_VIEWS.settings,
  DELETABLE_BY_VIEWER_DEFAULT,
  RETRIEVAL_STEP_DEFAULT,
  PASSPHRASE_ATTEMPTS_PER_MINUTE,
  CLIENT_ENCRYPTION,
  ANONYMOUS_STORAGE_PER_HOUR,
  USER_STORAGE,
  USER_OPEN_REQUESTS,
];

/** The push rules' settings (the part the stateful mock shares), requests and the storage quotas. */
export function readPushes(env: Env) {
  return {
    allowAnonymous: ALLOW_ANONYMOUS.read(env),
    enableFilePushes: ENABLE_FILE_PUSHES.read(env),
    enableUrlPushes: ENABLE_URL_PUSHES.read(env),
    enableQrPushes: ENABLE_QR_PUSHES.read(env),
    enableRequests: ENABLE_REQUESTS.read(env),
    filesRequireAuth: FILES_REQUIRE_AUTH.read(env),
    fileMaxCount: FILE_MAX_COUNT.read(env),
    fileMaxBytes: FILE_MAX_BYTES.read(env),
    expireAfterDays: EXPIRE_AFTER_DAYS.read(env),
    expireAfterDurationMin: EXPIRE_AFTER_DURATION_MIN.read(env),
    expireAfterViews: EXPIRE_AFTER_VIEWS.read(env),
    deletableByViewerDefault: DELETABLE_BY_VIEWER_DEFAULT.read(env),
    retrievalStepDefault: RETRIEVAL_STEP_DEFAULT.read(env),
    passphraseAttemptsPerMinute: PASSPHRASE_ATTEMPTS_PER_MINUTE.read(env),
    clientEncryption: clientEncryptionSetting(CLIENT_ENCRYPTION.read(env)),
    anonymousStoragePerHour: ANONYMOUS_STORAGE_PER_HOUR.read(env),
    userStorageBytes: USER_STORAGE.read(env),
    userOpenRequests: USER_OPEN_REQUESTS.read(env),
  };
}
