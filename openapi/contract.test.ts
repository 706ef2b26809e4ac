import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { contract, contractV1, corsRules } from './src/index.js';
import {
  expectedValidationError,
  keepsValidationErrorPromise,
  invalidExamples,
  missingExampleKinds,
  namedExamples,
} from './tooling/named-examples.js';
import { backendFor } from './tooling/openapi-backend.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const bin = (name: string) => `${root}node_modules/.bin/${name}`;
const run = (args: string[]) =>
  spawnSync(process.execPath, args, {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
/**
 * tsc's incremental state in node_modules/.cache (never committed): a warm run re-checks only what changed and what
 * depends on it, and reports the errors it remembers, so the check says the same as a cold one.
 */
const incremental = (name: string) => [
  '--incremental',
  '--tsBuildInfoFile',
  `${root}node_modules/.cache/tsc/${name}.tsbuildinfo`,
];

const v = contract();
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking an arbitrary OpenAPI document
type Json = Record<string, any>;

describe('the OpenAPI contract', () => {
  it('lints with zero problems under the committed Redocly config', () => {
    const result = run([bin('redocly'), 'lint', '--config', 'openapi/redocly.yaml', 'openapi/openapi.yaml']);
    const output = result.stdout + result.stderr;
    expect(output).not.toMatch(/warning|error/i);
    expect(output).toContain('Your API description is valid');
    expect(result.status).toBe(0);
  });

  it('validates every named example against its schema with Ajv 2020', () => {
    const examples = namedExamples(v);
    expect(examples.length).toBeGreaterThan(50);
    expect(invalidExamples(v, examples)).toEqual([]);
  });

  it('rejects a broken example, so the example check can fail', () => {
    const created = v.deref<Json>({ $ref: '#/components/examples/CreatedTextPush' }).value;
    const { views_remaining, ...missing } = created;
    expect(views_remaining).toBe(5);
    expect(v.validateComponent('PushOwner', created).valid).toBe(true);
    expect(v.validateComponent('PushOwner', missing).errors).toContain(
      "/ must have required property 'views_remaining'",
    );
    expect(v.validateComponent('PushOwner', { ...created, created_at: 'yesterday' }).valid).toBe(false);
  });

  it('gives every operation at least one success and one error example', () => {
    expect(missingExampleKinds(v)).toEqual([]);
  });

  it('has the operations of the decisions plus the signed file download, each with its error statuses', () => {
    const byId = Object.fromEntries(v.operations().map((o) => [o.operationId, o]));
    expect(Object.keys(byId).sort()).toEqual(
      [
        'createPush',
        'downloadPushFile',
        'expirePush',
        'getPush',
        'getPushAudit',
        'getVersion',
        'listActivePushes',
        'listExpiredPushes',
        'notifyEmails',
        'previewPush',
        // Who may open a push (issue 42).
        'requestAccessCode',
        // Requests (issue 24).
        'createRequest',
        'getRequest',
        'getRequestAudit',
        'listActiveRequests',
        'listExpiredRequests',
        'previewRequest',
        'respondToRequest',
        'revokeRequest',
        'createApiKey',
        'listApiKeys',
        'revokeApiKey',
        // Workspaces (issue 41).
        'listWorkspaces',
        'listAccounts',
        'createWorkspace',
        'updateWorkspace',
        'deleteWorkspace',
        'listWorkspaceMembers',
        'updateWorkspaceMember',
        'removeWorkspaceMember',
        'leaveWorkspace',
        'transferWorkspace',
        // A workspace's brand (issue 42).
        'getWorkspaceBrand',
        'updateWorkspaceBrand',
        'listWorkspaceAudit',
        'createWorkspaceInvitation',
        'listWorkspaceInvitations',
        'revokeWorkspaceInvitation',
        'acceptWorkspaceInvitation',
        'createWebhook',
        'listWebhooks',
        'getWebhook',
        'deleteWebhook',
        'rotateWebhookSecret',
        'testWebhook',
        'listWebhookDeliveries',
        'retryWebhookDelivery',
      ].sort(),
    );
    const statuses = (id: string) => Object.keys(byId[id]!.object.responses as Json).sort();
    // 403: an API key without the operation's scope (insufficient_scope), on every operation that takes a token.
    expect(statuses('createPush')).toEqual(['201', '400', '401', '403', '409', '413', '422', '429', '500', '503']);
    expect(statuses('getPush')).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
    expect(statuses('expirePush')).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
    // A request with two Host headers answers 400 on every operation (issue 19).
    for (const id of ['getVersion', 'previewPush']) expect(statuses(id), id).toContain('400');
    expect(statuses('getPushAudit')).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
    expect(statuses('notifyEmails')).toEqual(['201', '400', '401', '403', '404', '413', '422', '429', '500', '503']);
    expect(statuses('requestAccessCode')).toEqual([
      '202',
      '400',
      '401',
      '403',
      '404',
      '413',
      '422',
      '429',
      '500',
      '503',
    ]);
    for (const id of ['listActivePushes', 'listExpiredPushes'])
      expect(statuses(id)).toEqual(['200', '400', '401', '403', '429', '500', '503']);
    // A workspace's members: 404 for a workspace the caller is not in (never 403, which says it exists).
    expect(statuses('listWorkspaceMembers')).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
    // A workspace's brand: 404 outside it too; its change has a body (413) and rules (422).
    expect(statuses('getWorkspaceBrand')).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
    expect(statuses('updateWorkspaceBrand')).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '413',
      '422',
      '429',
      '500',
      '503',
    ]);
    expect(statuses('listWorkspaceAudit')).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
    for (const id of ['removeWorkspaceMember', 'leaveWorkspace', 'transferWorkspace', 'deleteWorkspace'])
      expect(statuses(id), id).toEqual(['200', '400', '401', '403', '404', '422', '429', '500', '503']);
    expect(statuses('updateWorkspace')).toEqual(['200', '400', '401', '403', '404', '413', '422', '429', '500', '503']);
    expect(statuses('updateWorkspaceMember')).toEqual([
      '200',
      '400',
      '401',
      '403',
      '404',
      '413',
      '422',
      '429',
      '500',
      '503',
    ]);
    // active and expired are matched before {url_token}: they are their own paths.
    expect(byId.listActivePushes!.path).toBe('/api/v2/pushes/active');
    // A second answer is a conflict, an answer to a closed request is gone; neither stores anything.
    expect(statuses('respondToRequest')).toEqual([
      '201',
      '400',
      '401',
      '403',
      '404',
      '409',
      '410',
      '413',
      '422',
      '429',
      '500',
      '503',
    ]);
    expect((v.document as Json)['x-json-suffix']).toBe(true);
  });

  it("answers the seed's gaps the way the decisions fill them", () => {
    const schemas = (v.document as Json).components.schemas;
    // The push record: every reference key plus kind, expires_at and passphrase_protected; never the passphrase.
    expect(schemas.Push.required).toEqual(
      expect.arrayContaining([
        'url_token',
        'expired',
        'expired_on',
        'deleted',
        'created_at',
        'updated_at',
        'expire_after_days',
        'expire_after_views',
        'days_remaining',
        'views_remaining',
        'deletable_by_viewer',
        'retrieval_step',
        'json_url',
        'html_url',
        'kind',
        'expires_at',
        'passphrase_protected',
      ]),
    );
    expect(Object.keys(schemas.Push.properties)).not.toContain('passphrase');
    expect(schemas.PushFile.required).toEqual(['id', 'filename', 'content_type', 'size', 'url']);
    expect(schemas.FileUpload.required).toEqual(['filename', 'content']);
    expect(schemas.AuditEntry.properties.kind.enum).toEqual([
      'creation',
      'view',
      'owner_view',
      'failed_view',
      'failed_passphrase',
      'expire',
      'creation_email_send',
    ]);
    expect(schemas.ErrorResponse.required).toEqual(['error', 'code']);
    expect(schemas.PushInput.properties.expire_after_days).toMatchObject({ minimum: 1, maximum: 90 });
    expect(schemas.PushInput.properties.expire_after_views).toMatchObject({ minimum: 1, maximum: 100 });
    expect(schemas.PushInput.properties.files.maxItems).toBe(10);
    const page = v.deref<Json>({ $ref: '#/components/parameters/Page' });
    expect(page.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 200, default: 1 });
    const getPush = v.operation('getPush').object as Json;
    expect(getPush.parameters.map((p: Json) => v.deref<Json>(p).name)).toEqual([
      'X-Passphrase',
      'passphrase',
      'X-Access-Code',
    ]);
    const listOk = (v.operation('listActivePushes').object as Json).responses['200'];
    expect(Object.keys(listOk.headers)).toEqual(expect.arrayContaining(['Link', 'X-Total-Count', 'Cache-Control']));
    expect(Object.keys(v.response('getPush', 429)!.headers as Json)).toContain('Retry-After');
    expect(Object.keys((v.document as Json).components.securitySchemes).sort()).toEqual([
      'bearerAuth',
      'legacyEmail',
      'legacyToken',
    ]);
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

  it("skips the plaintext-only checks for end-to-end encrypted pushes and checks the envelopes' form instead", () => {
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
    expect(
      ok({ ...file, files: [{ ...file.files[0], content: 'LS0tLS1CRUdJTiBPUEVOU1NIIFBSSVZBVEUgS0VZLS0tLS0K' }] }),
    ).toBe(false);
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
    expect(() =>
      execFileSync(process.execPath, ['scripts/check-generated.mjs'], { cwd: root, encoding: 'utf8', stdio: 'pipe' }),
    ).not.toThrow();
  });

  it('type-checks the SDK (generated client and facade)', () => {
    const result = run([
      `${root}node_modules/typescript/bin/tsc`,
      '-p',
      'sdk/test/contract/tsconfig.json',
      ...incremental('sdk'),
    ]);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('type-checks the whole repository (server, SDK, conformance, tests, scripts)', () => {
    const result = run([`${root}node_modules/typescript/bin/tsc`, '-p', 'tsconfig.json', ...incremental('repo')]);
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('has a CORS policy (x-cors) that allows every method and request header, and exposes every response header, that the v2 and v1 documents declare', () => {
    const rules = corsRules(v.document);
    const lower = (names: string[]) => names.map((n) => n.toLowerCase());
    const methods = new Set<string>();
    const requestHeaders = new Set<string>(['content-type']);
    const responseHeaders = new Set<string>();
    for (const c of [v, contractV1()]) {
      for (const op of c.operations()) {
        methods.add(op.method.toUpperCase());
        for (const p of c.parameters(op.operationId))
          if (p.in === 'header') requestHeaders.add(String(p.name).toLowerCase());
        for (const response of Object.values((op.object.responses ?? {}) as Json)) {
          for (const name of Object.keys((c.deref<Json>(response).headers ?? {}) as Json))
            responseHeaders.add(name.toLowerCase());
        }
      }
      for (const scheme of Object.values(((c.document as Json).components?.securitySchemes ?? {}) as Json)) {
        if (scheme.type === 'http') requestHeaders.add('authorization');
        if (scheme.type === 'apiKey' && scheme.in === 'header') requestHeaders.add(String(scheme.name).toLowerCase());
      }
    }
    expect(new Set(rules.methods)).toEqual(methods);
    expect(lower(rules.allowedHeaders)).toEqual(expect.arrayContaining([...requestHeaders]));
    // Safelisted response headers (CORS lets a page read them anyway) and ones only the browser itself acts on.
    for (const name of ['cache-control', 'content-type', 'x-content-type-options']) responseHeaders.delete(name);
    expect(lower(rules.exposedHeaders)).toEqual(expect.arrayContaining([...responseHeaders]));
    // What clients read that no operation declares yet: the IETF RateLimit fields, and Location.
    expect(lower(rules.exposedHeaders)).toEqual(
      expect.arrayContaining([
        'ratelimit',
        'ratelimit-policy',
        'retry-after',
        'location',
        'x-request-id',
        'link',
        'x-total-count',
        'idempotent-replayed',
      ]),
    );
    expect(rules.maxAgeSeconds).toBeGreaterThan(0);
    // The `*` exception names a v1 operation.
    for (const entry of rules.anyOrigin) {
      const [method, path] = entry.split(' ') as [string, string];
      expect(contractV1().routes.match(method, path).kind, entry).toBe('ok');
    }
  });

  it('declares every webhook event with its body and a valid example that holds no secret material', () => {
    const webhooks = (v.document as Json).webhooks as Json;
    const types = (v.document as Json).components.schemas.WebhookEventType.enum as string[];
    expect(Object.keys(webhooks).sort()).toEqual([...types].sort());
    for (const [type, item] of Object.entries<Json>(webhooks)) {
      const media = item.post.requestBody.content['application/json'];
      const examples = Object.values<Json>(media.examples).map((e) => v.deref<Json>(e).value);
      expect(examples.length, type).toBeGreaterThan(0);
      for (const example of examples) {
        expect(v.validateSchema(media.schema, example).errors, type).toEqual([]);
        expect(v.validateSchema({ $ref: '#/components/schemas/WebhookEvent' }, example).errors, type).toEqual([]);
        expect(example.type).toBe(type);
        const keys = JSON.stringify(example).match(/"[a-z_]+":/g) ?? [];
        for (const forbidden of ['url_token', 'payload', 'passphrase', 'note', 'html_url', 'json_url', 'files'])
          expect(keys, type).not.toContain(`"${forbidden}":`);
      }
    }
  });

  it('documents every x- extension it uses', () => {
    const readme = readFileSync(`${root}openapi/README.md`, 'utf8');
    const used = new Set(
      JSON.stringify(v.document)
        .match(/"x-[a-z-]+"/g)
        ?.map((s) => s.slice(1, -1)),
    );
    for (const ext of used) expect(readme).toContain(ext);
  });
});

/** Password Pusher Pro's `expire_after_duration` enum in seconds (the table of `ExpireAfterDuration`). */
const DURATION_SECONDS = [
  900,
  1800,
  2700,
  3600,
  21600,
  43200,
  ...[1, 2, 3, 4, 5, 6, 7, 14, 21, 30, 60, 90].map((d) => d * 86_400),
];

/** The push records among the named examples (single records and list items). */
function pushRecords(): { where: string; push: Json }[] {
  return (
    namedExamples(v)
      .filter((e) => e.part !== 'request' && Number(e.part) < 300)
      .flatMap((e) =>
        Array.isArray(e.value)
          ? e.value.map((item, i) => ({ where: `${e.where}[${i}]`, push: item as Json }))
          : [{ where: e.where, push: e.value as Json }],
      )
      // Request records (`audience`) carry a lifetime too, but are no push.
      .filter(
        ({ push }) =>
          push && typeof push === 'object' && 'url_token' in push && 'expires_at' in push && !('audience' in push),
      )
  );
}

describe('forms, durations and 422 messages (issue 11)', () => {
  const schemas = (v.document as Json).components.schemas;
  const createBody = v.deref<Json>((v.operation('createPush').object as Json).requestBody);

  it('takes expire_after_duration 0..17 as an integer in PushInput, and nothing else', () => {
    const ok = (push: Json) => v.validateComponent('PushInput', push).valid;
    for (const d of [0, 3, 6, 17]) expect(ok({ payload: 'x', expire_after_duration: d }), String(d)).toBe(true);
    for (const d of [-1, 18, 1.5, '3', null, true])
      expect(ok({ payload: 'x', expire_after_duration: d }), JSON.stringify(d)).toBe(false);
    // The pair rule is the server's (it names both fields); the schema lets a consistent pair through.
    expect(ok({ payload: 'x', expire_after_duration: 6, expire_after_days: 1 })).toBe(true);
    expect(Object.keys(schemas.PushInput.properties).indexOf('expire_after_duration')).toBe(
      Object.keys(schemas.PushInput.properties).indexOf('expire_after_days') + 1,
    );
    expect(schemas.ExpireAfterDuration).toMatchObject({
      type: 'integer',
      minimum: 0,
      maximum: DURATION_SECONDS.length - 1,
    });
  });

  it('declares createPush as JSON, multipart and form-urlencoded, files as parts with a form encoding', () => {
    expect(Object.keys(createBody.content)).toEqual([
      'application/json',
      'multipart/form-data',
      'application/x-www-form-urlencoded',
    ]);
    expect(createBody.content['multipart/form-data'].encoding['push[files][]']).toMatchObject({
      style: 'form',
      explode: true,
    });
    // openapi-backend validates every media type with the first of these schemas, which must stay the JSON body.
    expect(createBody.content['application/json'].schema.$ref).toBe('#/components/schemas/CreatePushRequest');
  });

  it('names one form field push[<field>] for every PushInput field, files only as multipart parts', () => {
    const fields = Object.keys(schemas.PushInput.properties);
    const urlencoded = Object.keys(schemas.CreatePushUrlencoded.properties);
    // JSON-only fields (their PushInput descriptions say so): client_encryption (end-to-end encrypted pushes are sent
    // as JSON) and the two lists of who may open a push (forms reach them through push[authenticated_recipients]).
    const jsonOnly = new Set(['files', 'client_encryption', 'recipient_emails', 'allowed_networks']);
    expect(urlencoded.filter((f) => f.startsWith('push['))).toEqual(
      fields.filter((f) => !jsonOnly.has(f)).map((f) => `push[${f}]`),
    );
    // Beside the push[…] fields only the workspace's id, where pwpush-cli and Raycast send it (docs/workspaces.md).
    expect(urlencoded.filter((f) => !f.startsWith('push['))).toEqual(['workspace_id', 'account_id']);
    const multipart = schemas.CreatePushMultipart.allOf as Json[];
    expect(multipart[0]!.$ref).toBe('#/components/schemas/CreatePushUrlencoded');
    expect(Object.keys(multipart[1]!.properties)).toEqual(['push[files][]']);
    // Form integers keep the JSON field's bounds, so the mock and the docs show them.
    for (const f of ['expire_after_days', 'expire_after_duration', 'expire_after_views']) {
      const { minimum, maximum } = schemas.PushInput.properties[f].$ref
        ? schemas.ExpireAfterDuration
        : schemas.PushInput.properties[f];
      expect(schemas.CreatePushUrlencoded.properties[`push[${f}]`], f).toMatchObject({ minimum, maximum });
    }
  });

  it('reads form booleans in any case from true/false/1/0/on/off/yes/no and nothing else', () => {
    const ok = (value: unknown) => v.validateComponent('FormBoolean', value).valid;
    for (const value of ['true', 'True', 'TRUE', 'false', 'False', '1', '0', 'on', 'OFF', 'yes', 'No', '', true, false])
      expect(ok(value), String(value)).toBe(true);
    for (const value of ['checked', 'truthy', '2', ' true', 'true ', 'y', 1])
      expect(ok(value), String(value)).toBe(false);
  });

  it('keeps the examples of forms valid against their media type, as clients send them', () => {
    const multipart = createBody.content['multipart/form-data'].examples;
    const form = v.deref<Json>(multipart.CreateFileMultipartRequest).value;
    expect(form['push[deletable_by_viewer]']).toBe('True'); // pwpush-cli sends Python's booleans
    expect(form['push[files][]']).toHaveLength(1);
    expect(v.validateComponent('CreatePushMultipart', { ...form, 'push[deletable_by_viewer]': 'maybe' }).valid).toBe(
      false,
    );
  });

  it('names the first failing field and its message in the error of every 422 example, errors in PushInput order', () => {
    const order = Object.keys(schemas.PushInput.properties);
    // validation_failed ones (a 422 idempotency_key_reused names no field).
    const examples = namedExamples(v).filter(
      (e) => e.part === '422' && (e.value as { code?: string }).code === 'validation_failed',
    );
    expect(examples.map((e) => e.name)).toEqual(
      expect.arrayContaining(['ErrValidation', 'ErrDurationConflict', 'ErrDurationOutOfRange', 'ErrDurationTooShort']),
    );
    for (const { where, value } of examples) {
      const body = value as { error: string; errors: Record<string, string[]> };
      expect(keepsValidationErrorPromise(body.error, body.errors), `${where}: ${body.error}`).toBe(true);
      const keys = Object.keys(body.errors);
      // A field outside PushInput (`base`, the notify limits' field) comes after the PushInput ones.
      const rank = (k: string) => (order.includes(k) ? order.indexOf(k) : order.length);
      expect(keys, where).toEqual([...keys].sort((a, b) => rank(a) - rank(b)));
    }
    const conflict = v.deref<Json>({ $ref: '#/components/examples/ErrDurationConflict' }).value;
    expect(conflict.errors.expire_after_days[0]).toContain('expire_after_duration');
    expect(conflict.errors.expire_after_duration[0]).toContain('expire_after_days');
  });

  it('counts the other messages in the 422 error text', () => {
    expect(expectedValidationError({ expire_after_views: ['must be at most 100'] })).toBe(
      'expire_after_views: must be at most 100',
    );
    expect(expectedValidationError({ payload: ['is required', 'x'], kind: ['y'] })).toBe(
      'payload: is required (and 2 more)',
    );
  });

  it("tells every push example's lifetime truthfully: exact seconds, days rounded up, the duration when one matches", () => {
    const records = pushRecords();
    expect(records.length).toBeGreaterThanOrEqual(12);
    for (const { where, push } of records) {
      const lifetime = (Date.parse(push.expires_at) - Date.parse(push.created_at)) / 1000;
      expect(push.expire_after_seconds, where).toBe(lifetime);
      expect(push.expire_after_days, where).toBe(Math.ceil(lifetime / 86_400));
      const index = DURATION_SECONDS.indexOf(lifetime);
      expect(push.expire_after_duration, where).toBe(index === -1 ? null : index);
      expect(push.days_remaining, where).toBe(Math.ceil(push.seconds_remaining / 86_400));
      expect(push.seconds_remaining, where).toBeLessThanOrEqual(lifetime);
    }
    const hour = v.deref<Json>({ $ref: '#/components/examples/CreatedDurationPush' }).value;
    expect([
      hour.expire_after_duration,
      hour.expire_after_seconds,
      hour.expire_after_days,
      hour.days_remaining,
    ]).toEqual([3, 3600, 1, 1]);
  });

  it('keeps the fields of optional features optional (servers without them conform) while every example record has them', () => {
    const optional = ['expire_after_duration', 'expire_after_seconds', 'seconds_remaining', 'client_encryption'];
    for (const f of optional) {
      expect(Object.keys(schemas.Push.properties)).toContain(f);
      expect(schemas.Push.required).not.toContain(f);
    }
    expect(schemas.PreviewResponse.required).toEqual(['url']);
    // A record as a server without durations or end-to-end encryption sends it (the reference) is a valid record.
    const created = v.deref<Json>({ $ref: '#/components/examples/CreatedTextPush' }).value;
    const withoutFeatures = Object.fromEntries(Object.entries(created).filter(([k]) => !optional.includes(k)));
    expect(v.validateComponent('PushOwner', withoutFeatures).valid).toBe(true);
    // What this server (and so Prism, which answers the examples) sends: every example push record carries them.
    const records = namedExamples(v).filter((e) => e.part === '200' || e.part === '201');
    let seen = 0;
    for (const e of records) {
      for (const record of (Array.isArray(e.value) ? e.value : [e.value]) as Json[]) {
        // A request record (`audience`) is no push record.
        if (typeof record?.url_token !== 'string' || !('expires_at' in record) || 'audience' in record) continue;
        seen += 1;
        for (const f of optional) expect(Object.keys(record), `${e.where}: ${f}`).toContain(f);
      }
    }
    expect(seen).toBeGreaterThan(10);
  });

  it('reports the duration feature in the version examples: enabled, min and the accepted values in order', () => {
    const feature = schemas.VersionReport.properties.features.properties.pushes.properties.expire_after_duration;
    expect(feature.required).toEqual(['enabled', 'min', 'values']);
    expect(schemas.VersionReport.properties.features.properties.pushes.required).not.toContain('expire_after_duration');
    for (const { where, value } of namedExamples(v).filter((e) => e.operationId === 'getVersion' && e.part === '200')) {
      const d = (value as Json).features.pushes.expire_after_duration;
      expect(d.enabled, where).toBe(true);
      expect(d.values[0], where).toBe(d.min);
      expect(d.values, where).toEqual([...new Set<number>(d.values)].sort((a, b) => a - b));
    }
  });

  it('lets openapi-backend route a form create to createPush and validate the push it is read into', async () => {
    const backend = await backendFor(v.document);
    const request = (body: unknown) => ({
      method: 'POST',
      path: '/api/v2/pushes',
      headers: { 'content-type': 'multipart/form-data; boundary=x' },
      query: {},
      body,
    });
    expect(backend.matchOperation(request({}))?.operationId).toBe('createPush');
    expect(backend.validateRequest(request({ push: { payload: 'x', expire_after_duration: 3 } })).valid).toBe(true);
    const invalid = backend.validateRequest(request({ push: { payload: 'x', expire_after_duration: 18 } }));
    expect(invalid.errors?.map((e) => e.instancePath)).toContain('/requestBody/push/expire_after_duration');
  });
});
