/**
 * The contract of the legacy v1 API (openapi/v1): lint, examples, coverage, the decisions its description lists,
 * the freshness of its bundle, routing by openapi-backend (the server's toolkit) and by Prism, each checked with the
 * requests the v1 clients of /work/shared/reference/client-dialects.md send.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  keepsValidationErrorPromise,
  invalidExamples,
  missingExampleKinds,
  namedExamples,
} from './tooling/named-examples.js';
import { backendFor } from './tooling/openapi-backend.js';
import { startPrism, type PrismProcess } from './tooling/prism-process.js';
import { BUNDLED_V1_SPEC_PATH, bundledV1Document, contract, contractV1 } from './src/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const run = (args: string[]) =>
  spawnSync(process.execPath, args, {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
const redocly = `${root}node_modules/.bin/redocly`;

const v = contractV1();
const v2 = contract();
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- walking an arbitrary OpenAPI document
type Json = Record<string, any>;
const schemas = (v.document as Json).components.schemas as Json;
const example = (name: string) => v.deref<Json>({ $ref: `#/components/examples/${name}` }).value;

/** What the v1 clients send, one request each (method, path, the client). */
const CLIENT_REQUESTS: [string, string, string, string][] = [
  ['GET', '/api/v1/version.json', 'getVersionV1', 'PassPushPosh'],
  ['POST', '/p.json', 'createPasswordV1', 'PassPushPosh, Terraform, .NET, PHP, kppwpush'],
  ['POST', '/f.json', 'createFilePushV1', 'pwpush-cli 0.13, Keypirinha'],
  ['POST', '/r.json', 'createUrlPushV1', 'kppwpush'],
  ['GET', '/p/rz6nryvl-d4.json', 'getPushV1', 'PassPushPosh (reference token)'],
  ['GET', '/r/k7mz4qv2xw5nrt3hbj6ypa2c.json', 'getPushV1', 'kppwpush'],
  ['GET', '/p/k7mz4qv2xw5nrt3hbj6ypa2c/preview.json', 'previewPushV1', 'pwpush-cli 0.13'],
  ['GET', '/f/k7mz4qv2xw5nrt3hbj6ypa2c/preview.json', 'previewPushV1', 'pwpush-cli 0.13 (files)'],
  ['GET', '/p/k7mz4qv2xw5nrt3hbj6ypa2c/audit.json', 'getPushAuditV1', 'PassPushPosh'],
  ['DELETE', '/p/k7mz4qv2xw5nrt3hbj6ypa2c.json', 'expirePushV1', 'Terraform, PassPushPosh'],
  ['GET', '/p/active.json', 'listActivePushesV1', 'PassPushPosh, pwpush-cli 0.13 login'],
  ['GET', '/p/expired.json', 'listExpiredPushesV1', 'PassPushPosh'],
  ['GET', '/r/active.json', 'listActivePushesV1', 'kppwpush'],
];

describe('the v1 contract', () => {
  it('lints with zero problems under the committed Redocly config', () => {
    const result = run([redocly, 'lint', '--config', 'openapi/redocly.yaml', 'openapi/v1/openapi.yaml']);
    const output = result.stdout + result.stderr;
    expect(output).not.toMatch(/warning|error/i);
    expect(output).toContain('Your API description is valid');
    expect(result.status).toBe(0);
  });

  it('keeps openapi/bundled/openapi-v1.json identical to a fresh bundle of openapi/v1', () => {
    const dir = mkdtempSync(join(tmpdir(), 'v1-bundle-'));
    try {
      const out = join(dir, 'openapi-v1.json');
      const result = run([
        redocly,
        'bundle',
        'openapi/v1/openapi.yaml',
        '--config',
        'openapi/redocly.yaml',
        '--ext',
        'json',
        '-o',
        out,
      ]);
      expect(result.status, result.stderr).toBe(0);
      expect(readFileSync(out, 'utf8')).toBe(readFileSync(BUNDLED_V1_SPEC_PATH, 'utf8'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('validates every named example against its schema with Ajv 2020', () => {
    const examples = namedExamples(v);
    expect(examples.length).toBeGreaterThan(60);
    expect(invalidExamples(v, examples)).toEqual([]);
  });

  it('rejects a broken example, so the example check can fail', () => {
    const created = example('V1CreatedPush');
    expect(v.validateComponent('V1PushOwner', created).valid).toBe(true);
    expect(v.validateComponent('V1PushOwner', { ...created, deletable_by_viewer: null }).valid).toBe(false);
    const { views_remaining: _views, ...missing } = created;
    expect(v.validateComponent('V1PushOwner', missing).errors).toContain(
      "/ must have required property 'views_remaining'",
    );
  });

  it('gives every operation at least one success and one error example', () => {
    expect(missingExampleKinds(v)).toEqual([]);
  });

  it('has the v1 operations the reference routes, each with its statuses', () => {
    const byId = Object.fromEntries(v.operations().map((o) => [o.operationId, o]));
    expect(Object.keys(byId).sort()).toEqual(
      [
        'createFilePushV1',
        'createPasswordV1',
        'createUrlPushV1',
        'expirePushV1',
        'getPushAuditV1',
        'getPushV1',
        'getVersionV1',
        'listActivePushesV1',
        'listExpiredPushesV1',
        'previewPushV1',
      ].sort(),
    );
    const statuses = (id: string) => Object.keys(byId[id]!.object.responses as Json).sort();
    for (const id of ['createPasswordV1', 'createFilePushV1', 'createUrlPushV1'])
      expect(statuses(id), id).toEqual(['201', '400', '401', '403', '413', '422', '429', '500', '503']);
    // 403: an API key without the operation's scope (insufficient_scope), on every operation that takes a token.
    expect(statuses('getPushV1')).toEqual(['200', '400', '401', '403', '404', '409', '429', '500', '503']);
    expect(statuses('expirePushV1')).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
    expect(statuses('getPushAuditV1')).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
    expect(statuses('previewPushV1')).toEqual(['200', '400', '401', '403', '404', '429', '500', '503']);
    for (const id of ['listActivePushesV1', 'listExpiredPushesV1'])
      expect(statuses(id), id).toEqual(['200', '400', '401', '403', '429', '500', '503']);
    expect(statuses('getVersionV1')).toEqual(['200', '400', '429', '500', '503']);
    expect(v.deref<Json>({ $ref: '#/components/parameters/Prefix' }).schema.enum).toEqual(['p', 'f', 'r']);
    // Lists, audit and the /f.json and /r.json creates need a token, as in the reference.
    for (const id of [
      'listActivePushesV1',
      'listExpiredPushesV1',
      'getPushAuditV1',
      'createFilePushV1',
      'createUrlPushV1',
    ]) {
      expect(byId[id]!.object.security, id).not.toContainEqual({});
    }
    expect(byId.createPasswordV1!.object.security).toContainEqual({});
  });

  it('takes JSON, multipart and form-urlencoded creates with the v1 wrappers (no urlencoded file push)', () => {
    const media = (id: string) => Object.keys(v.deref<Json>(v.operation(id).object.requestBody).content);
    expect(media('createPasswordV1')).toEqual([
      'application/json',
      'multipart/form-data',
      'application/x-www-form-urlencoded',
    ]);
    expect(media('createUrlPushV1')).toEqual([
      'application/json',
      'multipart/form-data',
      'application/x-www-form-urlencoded',
    ]);
    expect(media('createFilePushV1')).toEqual(['application/json', 'multipart/form-data']);
    const fields = Object.keys(schemas.V1PushFields.properties);
    const form = (name: string, wrapper: string, without: string[]) =>
      expect(Object.keys(schemas[name].properties), name).toEqual(
        fields
          .filter((f) => !without.includes(f))
          .map((f) => (f === 'files' ? `${wrapper}[files][]` : `${wrapper}[${f}]`)),
      );
    form('V1PasswordForm', 'password', []);
    form('V1FilePushForm', 'file_push', ['kind']);
    form('V1UrlForm', 'url', ['kind', 'files']);
  });

  it('maps every v1 push field onto a field of the v2 PushInput (same domain)', () => {
    const pushInput = Object.keys((v2.document as Json).components.schemas.PushInput.properties);
    for (const field of Object.keys(schemas.V1PushFields.properties)) expect(pushInput, field).toContain(field);
  });

  it('reads integers and booleans as v1 clients send them, and null or empty as not given', () => {
    const int = (value: unknown) => v.validateComponent('V1Integer', value).valid;
    for (const value of [5, '5', '05', '', null]) expect(int(value), JSON.stringify(value)).toBe(true);
    for (const value of ['+5', ' 5', '1e2', '0x10', '1.0', 5.5, true])
      expect(int(value), JSON.stringify(value)).toBe(false);
    const bool = (value: unknown) => v.validateComponent('V1Boolean', value).valid;
    for (const value of [true, false, 'true', 'True', 'FALSE', '1', '0', 'on', 'off', 'yes', 'no', '', null])
      expect(bool(value), JSON.stringify(value)).toBe(true);
    for (const value of ['checked', '2', 'y', 1]) expect(bool(value), JSON.stringify(value)).toBe(false);
  });

  it('takes the wrapper, or push fields at the top level, and refuses a body with neither', () => {
    const ok = (body: unknown) => v.validateComponent('V1PasswordRequest', body).valid;
    expect(ok(example('V1CreatePasswordRequest'))).toBe(true);
    expect(ok(example('V1CreatePasswordFlatRequest'))).toBe(true); // terraform-provider-pwpusher
    expect(ok(example('V1CreatePasswordTextValuesRequest'))).toBe(true); // PwPush-PHP
    expect(ok({})).toBe(false);
    expect(ok({ push: { payload: 'x' } })).toBe(false);
    expect(ok({ password: 'x' })).toBe(false);
    expect(v.validateComponent('V1UrlRequest', { url: { payload: 'https://example.org/' } }).valid).toBe(true);
    expect(v.validateComponent('V1FilePushRequest', {}).valid).toBe(false);
  });
});

describe('the v1 decisions, as the documents and examples carry them', () => {
  const records = () =>
    namedExamples(v)
      .filter((e) => e.part !== 'request' && Number(e.part) < 300)
      .flatMap((e) =>
        Array.isArray(e.value)
          ? e.value.map((item) => ({ where: e.where, push: item as Json }))
          : [{ where: e.where, push: e.value as Json }],
      )
      .filter(({ push }) => push && typeof push === 'object' && 'url_token' in push);

  it('never sends the passphrase, and says whether one is needed (decision 1)', () => {
    expect(Object.keys(schemas.V1Push.properties)).not.toContain('passphrase');
    expect(schemas.V1Push.required).toContain('passphrase_protected');
    for (const { where, push } of records()) expect(push, where).not.toHaveProperty('passphrase');
  });

  it('always sends deletable_by_viewer as a boolean, URL pushes too (decision 2)', () => {
    expect(schemas.V1Push.properties.deletable_by_viewer.type).toBe('boolean');
    const url = records().filter(({ push }) => push.kind === 'url');
    expect(url.length).toBeGreaterThan(0);
    for (const { where, push } of url) expect(typeof push.deletable_by_viewer, where).toBe('boolean');
  });

  it('gives json_url as {base}/p/{url_token}.json and html_url as the link, also with a retrieval step (decision 3)', () => {
    for (const { where, push } of records()) {
      expect(push.json_url, where).toBe(`https://pwpush.example.org/p/${push.url_token}.json`);
      // PassPushPosh's link: json_url without ".json".
      expect(push.json_url.replace('.json', ''), where).toBe(`https://pwpush.example.org/p/${push.url_token}`);
      expect(push.html_url, where).toBe(
        `https://pwpush.example.org/p/${push.url_token}${push.retrieval_step ? '/r' : ''}`,
      );
      expect((Date.parse(push.expires_at) - Date.parse(push.created_at)) / 86_400_000, where).toBe(
        push.expire_after_days,
      );
    }
  });

  it('answers every error with a JSON body carrying error and code (decision 5)', () => {
    const errors = namedExamples(v).filter((e) => Number(e.part) >= 400);
    expect(errors.length).toBeGreaterThan(30);
    for (const { where, schema, value } of errors) {
      expect((schema as Json).$ref, where).toBe('#/components/schemas/V1ErrorResponse');
      expect(value, where).toMatchObject({ error: expect.any(String), code: expect.stringMatching(/^[a-z_]+$/) });
    }
    expect(schemas.V1ErrorResponse.required).toEqual(['error', 'code']);
  });

  it('keeps the error texts clients compare verbatim (decisions 6 and 7)', () => {
    const errorOf = (name: string) => example(name).error;
    expect(errorOf('V1ErrNotFound')).toBe('not-found'); // PassPushPosh's friendly text needs exactly this
    expect(errorOf('V1ErrNoRoute')).toBe('not-found');
    expect(errorOf('V1ErrForbidden')).toBe("That push doesn't belong to you.");
    expect(errorOf('V1ErrNotDeletable')).toBe('That push is not deletable by viewers.');
    expect(errorOf('V1ErrNotDeletableForbidden')).toBe('That push is not deletable by viewers.');
    expect(errorOf('V1ErrTooManyAttempts')).toBe('Too many passphrase attempts. Please try again in a minute.');
    for (const name of ['V1ErrPassphraseRequired', 'V1ErrPassphraseIncorrect']) {
      expect(errorOf(name), name).toBe('This push has a passphrase that was incorrect or not provided.');
      expect(example(name), name).toMatchObject({ status: 'unauthorized', message: expect.any(String) });
    }
    const wrapperError = (id: string) =>
      Object.values<Json>((v.response(id, 400) as Json).content['application/json'].examples)
        .map((ex) => v.deref<Json>(ex).value.error as string)
        .filter((e) => e.startsWith('param is missing'));
    expect(wrapperError('createPasswordV1')).toEqual(['param is missing or the value is empty or invalid: password']);
    expect(wrapperError('createFilePushV1')).toEqual(['param is missing or the value is empty or invalid: file_push']);
    expect(wrapperError('createUrlPushV1')).toEqual(['param is missing or the value is empty or invalid: url']);
  });

  it('names the first failing field in the error of every 422 example (decision 8)', () => {
    const examples = namedExamples(v).filter((e) => e.part === '422');
    expect(examples.length).toBeGreaterThanOrEqual(9);
    for (const { where, value } of examples) {
      const body = value as { error: string; errors: Record<string, string[]> };
      expect(keepsValidationErrorPromise(body.error, body.errors), `${where}: ${body.error}`).toBe(true);
    }
  });

  it('refuses a DELETE with 401 for anonymous callers and 403 for signed-in non-owners (decision 9)', () => {
    const codes = (status: number) =>
      Object.values<Json>((v.response('expirePushV1', status) as Json).content['application/json'].examples).map(
        (ex) => v.deref<Json>(ex).value.code,
      );
    expect(codes(401)).toContain('authentication_required');
    // and an API key without pushes:delete: insufficient_scope.
    expect(codes(403)).toEqual(['forbidden', 'insufficient_scope']);
  });

  it('serves audit entries under views with successful, kind as the event name (decision 10)', () => {
    expect(schemas.V1AuditLog.required).toEqual(['views']);
    expect(schemas.V1AuditEntry.required).toEqual(
      expect.arrayContaining(['kind', 'ip', 'user_agent', 'referrer', 'created_at', 'updated_at', 'successful']),
    );
    expect(schemas.V1AuditEntry.properties.kind.enum).toEqual(
      (v2.document as Json).components.schemas.AuditEntry.properties.kind.enum,
    );
    for (const entry of example('V1AuditViews').views as Json[]) {
      expect(entry.successful, entry.kind).toBe(!['failed_view', 'failed_passphrase'].includes(entry.kind));
      expect(entry.updated_at).toBe(entry.created_at);
    }
  });

  it('reports an api_version above 1.0, as PassPushPosh requires (decision 21)', () => {
    for (const { value } of namedExamples(v).filter((e) => e.operationId === 'getVersionV1' && e.part === '200')) {
      expect(Number.parseFloat((value as Json).api_version)).toBeGreaterThan(1.0);
    }
    expect(v.operation('getVersionV1').path).toBe('/api/v1/version.json');
    expect(((v.document as Json).paths['/api/v1/version.json'] as Json)['x-json-suffix-optional']).toBe(true);
  });

  it('lists its decisions in the document description', () => {
    const description = (v.document as Json).info.description as string;
    for (const n of Array.from({ length: 21 }, (_, i) => i + 1))
      expect(description).toMatch(new RegExp(`\\n\\| ${n} \\|`));
    expect(description).toContain('How v1 maps onto the v2 domain');
  });

  it('documents every x- extension it uses in openapi/README.md', () => {
    const readme = readFileSync(`${root}openapi/README.md`, 'utf8');
    const used = new Set(
      JSON.stringify(v.document)
        .match(/"x-[a-z-]+"/g)
        ?.map((s) => s.slice(1, -1)),
    );
    expect(used.size).toBeGreaterThan(0);
    for (const ext of used) expect(readme).toContain(ext);
  });
});

describe("the server's router (openapi-backend) and the contract's route table route the v1 requests of the clients", () => {
  it.each(CLIENT_REQUESTS)('%s %s → %s (%s)', async (method, path, operationId) => {
    const backend = await v1Backend();
    expect(backend.matchOperation({ method, path, headers: {}, query: {} })?.operationId).toBe(operationId);
    const match = v.routes.match(method, path);
    expect(match.kind === 'ok' ? match.operation.operationId : match.kind).toBe(operationId);
  });

  it('answers no_route for a path outside v1 and method_not_allowed with Allow for a method a path lacks', () => {
    expect(v.routes.match('GET', '/p/k7mz4qv2xw5nrt3hbj6ypa2c/r.json').kind).toBe('no_route');
    expect(v.routes.match('PUT', '/p/k7mz4qv2xw5nrt3hbj6ypa2c.json')).toMatchObject({
      kind: 'method_not_allowed',
      allow: ['GET', 'DELETE'],
    });
    expect(v.routes.match('DELETE', '/p/active.json')).toMatchObject({ kind: 'method_not_allowed', allow: ['GET'] });
  });

  it('reads the prefix and the url_token out of a .json path segment', async () => {
    const backend = await v1Backend();
    const request = { method: 'GET', path: '/p/rz6nryvl-d4.json', headers: {}, query: {} };
    expect(backend.router.parseRequest(request, backend.matchOperation(request)).params).toEqual({
      prefix: 'p',
      url_token: 'rz6nryvl-d4',
    });
    expect(v.routes.match('GET', '/p/rz6nryvl-d4.json')).toMatchObject({
      kind: 'ok',
      params: { prefix: 'p', url_token: 'rz6nryvl-d4' },
    });
  });
});

let backendPromise: ReturnType<typeof backendFor> | undefined;
function v1Backend() {
  backendPromise ??= backendFor(bundledV1Document());
  return backendPromise;
}

describe('the Prism mock of v1 answers the client flows with bodies that match the contract', () => {
  let prism: PrismProcess;
  let baseUrl: string;
  const legacy = { 'X-User-Email': 'alice@example.com', 'X-User-Token': 'spt_example_token' };

  beforeAll(async () => {
    prism = await startPrism({ api: 'v1' });
    baseUrl = prism.baseUrl;
  }, 120_000);

  afterAll(() => {
    prism?.stop();
  });

  async function call(operationId: string, path: string, init: RequestInit, status: number) {
    const res = await fetch(`${baseUrl}${path}`, init);
    const body = await res.json();
    expect(res.status, `${operationId} ${path}`).toBe(status);
    expect(v.validateResponse(operationId, status, res.headers.get('content-type'), body).errors, operationId).toEqual(
      [],
    );
    return body as Json;
  }

  it('PassPushPosh: version, JSON create, retrieve with ?passphrase=, preview, audit, active, delete', async () => {
    expect(
      Number.parseFloat((await call('getVersionV1', '/api/v1/version.json', {}, 200)).api_version),
    ).toBeGreaterThan(1);
    const json = { ...legacy, 'Content-Type': 'application/json' };
    const created = await call(
      'createPasswordV1',
      '/p.json',
      { method: 'POST', headers: json, body: JSON.stringify(example('V1CreatePasswordRequest')) },
      201,
    );
    expect(created.url_token).toMatch(/^[a-z0-9_-]+$/);
    await call('getPushV1', `/p/${created.url_token}.json?passphrase=blue-giraffe-42`, { headers: legacy }, 200);
    await call('previewPushV1', `/p/${created.url_token}/preview.json`, {}, 200);
    expect(
      (await call('getPushAuditV1', `/p/${created.url_token}/audit.json`, { headers: legacy }, 200)).views,
    ).toBeInstanceOf(Array);
    await call('listActivePushesV1', '/p/active.json', { headers: legacy }, 200);
    await call('expirePushV1', `/p/${created.url_token}.json`, { method: 'DELETE', headers: legacy }, 200);
  });

  it('terraform-provider-pwpush: a multipart create with the password wrapper', async () => {
    const form = new FormData();
    for (const [name, value] of Object.entries({
      'password[payload]': 'x',
      'password[expire_after_days]': '3',
      'password[deletable_by_viewer]': 'true',
      'password[account_id]': '7',
    }))
      form.append(name, value);
    await call('createPasswordV1', '/p.json', { method: 'POST', headers: legacy, body: form }, 201);
  });

  it('the .NET client: a form-urlencoded create with True', async () => {
    const body = new URLSearchParams({
      'password[payload]': 'x',
      'password[expire_after_days]': '7',
      'password[expire_after_views]': '5',
      'password[deletable_by_viewer]': 'True',
    });
    await call('createPasswordV1', '/p.json', { method: 'POST', body }, 201);
  });

  it('pwpush-cli 0.13: a file push as one file part, with the legacy headers', async () => {
    const form = new FormData();
    form.append('file_push[files][]', new Blob(['-----BEGIN OPENSSH PRIVATE KEY-----\n']), 'id_ed25519');
    await call('createFilePushV1', '/f.json', { method: 'POST', headers: legacy, body: form }, 201);
  });

  it('refuses a list without a token with the JSON 401 body', async () => {
    expect(await call('listActivePushesV1', '/p/active.json', {}, 401)).toMatchObject({
      code: 'authentication_required',
    });
  });

  it('serves every documented error example of every operation', async () => {
    for (const op of v.operations()) {
      const path = op.path.replace('{prefix}', 'p').replace('{url_token}', 'k7mz4qv2xw5nrt3hbj6ypa2c');
      const headers: Record<string, string> = { ...legacy, 'Content-Type': 'application/json' };
      const init: RequestInit = { method: op.method.toUpperCase(), headers };
      if (op.method === 'post')
        init.body = JSON.stringify({
          password: { payload: 'x' },
          file_push: { payload: 'x' },
          url: { payload: 'https://example.org/' },
        });
      for (const status of Object.keys(op.object.responses as object)
        .map(Number)
        .filter((s) => s >= 400)) {
        const body = await call(
          op.operationId,
          path,
          { ...init, headers: { ...headers, Prefer: `code=${status}` } },
          status,
        );
        expect(body.code, `${op.operationId} ${status}`).toMatch(/^[a-z_]+$/);
      }
    }
  });
});
