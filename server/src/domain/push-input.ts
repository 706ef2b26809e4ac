/**
 * The rules of `createPush` that depend on the instance (bounds, disabled kinds, file limits) plus a defensive
 * re-check of the schema's own rules, since the domain may be called without the HTTP validator in front of it.
 * Messages never contain the submitted values.
 */
import type { PushKind } from '../../../sdk/src/generated/types.gen.js';
import { DomainError, type Bounds, type PushInput, type Settings } from './contract.js';

export const PAYLOAD_MAX = 1_048_576;
export const QR_PAYLOAD_MAX = 1_024;
export const PASSPHRASE_MAX = 1_024;
export const NAME_MAX = 1_024;
export const NOTE_MAX = 10_000;
const KINDS: readonly PushKind[] = ['text', 'file', 'url', 'qr'];
const FILENAME = /^[^/\\\x00-\x1f]+$/;
const CONTENT_TYPE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(\s*;.*)?$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

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

/** Length in Unicode code points, as JSON Schema's maxLength counts. */
function codePoints(s: string, stopAfter: number): number {
  if (s.length <= stopAfter) return s.length; // code points ≤ UTF-16 units
  let n = 0;
  for (const _ of s) {
    n += 1;
    if (n > stopAfter) break;
  }
  return n;
}

function isHttpUrl(s: string): boolean {
  if (!/^[Hh][Tt][Tt][Pp][Ss]?:\/\/[^\s/?#]+/.test(s) || /\s/.test(s)) return false;
  try {
    const u = new URL(s);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

export function boundsMessage(b: Bounds): string {
  return `must be an integer from ${b.min} to ${b.max}`;
}

/** Whether the request needs a token because of files (files present at all, or kind file). */
export function wantsFiles(input: PushInput): boolean {
  const raw = input as Record<string, unknown>;
  return raw.files !== undefined || raw.kind === 'file';
}

export function validatePushInput(input: PushInput, settings: Settings): ValidPush {
  const raw = (input ?? {}) as Record<string, unknown>;
  const errors: Record<string, string[]> = {};
  const add = (field: string, message: string) => {
    (errors[field] ??= []).push(message);
  };

  // kind
  const rawFiles = raw.files;
  let files: unknown[] = [];
  if (rawFiles !== undefined) {
    if (Array.isArray(rawFiles)) files = rawFiles;
    else add('files', 'must be an array of files');
  }
  let kind: PushKind = files.length > 0 ? 'file' : 'text';
  if (raw.kind !== undefined) {
    if (typeof raw.kind === 'string' && (KINDS as readonly string[]).includes(raw.kind)) kind = raw.kind as PushKind;
    else add('kind', `must be one of ${KINDS.join(', ')}`);
  }
  if (kind === 'file' && !settings.enableFilePushes) add('kind', 'File pushes are disabled on this instance.');
  if (kind === 'url' && !settings.enableUrlPushes) add('kind', 'URL pushes are disabled on this instance.');
  if (kind === 'qr' && !settings.enableQrPushes) add('kind', 'QR code pushes are disabled on this instance.');

  // payload
  let payload = '';
  if (raw.payload !== undefined && raw.payload !== null) {
    if (typeof raw.payload !== 'string') add('payload', 'must be a string');
    else payload = raw.payload;
  }
  if (kind !== 'file' && payload === '' && !errors.payload) add('payload', 'is required');
  else if (typeof raw.payload === 'string') {
    if (kind === 'qr' && codePoints(payload, QR_PAYLOAD_MAX) > QR_PAYLOAD_MAX) {
      add('payload', `must be at most ${QR_PAYLOAD_MAX} characters for a QR code push`);
    } else if (codePoints(payload, PAYLOAD_MAX) > PAYLOAD_MAX) {
      add('payload', `must be at most ${PAYLOAD_MAX} characters`);
    }
    if (kind === 'url' && payload !== '' && !isHttpUrl(payload)) add('payload', 'must be an absolute http:// or https:// URL');
  }

  // files
  const validFiles: ValidFile[] = [];
  if (kind !== 'file' && files.length > 0) add('files', 'only file pushes take files');
  if (kind === 'file') {
    if (files.length === 0 && !errors.files) add('files', 'a file push needs at least one file');
    if (files.length > settings.fileMaxCount) add('files', `at most ${settings.fileMaxCount} files per push`);
    const maxBase64 = Math.ceil(settings.fileMaxBytes / 3) * 4;
    files.slice(0, settings.fileMaxCount).forEach((item, i) => {
      const label = `file ${i + 1}`;
      if (!item || typeof item !== 'object' || Array.isArray(item)) {
        add('files', `${label}: must be an object with filename and content`);
        return;
      }
      const f = item as Record<string, unknown>;
      let ok = true;
      if (typeof f.filename !== 'string' || f.filename.length === 0 || codePoints(f.filename, 255) > 255 || !FILENAME.test(f.filename)) {
        add('files', `${label}: filename must be 1 to 255 characters without path separators or control characters`);
        ok = false;
      }
      let contentType = 'application/octet-stream';
      if (f.content_type !== undefined) {
        if (typeof f.content_type !== 'string' || f.content_type.length > 255 || !CONTENT_TYPE.test(f.content_type)) {
          add('files', `${label}: content_type must be a media type such as text/plain`);
          ok = false;
        } else contentType = f.content_type;
      }
      if (typeof f.content !== 'string' || f.content.length % 4 !== 0 || !BASE64.test(f.content)) {
        add('files', `${label}: content must be standard base64 with padding`);
        return;
      }
      if (f.content.length > maxBase64) {
        add('files', `${label}: larger than the limit of ${settings.fileMaxBytes} bytes`);
        return;
      }
      const bytes = Buffer.from(f.content, 'base64');
      if (bytes.length > settings.fileMaxBytes) {
        add('files', `${label}: larger than the limit of ${settings.fileMaxBytes} bytes`);
        return;
      }
      if (ok) validFiles.push({ filename: f.filename as string, contentType, bytes });
    });
  }

  // expiry
  const bound = (field: 'expire_after_days' | 'expire_after_views', b: Bounds): number => {
    const v = raw[field];
    if (v === undefined || v === null) return b.default;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < b.min || v > b.max) {
      add(field, boundsMessage(b));
      return b.default;
    }
    return v;
  };
  const expireAfterDays = bound('expire_after_days', settings.expireAfterDays);
  const expireAfterViews = bound('expire_after_views', settings.expireAfterViews);

  const flag = (field: 'deletable_by_viewer' | 'retrieval_step', fallback: boolean): boolean => {
    const v = raw[field];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'boolean') {
      add(field, 'must be true or false');
      return fallback;
    }
    return v;
  };
  const deletableByViewer = flag('deletable_by_viewer', settings.deletableByViewerDefault);
  const retrievalStep = flag('retrieval_step', settings.retrievalStepDefault);

  const text = (field: 'passphrase' | 'name' | 'note', max: number, min = 0): string | null => {
    const v = raw[field];
    if (v === undefined || v === null) return null;
    if (typeof v !== 'string') {
      add(field, 'must be a string');
      return null;
    }
    const n = codePoints(v, max);
    if (n < min || n > max) {
      add(field, min > 0 ? `must be ${min} to ${max} characters` : `must be at most ${max} characters`);
      return null;
    }
    return v;
  };
  const passphrase = text('passphrase', PASSPHRASE_MAX, 1);
  const name = text('name', NAME_MAX) ?? '';
  const note = text('note', NOTE_MAX) ?? '';

  if (Object.keys(errors).length > 0) {
    throw new DomainError('validation_failed', 'The push is invalid.', { fields: errors });
  }
  return {
    kind,
    payload,
    files: validFiles,
    expireAfterDays,
    expireAfterViews,
    deletableByViewer,
    retrievalStep,
    passphrase,
    name,
    note,
  };
}
