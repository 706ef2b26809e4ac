import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { contract } from './src/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name: string) => `${root}node_modules/.bin/${name}`;
const run = (args: string[]) =>
  spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });

const v = contract();
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking an arbitrary OpenAPI document
type Json = Record<string, any>;

interface NamedExample {
  where: string;
  schema: unknown;
  value: unknown;
}

/** Every named example of the spec with the schema it illustrates. */
function namedExamples(): NamedExample[] {
  const out: NamedExample[] = [];
  for (const op of v.operations()) {
    const body = op.object.requestBody ? v.deref<Json>(op.object.requestBody) : undefined;
    for (const [media, m] of Object.entries<Json>(body?.content ?? {})) {
      for (const [name, ex] of Object.entries<Json>(m.examples ?? {})) {
        out.push({ where: `${op.operationId} request ${media} ${name}`, schema: m.schema, value: v.deref<Json>(ex).value });
      }
    }
    for (const [status, r] of Object.entries<Json>(op.object.responses as Json)) {
      for (const [media, m] of Object.entries<Json>(v.deref<Json>(r).content ?? {})) {
        for (const [name, ex] of Object.entries<Json>(m.examples ?? {})) {
          out.push({ where: `${op.operationId} ${status} ${media} ${name}`, schema: m.schema, value: v.deref<Json>(ex).value });
        }
      }
    }
  }
  return out;
}

describe('the OpenAPI contract', () => {
  it('lints with zero problems under the committed Redocly config', () => {
    const result = run([bin('redocly'), 'lint', '--config', 'openapi/redocly.yaml', 'openapi/openapi.yaml']);
    const output = result.stdout + result.stderr;
    expect(output).not.toMatch(/warning|error/i);
    expect(output).toContain('Your API description is valid');
    expect(result.status).toBe(0);
  });

  it('validates every named example against its schema with Ajv 2020', () => {
    const examples = namedExamples();
    expect(examples.length).toBeGreaterThan(50);
    const failures = examples
      .map((e) => ({ where: e.where, errors: v.validateSchema(e.schema, e.value).errors }))
      .filter((f) => f.errors.length > 0);
    expect(failures).toEqual([]);
  });

  it('rejects a broken example, so the example check can fail', () => {
    const created = v.deref<Json>({ $ref: '#/components/examples/CreatedTextPush' }).value;
    const { views_remaining, ...missing } = created;
    expect(views_remaining).toBe(5);
    expect(v.validateComponent('PushOwner', created).valid).toBe(true);
    expect(v.validateComponent('PushOwner', missing).errors).toContain("/ must have required property 'views_remaining'");
    expect(v.validateComponent('PushOwner', { ...created, created_at: 'yesterday' }).valid).toBe(false);
  });

  it('gives every operation at least one success and one error example', () => {
    const missing: string[] = [];
    for (const op of v.operations()) {
      const statuses = Object.entries<Json>(op.object.responses as Json).map(([status, r]) => ({
        status: Number(status),
        examples: Object.values<Json>(v.deref<Json>(r).content ?? {}).flatMap((m) => Object.keys(m.examples ?? {})),
      }));
      if (!statuses.some((s) => s.status < 300 && s.examples.length > 0)) missing.push(`${op.operationId}: success`);
      if (!statuses.some((s) => s.status >= 400 && s.examples.length > 0)) missing.push(`${op.operationId}: error`);
    }
    expect(missing).toEqual([]);
  });

  it('has the operations of the decisions plus the signed file download, each with its error statuses', () => {
    const byId = Object.fromEntries(v.operations().map((o) => [o.operationId, o]));
    expect(Object.keys(byId).sort()).toEqual(
      ['createPush', 'downloadPushFile', 'expirePush', 'getPush', 'getPushAudit', 'getVersion', 'listActivePushes', 'listExpiredPushes', 'previewPush'].sort(),
    );
    const statuses = (id: string) => Object.keys(byId[id]!.object.responses as Json).sort();
    expect(statuses('createPush')).toEqual(['201', '400', '401', '413', '422', '429', '500', '503']);
    expect(statuses('getPush')).toEqual(['200', '400', '401', '404', '429', '500', '503']);
    expect(statuses('expirePush')).toEqual(['200', '401', '403', '404', '429', '500', '503']);
    expect(statuses('getPushAudit')).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
    for (const id of ['listActivePushes', 'listExpiredPushes']) expect(statuses(id)).toEqual(['200', '400', '401', '429', '500', '503']);
    // active and expired are matched before {url_token}: they are their own paths.
    expect(byId.listActivePushes!.path).toBe('/api/v2/pushes/active');
    expect((v.document as Json)['x-json-suffix']).toBe(true);
  });

  it('answers the seed\'s gaps the way the decisions fill them', () => {
    const schemas = (v.document as Json).components.schemas;
    // The push record: every reference key plus kind, expires_at and passphrase_protected; never the passphrase.
    expect(schemas.Push.required).toEqual(
      expect.arrayContaining(['url_token', 'expired', 'expired_on', 'deleted', 'created_at', 'updated_at', 'expire_after_days', 'expire_after_views', 'days_remaining', 'views_remaining', 'deletable_by_viewer', 'retrieval_step', 'json_url', 'html_url', 'kind', 'expires_at', 'passphrase_protected']),
    );
    expect(Object.keys(schemas.Push.properties)).not.toContain('passphrase');
    expect(schemas.PushFile.required).toEqual(['id', 'filename', 'content_type', 'size', 'url']);
    expect(schemas.FileUpload.required).toEqual(['filename', 'content']);
    expect(schemas.AuditEntry.properties.kind.enum).toEqual(['creation', 'view', 'owner_view', 'failed_view', 'failed_passphrase', 'expire']);
    expect(schemas.ErrorResponse.required).toEqual(['error', 'code']);
    expect(schemas.PushInput.properties.expire_after_days).toMatchObject({ minimum: 1, maximum: 90 });
    expect(schemas.PushInput.properties.expire_after_views).toMatchObject({ minimum: 1, maximum: 100 });
    expect(schemas.PushInput.properties.files.maxItems).toBe(10);
    const page = v.deref<Json>({ $ref: '#/components/parameters/Page' });
    expect(page.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 200, default: 1 });
    const getPush = v.operation('getPush').object as Json;
    expect(getPush.parameters.map((p: Json) => v.deref<Json>(p).name)).toEqual(['X-Passphrase', 'passphrase']);
    const listOk = (v.operation('listActivePushes').object as Json).responses['200'];
    expect(Object.keys(listOk.headers)).toEqual(expect.arrayContaining(['Link', 'X-Total-Count', 'Cache-Control']));
    expect(Object.keys(v.response('getPush', 429)!.headers as Json)).toContain('Retry-After');
    expect(Object.keys((v.document as Json).components.securitySchemes).sort()).toEqual(['bearerAuth', 'legacyEmail', 'legacyToken']);
  });

  it('enforces the per-kind create rules in the schema itself', () => {
    const ok = (push: Json) => v.validateComponent('PushInput', push).valid;
    expect(ok({ payload: 'x' })).toBe(true);
    expect(ok({})).toBe(false); // text by default: payload required
    expect(ok({ kind: 'text', payload: '' })).toBe(false);
    expect(ok({ kind: 'url', payload: 'https://example.com/a' })).toBe(true);
    expect(ok({ kind: 'url', payload: 'javascript:alert(1)' })).toBe(false);
    expect(ok({ kind: 'qr', payload: 'q'.repeat(1024) })).toBe(true);
    expect(ok({ kind: 'qr', payload: 'q'.repeat(1025) })).toBe(false);
    expect(ok({ kind: 'file' })).toBe(false); // a file push needs a file
    expect(ok({ files: [{ filename: 'a.txt', content: 'QQ==' }] })).toBe(true); // kind becomes file
    expect(ok({ kind: 'text', payload: 'x', files: [{ filename: 'a.txt', content: 'QQ==' }] })).toBe(false);
    expect(ok({ kind: 'bogus', payload: 'x' })).toBe(false);
    expect(ok({ payload: 'x', expire_after_days: 0 })).toBe(false);
    expect(ok({ payload: 'x', expire_after_views: 101 })).toBe(false);
    expect(ok({ payload: 'x', some_other_dialect_field: 1 })).toBe(true); // unknown properties are ignored
  });

  it('skips the plaintext-only checks for end-to-end encrypted pushes and checks the envelopes\' form instead', () => {
    const ok = (push: Json) => v.validateComponent('PushInput', push).valid;
    const marker = { scheme: 'aes-256-gcm', version: 1 };
    const envelope = (chars: number) => `spe1.${'A'.repeat(chars)}`;
    const created = v.deref<Json>({ $ref: '#/components/examples/CreateEncryptedTextRequest' }).value.push;
    expect(ok(created)).toBe(true);
    // The URL shape and the QR length are the client's to check; the envelope's form is the server's.
    expect(ok({ kind: 'url', payload: envelope(60), client_encryption: marker })).toBe(true);
    expect(ok({ kind: 'url', payload: envelope(60) })).toBe(false); // an ordinary URL push keeps its rule
    expect(ok({ kind: 'url', payload: envelope(60), client_encryption: null })).toBe(false); // null is ordinary
    expect(ok({ kind: 'qr', payload: envelope(5499), client_encryption: marker })).toBe(true);
    expect(ok({ kind: 'qr', payload: envelope(5500), client_encryption: marker })).toBe(false);
    expect(ok({ kind: 'qr', payload: envelope(1100) })).toBe(false);
    expect(ok({ kind: 'url', client_encryption: marker })).toBe(false); // still needs a payload
    // Plaintext sent with the marker is refused, so a client bug cannot store a secret the server thinks it cannot read.
    expect(ok({ payload: 'correct horse battery staple', client_encryption: marker })).toBe(false);
    expect(ok({ payload: envelope(37), client_encryption: marker })).toBe(false); // shorter than IV + tag
    expect(ok({ payload: `${envelope(40)}=`, client_encryption: marker })).toBe(false); // base64url has no padding
    // The 1 MiB limit applies to the ciphertext.
    expect(ok({ payload: envelope(1048576 - 5), client_encryption: marker })).toBe(true);
    expect(ok({ payload: envelope(1048576 - 4), client_encryption: marker })).toBe(false);
    const file = v.deref<Json>({ $ref: '#/components/examples/CreateEncryptedFileRequest' }).value.push;
    expect(ok(file)).toBe(true);
    expect(ok({ ...file, files: [{ ...file.files[0], filename: 'id_ed25519' }] })).toBe(false);
    expect(ok({ ...file, files: [{ ...file.files[0], content: 'LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0K' }] })).toBe(false);
    expect(ok({ ...file, files: [{ ...file.files[0], filename: envelope(251) }] })).toBe(false); // 256 > 255
    // Unknown schemes and versions are refused (a client must not believe the server could keep a promise it does not know).
    expect(ok({ ...created, client_encryption: { scheme: 'aes-256-gcm', version: 2 } })).toBe(false);
    expect(ok({ ...created, client_encryption: { scheme: 'xchacha20-poly1305', version: 1 } })).toBe(false);
    expect(ok({ ...created, client_encryption: { ...marker, key: 'no' } })).toBe(false);
  });

  it('returns the encryption marker in every push record and reports the feature in the version report', () => {
    const schemas = (v.document as Json).components.schemas;
    expect(Object.keys(schemas.Push.properties)).toContain('client_encryption');
    expect(Object.keys(schemas.PreviewResponse.properties)).toContain('client_encryption');
    for (const name of ['CreatedTextPush', 'RetrievedFilePush', 'ExpiredPush', 'DeletedPush']) {
      expect(v.deref<Json>({ $ref: `#/components/examples/${name}` }).value.client_encryption, name).toBeNull();
    }
    const feature = (f: Json) => v.validateComponent('ClientEncryptionFeature', f).valid;
    const schemes = [{ scheme: 'aes-256-gcm', version: 1 }];
    expect(feature({ enabled: true, default: false, required: false, schemes })).toBe(true);
    expect(feature({ enabled: false, default: false, required: false, schemes: [] })).toBe(true);
    expect(feature({ enabled: true, default: true, required: true, schemes })).toBe(true);
    expect(feature({ enabled: true, default: false, required: true, schemes })).toBe(false); // required implies default
    expect(feature({ enabled: false, default: true, required: false, schemes })).toBe(false); // default implies enabled
    expect(feature({ enabled: true, default: false, required: false, schemes: [] })).toBe(false);
    const version = v.deref<Json>({ $ref: '#/components/examples/Version' }).value;
    expect(version.features.pushes.client_encryption).toMatchObject({ enabled: true, schemes });
  });

  it('keeps the bundled spec and the generated SDK up to date', () => {
    expect(() => execFileSync(process.execPath, ['scripts/check-generated.mjs'], { cwd: root, encoding: 'utf8', stdio: 'pipe' })).not.toThrow();
  });

  it('type-checks the SDK (generated client and facade)', () => {
    const result = run([`${root}node_modules/typescript/bin/tsc`, '-p', 'sdk/test/contract/tsconfig.json']);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('type-checks the whole repository (server, SDK, conformance, tests, scripts)', () => {
    const result = run([`${root}node_modules/typescript/bin/tsc`, '-p', 'tsconfig.json']);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('documents every x- extension it uses', () => {
    const readme = readFileSync(`${root}openapi/README.md`, 'utf8');
    const used = new Set(JSON.stringify(v.document).match(/"x-[a-z-]+"/g)?.map((s) => s.slice(1, -1)));
    for (const ext of used) expect(readme).toContain(ext);
  });
});
