/**
 * Validation of `createPush` input for every caller of the domain (the API, and the web create form, which has no
 * openapi-backend in front of it). The contract's `PushInput` schema is the validator (./push-schema.ts): types,
 * lengths, the URL rule, the per-kind rules, file items and the spec's bounds all come from it, with the API's
 * messages. This module adds only what the schema cannot know: the instance's settings (disabled kinds, narrower
 * expiry bounds, file count and decoded size limits), the default kind, the base64 padding the schema's pattern does
 * not check, decoding, and normalisation into a ValidPush. Messages never contain the submitted values.
 */
import type { FileUpload, PushKind } from '../../../sdk/src/generated/types.gen.js';
import { DomainError, type Bounds, type PushInput, type Settings } from './contract.js';
import { pushSchema } from './push-schema.js';

export interface ValidFile {
  filename: string;
  contentType: string;
  bytes: Buffer;
}

export interface ValidPush {
  kind: PushKind;
  payload: string;
  files: ValidFile[];
  expireAfterDays: number;
  expireAfterViews: number;
  deletableByViewer: boolean;
  retrievalStep: boolean;
  passphrase: string | null;
  name: string;
  note: string;
}

const DEFAULT_CONTENT_TYPE = 'application/octet-stream';

export function boundsMessage(b: Bounds): string {
  return `must be an integer from ${b.min} to ${b.max}`;
}

/** Whether the request needs a token because of files (files present at all, or kind file). */
export function wantsFiles(input: PushInput): boolean {
  const raw = input as Record<string, unknown>;
  return raw.files !== undefined || raw.kind === 'file';
}

export function validatePushInput(input: PushInput, settings: Settings, opts: { schemaChecked?: boolean } = {}): ValidPush {
  const push: PushInput = input ?? {};
  // 1. The schema, with the API's per-field messages (skipped when openapi-backend already applied the same schema).
  //    Its fields are not checked again below.
  const errors = opts.schemaChecked ? {} : pushSchema()(push);
  const schemaFailed = new Set(Object.keys(errors));
  const passes = (field: keyof PushInput) => !schemaFailed.has(field);
  const add = (field: string, message: string) => {
    (errors[field] ??= []).push(message);
  };
  if (schemaFailed.has('push')) throw invalid(errors); // not an object: nothing below applies

  // 2. The default kind (the schema only says which fields each kind needs).
  const files: FileUpload[] = passes('files') ? (push.files ?? []) : [];
  const kind: PushKind = push.kind ?? (files.length > 0 ? 'file' : 'text');

  // 3. The instance's rules, each on a field the schema accepted.
  if (passes('kind')) {
    if (kind === 'file' && !settings.enableFilePushes) add('kind', 'File pushes are disabled on this instance.');
    if (kind === 'url' && !settings.enableUrlPushes) add('kind', 'URL pushes are disabled on this instance.');
    if (kind === 'qr' && !settings.enableQrPushes) add('kind', 'QR code pushes are disabled on this instance.');
  }

  const validFiles: ValidFile[] = [];
  if (kind === 'file' && passes('files')) {
    // The schema allows 10 files; an instance may allow fewer.
    if (files.length > settings.fileMaxCount) add('files', `at most ${settings.fileMaxCount} files per push`);
    const maxBase64 = Math.ceil(settings.fileMaxBytes / 3) * 4;
    files.slice(0, settings.fileMaxCount).forEach((file, i) => {
      const label = `file ${i + 1}`;
      // The schema's pattern checks the alphabet only; `contentEncoding: base64` is an annotation Ajv does not check.
      if (file.content.length % 4 !== 0) {
        add('files', `${label}: content must be standard base64 with padding`);
        return;
      }
      // The size limit is the instance's and counts decoded bytes; the length test spares decoding a huge string.
      const bytes = file.content.length > maxBase64 ? null : Buffer.from(file.content, 'base64');
      if (bytes === null || bytes.length > settings.fileMaxBytes) {
        add('files', `${label}: larger than the limit of ${settings.fileMaxBytes} bytes`);
        return;
      }
      validFiles.push({ filename: file.filename, contentType: file.content_type ?? DEFAULT_CONTENT_TYPE, bytes });
    });
  }

  // The schema's bounds are 1..90 and 1..100; an instance may narrow them.
  const bounded = (field: 'expire_after_days' | 'expire_after_views', b: Bounds): number => {
    const value = push[field];
    if (value === undefined || !passes(field)) return b.default;
    if (value < b.min || value > b.max) add(field, boundsMessage(b));
    return value;
  };
  const expireAfterDays = bounded('expire_after_days', settings.expireAfterDays);
  const expireAfterViews = bounded('expire_after_views', settings.expireAfterViews);

  if (Object.keys(errors).length > 0) throw invalid(errors);

  // 4. Normalisation: the input satisfies the schema here, so every present field has its type.
  return {
    kind,
    payload: push.payload ?? '',
    files: validFiles,
    expireAfterDays,
    expireAfterViews,
    deletableByViewer: push.deletable_by_viewer ?? settings.deletableByViewerDefault,
    retrievalStep: push.retrieval_step ?? settings.retrievalStepDefault,
    passphrase: push.passphrase ?? null,
    name: push.name ?? '',
    note: push.note ?? '',
  };
}

function invalid(fields: Record<string, string[]>): DomainError {
  return new DomainError('validation_failed', 'The push is invalid.', { fields });
}
