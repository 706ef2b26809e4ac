/**
 * The domain validates a push with the contract's PushInput schema, not with a copy of its rules: the web create
 * form calls core.pushes.create without openapi-backend in front, and must be refused exactly as the API is. Each
 * bad input below goes both ways on the same Core: POST /api/v2/pushes (openapi-backend's 422) and
 * core.pushes.create (an ApiError), and the per-field errors must be equal. Then: the compiled schema
 * is the bundled document's, and a change to the document changes what the domain accepts.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '@secret-push/rules';
import { type PushInput } from '../../src/core.js';
import { BUNDLED_SPEC_PATH, compilePushSchema, pushSchema } from '../../src/push/push-schema.js';
import { repoRoot } from '../../src/config/settings.js';
import { bundledDocument, makeAjv } from '@secret-push/contract';
import { startRealApi, type RealApi } from '../api/support/real.js';
import { ctx } from './helpers.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking the bundled OpenAPI document
type Json = Record<string, any>;
const spec = JSON.parse(readFileSync(BUNDLED_SPEC_PATH, 'utf8')) as Json;
const pushInput = spec.components.schemas.PushInput as Json;
const fileUpload = spec.components.schemas.FileUpload as Json;
const PAYLOAD_MAX: number = pushInput.properties.payload.maxLength;
const QR_MAX: number = pushInput.allOf.find((r: Json) => r.if?.properties?.kind?.const === 'qr').then.properties.payload
  .maxLength;
const FILES_MAX: number = pushInput.properties.files.maxItems;
const DAYS_MAX: number = pushInput.properties.expire_after_days.maximum;
const VIEWS_MAX: number = pushInput.properties.expire_after_views.maximum;
const PASSPHRASE_MAX: number = pushInput.properties.passphrase.maxLength;
const NAME_MAX: number = pushInput.properties.name.maxLength;
const NOTE_MAX: number = pushInput.properties.note.maxLength;
const FILENAME_MAX: number = fileUpload.properties.filename.maxLength;

const file = (over: Json = {}) => ({ filename: 'id_ed25519', content: Buffer.from('key').toString('base64'), ...over });

/** Bad inputs, each with the fields it must be refused on (so an empty or partial answer cannot pass). */
const BAD: [string, Json, string[]][] = [
  ['no payload for the default kind', {}, ['payload']],
  ['empty text payload', { payload: '' }, ['payload']],
  ['empty payload on kind text', { kind: 'text', payload: '' }, ['payload']],
  ['payload not a string', { payload: 42 }, ['payload']],
  ['payload null', { payload: null }, ['payload']],
  ['text payload one over the limit', { payload: 't'.repeat(PAYLOAD_MAX + 1) }, ['payload']],
  ['javascript: url', { kind: 'url', payload: 'javascript:alert(1)' }, ['payload']],
  ['ftp url', { kind: 'url', payload: 'ftp://example.com/x' }, ['payload']],
  ['url without a host', { kind: 'url', payload: 'http://' }, ['payload']],
  ['url push without payload', { kind: 'url' }, ['payload']],
  ['qr payload one over the limit', { kind: 'qr', payload: 'q'.repeat(QR_MAX + 1) }, ['payload']],
  ['empty qr payload', { kind: 'qr', payload: '' }, ['payload']],
  ['unknown kind', { kind: 'bogus', payload: 'x' }, ['kind']],
  ['kind not a string', { kind: 5, payload: 'x' }, ['kind']],
  ['days 0', { payload: 'x', expire_after_days: 0 }, ['expire_after_days']],
  ['days over the spec bound', { payload: 'x', expire_after_days: DAYS_MAX + 1 }, ['expire_after_days']],
  ['days not an integer', { payload: 'x', expire_after_days: 1.5 }, ['expire_after_days']],
  ['days as a string', { payload: 'x', expire_after_days: '7' }, ['expire_after_days']],
  ['views 0', { payload: 'x', expire_after_views: 0 }, ['expire_after_views']],
  ['views over the spec bound', { payload: 'x', expire_after_views: VIEWS_MAX + 1 }, ['expire_after_views']],
  ['one file over the spec count', { files: Array.from({ length: FILES_MAX + 1 }, () => file()) }, ['files']],
  ['files on a text push', { kind: 'text', payload: 'x', files: [file()] }, ['files']],
  ['files on a url push', { kind: 'url', payload: 'https://example.com', files: [file()] }, ['files']],
  ['files on a qr push', { kind: 'qr', payload: 'q', files: [file()] }, ['files']],
  ['kind file without files', { kind: 'file' }, ['files']],
  ['kind file with no file', { kind: 'file', files: [] }, ['files']],
  ['files not an array', { kind: 'file', files: { filename: 'a', content: 'YQ==' } }, ['files']],
  ['a file that is not an object', { files: ['YQ=='] }, ['files']],
  ['bad base64', { files: [file({ content: 'not base64!' })] }, ['files']],
  ['filename with a slash', { files: [file({ filename: 'a/b' })] }, ['files']],
  ['filename with a control character', { files: [file({ filename: 'a\nb' })] }, ['files']],
  ['empty filename', { files: [file({ filename: '' })] }, ['files']],
  ['filename one over the limit', { files: [file({ filename: 'f'.repeat(FILENAME_MAX + 1) })] }, ['files']],
  ['bad content type', { files: [file({ content_type: 'text' })] }, ['files']],
  ['a file without content', { files: [{ filename: 'a' }] }, ['files']],
  ['second file bad among good ones', { files: [file(), file({ filename: '../x' })] }, ['files']],
  ["passphrase ''", { payload: 'x', passphrase: '' }, ['passphrase']],
  ['passphrase one over the limit', { payload: 'x', passphrase: 'p'.repeat(PASSPHRASE_MAX + 1) }, ['passphrase']],
  ['passphrase not a string', { payload: 'x', passphrase: 1234 }, ['passphrase']],
  ['name one over the limit', { payload: 'x', name: 'n'.repeat(NAME_MAX + 1) }, ['name']],
  ['note one over the limit', { payload: 'x', note: 'n'.repeat(NOTE_MAX + 1) }, ['note']],
  ['deletable_by_viewer not a boolean', { payload: 'x', deletable_by_viewer: 'yes' }, ['deletable_by_viewer']],
  ['retrieval_step not a boolean', { payload: 'x', retrieval_step: 1 }, ['retrieval_step']],
  [
    'many fields at once',
    {
      kind: 'url',
      payload: 'javascript:x',
      expire_after_days: 0,
      expire_after_views: 101,
      passphrase: '',
      files: [file()],
    },
    ['payload', 'expire_after_days', 'expire_after_views', 'passphrase', 'files'],
  ],
];

let api: RealApi;
let owner: { token: string; userId: string };

beforeAll(async () => {
  api = await startRealApi();
  owner = await api.user('schema-owner@example.org');
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
});

async function viaHttp(push: Json): Promise<Record<string, string[]>> {
  const r = await api.raw('/api/v2/pushes', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
    body: JSON.stringify({ push }),
  });
  expect({ status: r.status, code: r.body?.code }).toEqual({ status: 422, code: 'validation_failed' });
  return r.body.errors;
}

async function viaDomain(push: Json): Promise<Record<string, string[]>> {
  const error = await api.core.pushes.create(push as PushInput, ctx(owner.userId)).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).code).toBe('validation_failed');
  return (error as ApiError).details.fields ?? {};
}

describe('the domain refuses what the schema refuses, with the API’s field errors', () => {
  it.each(BAD)('%s', async (_label, push, fields) => {
    const http = await viaHttp(push);
    const domain = await viaDomain(push);
    expect(domain).toEqual(http);
    expect(Object.keys(domain).sort()).toEqual([...fields].sort());
    for (const messages of Object.values(domain)) expect(messages.length).toBeGreaterThan(0);
  });

  it('accepts at the limits the spec sets, through both paths', async () => {
    const ok: Json[] = [
      { payload: 't'.repeat(PAYLOAD_MAX) },
      { kind: 'qr', payload: 'q'.repeat(QR_MAX) },
      { kind: 'url', payload: 'https://example.com/a?b=c' },
      {
        payload: 'x',
        expire_after_days: DAYS_MAX,
        expire_after_views: VIEWS_MAX,
        passphrase: 'p'.repeat(PASSPHRASE_MAX),
      },
      { files: Array.from({ length: FILES_MAX }, () => file()) },
      { kind: 'file', files: [file({ content: '' })] },
    ];
    for (const push of ok) {
      const created = await api.core.pushes.create(push as PushInput, ctx(owner.userId));
      expect(created.expired).toBe(false);
      const r = await api.raw('/api/v2/pushes', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${owner.token}` },
        body: JSON.stringify({ push }),
      });
      expect(r.status).toBe(201);
    }
  });

  it('refuses a push that is not an object on a push field', async () => {
    for (const push of ['x', 7, [], true]) {
      expect(await viaDomain(push as never)).toEqual({ push: ['must be an object'] });
    }
  });
});

describe('the compiled schema is the bundled document’s', () => {
  it('reads the same file the HTTP layer serves and validates with', () => {
    // The docs page serves the file at BUNDLED_SPEC_PATH; openapi-backend validates with bundledDocument().
    expect(BUNDLED_SPEC_PATH).toBe(path.join(repoRoot, 'openapi', 'bundled', 'openapi.json'));
    expect(spec).toEqual(bundledDocument());
    expect(pushSchema().validate.schema).toEqual(pushInput);
    expect(pushSchema()).toBe(pushSchema()); // compiled once
  });

  it('takes its limits from the document: the payload limit is the JSON’s maxLength, not a constant', () => {
    const check = pushSchema();
    expect((check.validate.schema as Json).properties.payload.maxLength).toBe(PAYLOAD_MAX);
    expect(check({ payload: 'x'.repeat(PAYLOAD_MAX) })).toEqual({});
    expect(check({ payload: 'x'.repeat(PAYLOAD_MAX + 1) })).toEqual({
      payload: [`is too long (at most ${PAYLOAD_MAX} characters)`],
    });
  });

  it('picks up a change to the schema (PushInput and the FileUpload it refers to)', () => {
    const changed = structuredClone(spec);
    changed.components.schemas.PushInput.properties.payload.maxLength = 5;
    changed.components.schemas.PushInput.properties.expire_after_days.maximum = 3;
    changed.components.schemas.FileUpload.properties.filename.maxLength = 4;
    const check = compilePushSchema(changed);
    expect(check({ payload: 'x'.repeat(5), expire_after_days: 3 })).toEqual({});
    expect(check({ payload: 'x'.repeat(6), expire_after_days: 4, files: [] })).toEqual({
      payload: ['is too long (at most 5 characters)'],
      expire_after_days: ['must be at most 3'],
    });
    expect(check({ files: [file({ filename: 'abcde' })] })).toEqual({
      files: ['file 1 filename is too long (at most 4 characters)'],
    });
    // The bundled check is untouched by the changed copy.
    expect(pushSchema()({ payload: 'x'.repeat(6), expire_after_days: 4 })).toEqual({});
  });

  it('validates the OpenAPI formats as the HTTP layer does (one shared Ajv configuration)', () => {
    const check = (format: string, value: unknown) =>
      makeAjv().compile({ type: typeof value === 'number' ? 'number' : 'string', format })(value);
    expect([1, 2 ** 31, -(2 ** 31), 1.5].map((v) => check('int32', v))).toEqual([true, false, true, false]);
    expect(['YQ==', 'YQ', 'Y===', ''].map((v) => check('byte', v))).toEqual([true, false, false, true]);
    expect(['https://a.example', 'not a uri'].map((v) => check('uri', v))).toEqual([true, false]);
    expect(['2030-01-01T00:00:00.000Z', '2030-01-01'].map((v) => check('date-time', v))).toEqual([true, false]);
  });
});
