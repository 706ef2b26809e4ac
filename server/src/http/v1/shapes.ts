/**
 * The legacy v1 API's shapes over the v2 domain, as its document (openapi/v1) decides them: the wrappers
 * (`password`, `file_push`, `url`, or push fields at the top level) read into a v2 `PushInput`, v1 push records,
 * audit entries under `views`, and v1's error texts (the ones clients compare, kept verbatim). The field lists come
 * from the v1 contract, so a v2 field the v1 document does not declare never leaks into a v1 answer.
 */
import { contractV1 } from '@secret-push/contract';
import type { AuditEntry, Push, PushInput, PushOwner, PushRetrieval } from '@secret-push/sdk/generated';
import { ApiError } from '@secret-push/rules';
import { readPushText } from '../form-input.js';

export type Wrapper = 'password' | 'file_push' | 'url';

export interface V1Create {
  wrapper: Wrapper;
  /** The kind the path makes (`/f.json` files, `/r.json` URLs); undefined: `kind` as sent (`/p.json`). */
  kind?: 'file' | 'url';
}

/** The three creates, by operationId. */
export const V1_CREATES: Readonly<Record<string, V1Create>> = {
  createPasswordV1: { wrapper: 'password' },
  createFilePushV1: { wrapper: 'file_push', kind: 'file' },
  createUrlPushV1: { wrapper: 'url', kind: 'url' },
};

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The property names of a v1 component schema. */
function propertiesOf(name: string): string[] {
  return Object.keys(contractV1().schema<{ properties: object }>(name).properties);
}

let pushFields: string[] | undefined;
let recordKeys: string[] | undefined;

/**
 * The v2 `PushInput` a v1 create body asks for: the wrapper's object, else the push fields at the top level (older
 * servers' parameter wrapping); the fields `V1PushFields` declares, `null` as not given, text values read as a form's
 * (digits as integers, true/false/1/0/on/off/yes/no as booleans, `""` as not given but for payload, name and note).
 * Values that do not read stay as sent, so v2's schema refuses them on their field with v2's messages.
 */
export function v1PushInput(body: unknown, create: V1Create): PushInput {
  pushFields ??= propertiesOf('V1PushFields');
  const top = isObject(body) ? body : {};
  const fields = isObject(top[create.wrapper]) ? (top[create.wrapper] as Json) : top;
  const input: Json = {};
  for (const field of pushFields) {
    const value = fields[field];
    if (value === null || value === undefined || (field === 'kind' && create.kind)) continue;
    const read = typeof value === 'string' ? readPushText(field, value) : value;
    if (read !== undefined) input[field] = read;
  }
  if (create.kind) input.kind = create.kind;
  return input as PushInput;
}

/** A v2 record in v1's shape: the keys `V1Push` declares, and the v1 JSON address `{base}/p/{url_token}.json`. */
export function v1Record(push: Push, base: string): Json {
  recordKeys ??= propertiesOf('V1Push');
  const record: Json = {};
  for (const key of recordKeys) if (key in push) record[key] = push[key as keyof Push];
  record.json_url = `${base}/p/${push.url_token}.json`;
  return record;
}

export function v1OwnerRecord(push: PushOwner, base: string): Json {
  return { ...v1Record(push, base), name: push.name, note: push.note };
}

export function v1Retrieval(push: PushRetrieval, base: string): Json {
  return { ...v1Record(push, base), payload: push.payload, files: push.files };
}

const FAILURES = new Set<AuditEntry['kind']>(['failed_view', 'failed_passphrase']);

/** An audit entry with the reference's v1 keys plus `successful` (pwpush-cli ≤ 0.13 reads it). */
export function v1AuditEntry(entry: AuditEntry): Json {
  return {
    kind: entry.kind,
    ip: entry.ip,
    user_agent: entry.user_agent,
    referrer: entry.referrer,
    created_at: entry.created_at,
    updated_at: entry.created_at,
    successful: !FAILURES.has(entry.kind),
  };
}

/** The texts v1 clients compare, verbatim from the reference (decisions 6 and 7). */
export const V1_TEXT = {
  notFound: 'not-found',
  notYours: "That push doesn't belong to you.",
  notDeletable: 'That push is not deletable by viewers.',
  tooManyAttempts: 'Too many passphrase attempts. Please try again in a minute.',
  passphrase: 'This push has a passphrase that was incorrect or not provided.',
  passphraseRequired:
    "This push requires a passphrase. Please provide it using the 'passphrase' parameter (e.g. ?passphrase=mysecret)",
  passphraseIncorrect: 'That passphrase is incorrect.',
  encryptionRequired:
    'This instance accepts only end-to-end encrypted pushes, which the v1 API cannot make: use the web page or an API v2 client that encrypts (PWPUSH_CLIENT_ENCRYPTION=default lets ordinary pushes in).',
  missing: (wrapper: Wrapper) => `param is missing or the value is empty or invalid: ${wrapper}`,
} as const;

/** An error of the v2 domain as v1 answers it: its text, and the extra keys of the passphrase 401. */
export function v1Error(
  error: ApiError,
  operationId: string | undefined,
): { error: ApiError; extra: Record<string, string> } {
  const same = (message: string) => new ApiError(error.code, message, error.details);
  switch (error.code) {
    case 'not_found':
    case 'no_route':
      return { error: same(V1_TEXT.notFound), extra: {} };
    case 'too_many_attempts':
      return { error: same(V1_TEXT.tooManyAttempts), extra: {} };
    case 'missing_push':
      return { error: same(V1_TEXT.missing(V1_CREATES[operationId ?? '']?.wrapper ?? 'password')), extra: {} };
    case 'passphrase_required':
    case 'passphrase_incorrect':
      return {
        error: same(V1_TEXT.passphrase),
        extra: {
          message: error.code === 'passphrase_required' ? V1_TEXT.passphraseRequired : V1_TEXT.passphraseIncorrect,
          status: 'unauthorized',
        },
      };
    default:
      return { error, extra: {} };
  }
}
