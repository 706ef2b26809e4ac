/**
 * Create input: the contract's `PushInput` schema is the validator (types, lengths, the URL rule, the per-kind rules,
 * file items and the spec's bounds, with the API's field messages), and `normalizePushInput` adds only what the schema
 * cannot know: the instance's settings (disabled kinds, narrower expiry bounds, file count and decoded size limits),
 * the default kind, the base64 padding the schema's pattern does not check, decoding, and defaults. The server (API
 * and web form) and the stateful mock run these same two steps. Messages never contain the submitted values.
 */
import { readRecipientAccess } from './recipient-access.js';
import type { AnySchemaObject, ValidateFunction } from 'ajv/dist/2020.js';
import type { ClientEncryption, FileUpload, PushInput, PushKind } from './generated/types.gen.js';
import { makeAjv } from './ajv.js';
import { DAY_SECONDS, daysOfSeconds, durationLifetime } from './durations.js';
import { validationFailed, type FieldErrors } from './errors.js';
import { turnOn, type FeatureGate } from './feature-gates.js';
import { pushFieldErrors } from './field-errors.js';
import { CLIENT_ENCRYPTION_SCHEMES, type Bounds, type PushRuleSettings } from './settings.js';

/**
 * A file's bytes that a server already put in its file store while it read the body (a multipart part streamed to
 * object storage: server/src/files/): only their size travels through the rules, as `length`.
 */
export interface StoredBytes {
  readonly stored: true;
  readonly length: number;
}

/** A file's bytes: in memory, or already stored (StoredBytes). */
export type FileBytes = Uint8Array | StoredBytes;

/** The bytes of a file held in memory; a StoredBytes here is a programming error (only a server makes them). */
export function bytesInMemory(bytes: FileBytes): Uint8Array {
  if (bytes instanceof Uint8Array) return bytes;
  throw new Error('these file bytes are in a file store, not in memory');
}

export interface ValidFile {
  filename: string;
  contentType: string;
  bytes: FileBytes;
}

/** A create input that passed the schema and the instance's rules, with every default applied. */
export interface ValidPush {
  kind: PushKind;
  payload: string;
  files: ValidFile[];
  /** Whole days, rounded up for a lifetime under a day (what `expire_after_days` says of it). */
  expireAfterDays: number;
  /** The exact lifetime: `expire_after_duration`'s time, or days × 24 h. */
  expireAfterSeconds: number;
  expireAfterViews: number;
  deletableByViewer: boolean;
  retrievalStep: boolean;
  passphrase: string | null;
  name: string;
  note: string;
  /** The client's scheme for an end-to-end encrypted push (payload, names and bytes are its envelopes), else null. */
  clientEncryption: ClientEncryption | null;
  /** The ranges a retrieval must come from, normalized (empty: any). */
  allowedNetworks: string[];
  /** The addresses that may open the push (empty: anyone with the link). */
  recipientEmails: string[];
}

/** A PushInput known to satisfy the contract's schema (checked by `checkPushSchema` or by the API's validator). */
export type SchemaValidPushInput = PushInput & { readonly __schemaValid: unique symbol };

export interface PushSchemaCheck {
  /** The compiled validator (its `.schema` is the document's PushInput, as read). */
  readonly validate: ValidateFunction;
  /** `{}` when the input satisfies the schema, else messages per field (the API's 422 `errors`). */
  (input: unknown): FieldErrors;
}

/** Where the push's schema sits in a document. */
export const PUSH_INPUT_POINTER = '#/components/schemas/PushInput';
const DOCUMENT_ID = 'urn:secret-push:push-input';

/**
 * Compiles `#/components/schemas/PushInput` of a document that has `components.schemas` (the bundled OpenAPI
 * document, or the generated schemas), its `$ref`s resolved within the document.
 */
export function compilePushSchema(document: AnySchemaObject): PushSchemaCheck {
  const ajv = makeAjv();
  // The whole document is one schema resource, so the refs between component schemas resolve as written.
  ajv.addSchema({ ...document, $id: DOCUMENT_ID });
  const validate = ajv.getSchema(`${DOCUMENT_ID}${PUSH_INPUT_POINTER}`);
  if (!validate) throw new Error(`The document has no schema at ${PUSH_INPUT_POINTER}`);
  const check = (input: unknown): FieldErrors => {
    if (validate(input)) return {};
    const fields = pushFieldErrors([...(validate.errors ?? [])], '');
    // Only a push that is not an object at all fails without a field (the API answers that with a 400).
    if (Object.keys(fields).length === 0) return { push: ['must be an object'] };
    return fields;
  };
  return Object.assign(check, { validate });
}

/** Runs the schema; throws 422 validation_failed with the field messages, or returns the input as schema-valid. */
export function checkPushSchema(check: PushSchemaCheck, input: unknown): SchemaValidPushInput {
  const errors = check(input);
  if (Object.keys(errors).length > 0) throw validationFailed(errors);
  return input as SchemaValidPushInput;
}

/** Marks an input that a validator running the same schema has accepted (openapi-backend, in the server). */
export function schemaValidated(input: PushInput): SchemaValidPushInput {
  return input as SchemaValidPushInput;
}

export function boundsMessage(b: Bounds): string {
  return `must be an integer from ${b.min} to ${b.max}`;
}

const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

/**
 * Bytes that arrived as they are (a multipart file part) rather than as base64 `content`: the upload stands in the
 * input with an empty `content` for the schema, and its bytes travel beside it, never inflated to base64.
 */
const attachedBytes = new WeakMap<object, FileBytes>();

/** A FileUpload whose bytes are `bytes` (its `content` is empty). */
export function uploadWithBytes(filename: string, contentType: string, bytes: FileBytes): FileUpload {
  const upload: FileUpload = { filename, content_type: contentType, content: '' };
  attachedBytes.set(upload, bytes);
  return upload;
}

/** Decodes standard base64 (the server passes Buffer's decoder; the default is the platform's `atob`). */
export type Base64Decoder = (content: string) => Uint8Array;

export const decodeBase64: Base64Decoder = (content) => {
  const binary = atob(content);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
};

/**
 * The instance's rules on a schema-valid input, then defaults. Throws 422 validation_failed with every failing
 * field at once.
 */
export function normalizePushInput(
  push: SchemaValidPushInput,
  settings: PushRuleSettings,
  decode: Base64Decoder = decodeBase64,
): ValidPush {
  const errors: FieldErrors = {};
  const add = (field: string, message: string) => {
    (errors[field] ??= []).push(message);
  };
  const files: FileUpload[] = push.files ?? [];
  const kind: PushKind = push.kind ?? (files.length > 0 ? 'file' : 'text');

  const off = (what: string, gate: FeatureGate) =>
    add('kind', `${what} pushes are disabled on this instance. ${turnOn(gate, settings.env)}`);
  if (kind === 'file' && !settings.enableFilePushes) off('File', 'filePushes');
  if (kind === 'url' && !settings.enableUrlPushes) off('URL', 'urlPushes');
  if (kind === 'qr' && !settings.enableQrPushes) off('QR code', 'qrPushes');

  const validFiles = kind === 'file' ? checkFiles(files, settings, decode, add) : [];
  const clientEncryption = checkClientEncryption(push.client_encryption ?? null, settings, add);
  const access = readRecipientAccess(push, add);

  // The schema's bounds are 1..90 and 1..100; an instance may narrow them.
  const bounded = (value: number | undefined, field: string, b: Bounds): number => {
    if (value === undefined) return b.default;
    if (value < b.min || value > b.max) add(field, boundsMessage(b));
    return value;
  };
  // One lifetime from the two fields that can give it (durations.ts); days alone keep their own bounds and message.
  const lifetime =
    push.expire_after_duration === undefined
      ? {
          seconds: bounded(push.expire_after_days, 'expire_after_days', settings.expireAfterDays) * DAY_SECONDS,
          errors: {},
        }
      : durationLifetime(push.expire_after_duration, push.expire_after_days, settings);
  for (const [field, messages] of Object.entries(lifetime.errors)) for (const message of messages) add(field, message);
  const expireAfterViews = bounded(push.expire_after_views, 'expire_after_views', settings.expireAfterViews);

  if (Object.keys(errors).length > 0) throw validationFailed(errors);
  return {
    kind,
    payload: push.payload ?? '',
    files: validFiles,
    expireAfterDays: daysOfSeconds(lifetime.seconds),
    expireAfterSeconds: lifetime.seconds,
    expireAfterViews,
    deletableByViewer: push.deletable_by_viewer ?? settings.deletableByViewerDefault,
    retrievalStep: push.retrieval_step ?? settings.retrievalStepDefault,
    passphrase: push.passphrase ?? null,
    name: push.name ?? '',
    note: push.note ?? '',
    clientEncryption,
    ...access,
  };
}

/**
 * The operator's choice (`features.pushes.client_encryption`): an encrypted push while the feature is off, a scheme
 * the instance does not accept, or an ordinary push while encryption is required → 422 on `client_encryption`. (The
 * schema has already checked the marker's shape and the envelopes' form.)
 */
function checkClientEncryption(
  marker: ClientEncryption | null,
  settings: PushRuleSettings,
  add: (field: string, message: string) => void,
): ClientEncryption | null {
  const setting = settings.clientEncryption;
  if (marker === null) {
    if (setting.required) {
      add(
        'client_encryption',
        'This instance accepts only end-to-end encrypted pushes: encrypt the push in the client (see features.pushes.client_encryption). ' +
          turnOn('plainPushes', settings.env),
      );
    }
    return null;
  }
  if (!setting.enabled) {
    add(
      'client_encryption',
      `End-to-end encrypted pushes are turned off on this instance. ${turnOn('clientEncryption', settings.env)}`,
    );
    return null;
  }
  if (!CLIENT_ENCRYPTION_SCHEMES.some((s) => s.scheme === marker.scheme && s.version === marker.version)) {
    add('client_encryption', 'This instance does not accept that encryption scheme or version.');
    return null;
  }
  return { scheme: marker.scheme, version: marker.version };
}

/**
 * Characters no file name keeps: C0 and C1 controls, DEL, the line and paragraph separators, and the Unicode bidi
 * controls (U+061C, U+200E/F, U+202A–U+202E, U+2066–U+2069), with which `report\u202Etxt.exe` reads as `reportexe.txt`.
 */
const UNSAFE_IN_NAMES = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** A file name without control and bidi characters (what is stored, and shown on download and on the pages). */
export function safeFilename(name: string): string {
  const clean = name.replace(UNSAFE_IN_NAMES, '');
  return clean === '' ? 'file' : clean;
}

/** A file name without control and bidi characters, possibly empty (a form's file part, before the push rules). */
export function stripUnsafeInName(name: string): string {
  return name.replace(UNSAFE_IN_NAMES, '');
}

function checkFiles(
  files: FileUpload[],
  settings: PushRuleSettings,
  decode: Base64Decoder,
  add: (field: string, message: string) => void,
): ValidFile[] {
  const valid: ValidFile[] = [];
  // The schema allows 10 files; an instance may allow fewer.
  if (files.length > settings.fileMaxCount) add('files', `at most ${settings.fileMaxCount} files per push`);
  const maxBase64 = Math.ceil(settings.fileMaxBytes / 3) * 4;
  files.slice(0, settings.fileMaxCount).forEach((file, i) => {
    const label = `file ${i + 1}`;
    const attached = attachedBytes.get(file);
    if (attached) {
      if (attached.length > settings.fileMaxBytes)
        add('files', `${label}: larger than the limit of ${settings.fileMaxBytes} bytes`);
      else
        valid.push({
          filename: safeFilename(file.filename),
          contentType: file.content_type ?? DEFAULT_CONTENT_TYPE,
          bytes: attached,
        });
      return;
    }
    // The schema's pattern checks the alphabet only; `contentEncoding: base64` is an annotation Ajv does not check.
    if (file.content.length % 4 !== 0) {
      add('files', `${label}: content must be standard base64 with padding`);
      return;
    }
    // The size limit counts decoded bytes; the length test spares decoding a huge string.
    const bytes = file.content.length > maxBase64 ? null : decode(file.content);
    if (bytes === null || bytes.length > settings.fileMaxBytes) {
      add('files', `${label}: larger than the limit of ${settings.fileMaxBytes} bytes`);
      return;
    }
    valid.push({
      filename: safeFilename(file.filename),
      contentType: file.content_type ?? DEFAULT_CONTENT_TYPE,
      bytes,
    });
  });
  return valid;
}
