/**
 * A workspace's brand over HTTP with the generated SDK (issue 42): any member reads it, its owner and admins set it,
 * members and auditors get 403, outsiders and a second workspace's owner 404, no token 401; each change one
 * `brand_changed` row in `workspace_audit`. Hostile input (a colour too light, no hex, a javascript: or http: link, a
 * logo of the wrong kind by its content, an SVG with script or handlers, a logo over 256 KiB refused by the body
 * reader before it is read whole, no base64, no `brand` object, a bad id) gets a clear JSON error and writes nothing.
 * The logo is served from the database under `/brand/ws-<id>/` with its kind, an ETag and a policy that runs nothing.
 * The recipient's pages of a live push or an open request of the workspace carry its brand (with "Sent through" the
 * instance); pushes outside a workspace, expired pushes and unknown links carry the instance's.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createPush,
  createRequest,
  createWorkspace,
  expirePush,
  getWorkspaceBrand,
  updateWorkspaceBrand,
  type UpdateWorkspaceBrandRequest,
} from '@secret-push/sdk/generated';
import { startRealApi, type RealApi } from './support/real.js';
import { bearer, expectData, expectError } from './support/sdk.js';

type Who = 'owner' | 'admin' | 'member' | 'auditor' | 'outsider' | 'otherOwner';

let api: RealApi;
const people = {} as Record<Who, { token: string; email: string; userId: string }>;
let other: number;

/** A 1×1 PNG, a tiny JPEG header, a WebP header and SVGs, as a browser would send them. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);
const CLEAN_SVG = Buffer.from(
  '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8" fill="#123"/></svg>',
);
const b64 = (b: Buffer | string) => Buffer.from(b).toString('base64');

beforeAll(async () => {
  api = await startRealApi({ enableRequests: true });
  for (const who of ['owner', 'admin', 'member', 'auditor', 'outsider', 'otherOwner'] as const)
    people[who] = await api.user(`brand-${who}@example.org`);
  other = expectData(
    await createWorkspace({
      client: api.client,
      auth: bearer(people.otherOwner.token),
      body: { workspace: { name: 'Other' } },
    }),
    201,
  ).id;
});

afterEach(() => {
  expect(api.checker.violations).toEqual([]);
});

afterAll(async () => {
  await api?.stop();
});

async function workspace(name = 'Acme'): Promise<number> {
  const id = expectData(
    await createWorkspace({ client: api.client, auth: bearer(people.owner.token), body: { workspace: { name } } }),
    201,
  ).id;
  for (const role of ['admin', 'member', 'auditor'] as const)
    await api.db.query(
      'insert into workspace_members (workspace_id, user_id, role, created_at) values ($1, $2, $3, now())',
      [id, people[role].userId, role],
    );
  return id;
}

const as = (who: Who) => ({ client: api.client, auth: bearer(people[who].token) });
const set = (who: Who, id: number, brand: UpdateWorkspaceBrandRequest['brand']) =>
  updateWorkspaceBrand({ ...as(who), path: { workspace_id: id }, body: { brand } });
const stored = async (id: number) => ({
  rows: await api.db.query('select * from workspace_brands where workspace_id = $1', [id]),
  audit: await api.db.query<{ action: string; actor_id: string; subject_email: string | null }>(
    'select action, actor_id, subject_email from workspace_audit where workspace_id = $1 order by id',
    [id],
  ),
});

const FULL = {
  name: 'Acme IT',
  accent_color: '#0B5CAD',
  header_color: '#123',
  footer_text: 'Acme Corp IT service desk',
  imprint_url: 'https://acme.example/imprint',
  privacy_url: 'https://acme.example/privacy',
  logo: b64(PNG),
};

describe('getWorkspaceBrand', () => {
  it('answers every member (none set: configured false), and 404 outside, 401 without a token', async () => {
    const id = await workspace();
    for (const who of ['owner', 'admin', 'member', 'auditor'] as const) {
      const brand = expectData(await getWorkspaceBrand({ ...as(who), path: { workspace_id: id } }));
      expect(brand).toEqual({
        workspace_id: id,
        configured: false,
        name: null,
        accent_color: null,
        header_color: null,
        footer_text: null,
        imprint_url: null,
        privacy_url: null,
        logo: null,
        updated_at: null,
      });
    }
    for (const who of ['outsider', 'otherOwner'] as const)
      expectError(await getWorkspaceBrand({ ...as(who), path: { workspace_id: id } }), 404, 'not_found');
    expectError(await getWorkspaceBrand({ ...as('owner'), path: { workspace_id: 2_000_000_000 } }), 404, 'not_found');
    expectError(
      await getWorkspaceBrand({ client: api.client, path: { workspace_id: id } }),
      401,
      'authentication_required',
    );
  });
});

describe('updateWorkspaceBrand', () => {
  it('sets the brand for the owner, normalised, audited, read back by members, the logo served with an ETag', async () => {
    const id = await workspace();
    const brand = expectData(await set('owner', id, FULL));
    expect(brand).toMatchObject({
      workspace_id: id,
      configured: true,
      name: 'Acme IT',
      accent_color: '#0b5cad',
      header_color: '#112233',
      footer_text: 'Acme Corp IT service desk',
      imprint_url: 'https://acme.example/imprint',
      privacy_url: 'https://acme.example/privacy',
      logo: { content_type: 'image/png', bytes: PNG.length },
    });
    expect(brand.logo!.url).toMatch(new RegExp(`^/brand/ws-${id}/logo\\.png\\?v=[\\w-]{12}$`));
    expect(expectData(await getWorkspaceBrand({ ...as('auditor'), path: { workspace_id: id } }))).toEqual(brand);
    expect((await stored(id)).audit).toEqual([
      { action: 'brand_changed', actor_id: people.owner.userId, subject_email: people.owner.email },
    ]);

    const logo = await fetch(`${api.baseUrl}${brand.logo!.url}`);
    expect(logo.status).toBe(200);
    expect(logo.headers.get('content-type')).toBe('image/png');
    expect(logo.headers.get('x-content-type-options')).toBe('nosniff');
    expect(logo.headers.get('content-security-policy')).toContain('sandbox');
    expect(Buffer.from(await logo.arrayBuffer()).equals(PNG)).toBe(true);
    const etag = logo.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]{22}"$/);
    expect((await fetch(`${api.baseUrl}${brand.logo!.url}`, { headers: { 'If-None-Match': etag } })).status).toBe(304);
    // Another name, another workspace's id or a workspace without one: 404.
    for (const path of [`/brand/ws-${id}/logo.svg`, `/brand/ws-${other}/logo.png`, `/brand/ws-${id}/custom.css`])
      expect((await fetch(`${api.baseUrl}${path}`)).status).toBe(404);
    const theme = await fetch(`${api.baseUrl}/brand/ws-${id}/theme.css`);
    expect(theme.headers.get('content-type')).toMatch(/^text\/css/);
    const css = await theme.text();
    expect(css).toContain('--accent: #0b5cad;');
    expect(css).toContain('--header-bg: #112233;');
    expect(css).toContain('--header-fg: #ffffff;');
  });

  it('lets an admin set it; absent logo keeps it, null removes it; an SVG is served as one that runs nothing', async () => {
    const id = await workspace();
    expectData(await set('admin', id, { name: 'By the admin', logo: b64(CLEAN_SVG) }));
    const kept = expectData(await set('admin', id, { name: 'Renamed' }));
    expect(kept).toMatchObject({ name: 'Renamed', accent_color: null, logo: { content_type: 'image/svg+xml' } });
    const svg = await fetch(`${api.baseUrl}${kept.logo!.url}`);
    expect(svg.headers.get('content-type')).toMatch(/^image\/svg\+xml/);
    expect(svg.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox",
    );
    const removed = expectData(await set('owner', id, { name: null, logo: null }));
    expect(removed).toMatchObject({ configured: true, name: null, logo: null });
    expect((await stored(id)).audit.map((a) => a.action)).toEqual(['brand_changed', 'brand_changed', 'brand_changed']);
  });

  it('refuses members and auditors (403) and outsiders (404), writing nothing', async () => {
    const id = await workspace();
    for (const who of ['member', 'auditor'] as const) expectError(await set(who, id, FULL), 403, 'forbidden');
    for (const who of ['outsider', 'otherOwner'] as const) expectError(await set(who, id, FULL), 404, 'not_found');
    // The other workspace's owner names their own id: their own workspace, not this one.
    expectError(await set('owner', other, FULL), 404, 'not_found');
    expect(await stored(id)).toEqual({ rows: [], audit: [] });
    expect((await stored(other)).rows).toEqual([]);
  });

  it('refuses hostile input with a 422 per field, and writes nothing', async () => {
    const id = await workspace();
    expectData(await set('owner', id, FULL));
    const before = await stored(id);
    const cases: [UpdateWorkspaceBrandRequest['brand'], string, RegExp][] = [
      [{ accent_color: '#77bbff' }, 'accent_color', /reaches only \d\.\d\d:1.*4\.5:1/],
      [{ accent_color: '#ffff00' }, 'accent_color', /WCAG 2\.1 AA/],
      [{ header_color: 'red' }, 'header_color', /hex colour/],
      [{ imprint_url: 'javascript:alert(1)' }, 'imprint_url', /https:\/\//],
      [{ privacy_url: 'http://acme.example/privacy' }, 'privacy_url', /https:\/\//],
      [{ privacy_url: 'https://user:pw@acme.example/' }, 'privacy_url', /without credentials/],
      [{ footer_text: 'two\nlines' }, 'footer_text', /one line/],
      [{ name: '   ' }, 'name', /spaces/],
      [{ logo: b64('GIF89a hello, not an accepted kind') }, 'logo', /PNG, JPEG, WebP or SVG/],
      [{ logo: b64('just text, named logo.png by its sender') }, 'logo', /judged by its content/],
      [{ logo: b64('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>') }, 'logo', /<script>/],
      [{ logo: b64('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>') }, 'logo', /event handler/],
      [{ logo: b64('<svg><a href="javascript:alert(1)"><text>x</text></a></svg>') }, 'logo', /javascript:/],
      [{ logo: b64('<svg><foreignObject><div>x</div></foreignObject></svg>') }, 'logo', /foreignObject/],
      [{ logo: 'not base64 at all!' }, 'logo', /base64/],
      [{ logo: '' }, 'logo', /base64|empty/],
    ];
    for (const [brand, field, message] of cases) {
      const error = expectError(await set('owner', id, brand), 422, 'validation_failed');
      expect(Object.keys(error.errors ?? {}), JSON.stringify(brand).slice(0, 80)).toEqual([field]);
      expect(error.errors![field]![0]).toMatch(message);
    }
    expect(await stored(id)).toEqual(before);
  });

  it('refuses a logo over 256 KiB from the body reader, before the body is read whole, and malformed requests', async () => {
    const id = await workspace();
    // 349,529 base64 characters: one past the contract's maxLength, then a megabyte more that is never read.
    const huge = 'A'.repeat(349_532 + 1024 * 1024);
    const answer = await api.raw(`/api/v2/workspaces/${id}/brand`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${people.owner.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ brand: { logo: huge } }),
    });
    // The body reader's bound (the contract's maxLength), met while the body streams: 400, naming the limit only.
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: 'bad_request' });
    expect(answer.body.error).toContain('longer than 349528 characters');
    // A decoded logo one byte over 256 KiB, within the base64 bound: refused by the rule.
    const over = b64(Buffer.concat([PNG, Buffer.alloc(256 * 1024 + 1 - PNG.length)]));
    expect(over.length).toBeLessThanOrEqual(349_528);
    const error = expectError(await set('owner', id, { logo: over }), 422, 'validation_failed');
    expect(error.errors!.logo).toEqual(['must be at most 256 KiB']);

    const noBrand = await api.raw(`/api/v2/workspaces/${id}/brand`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${people.owner.token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'x' }),
    });
    expect(noBrand.status).toBe(400);
    expect(noBrand.body.code).toBe('bad_request');
    const badId = await api.raw(`/api/v2/workspaces/abc/brand`, {
      headers: { Authorization: `Bearer ${people.owner.token}` },
    });
    expect(badId.status).toBe(400);
    expect(badId.body.code).toBe('invalid_parameter');
    const wrongType = expectError(
      await set('owner', id, { accent_color: 42 as unknown as string }),
      422,
      'validation_failed',
    );
    expect(Object.keys(wrongType.errors!)).toEqual(['accent_color']);
    expect(await stored(id)).toEqual({ rows: [], audit: [] });
    expect(api.logs.join('\n')).not.toContain('AAAAAAAAAAAAAAAA');
  });
});

describe("the recipients' pages", () => {
  const page = async (path: string) => {
    const res = await fetch(`${api.baseUrl}${path}`);
    return { status: res.status, html: await res.text() };
  };

  it("carry a live workspace push's brand, and the instance's for a personal, expired or unknown one", async () => {
    const id = await workspace('Acme Internal');
    const brand = expectData(await set('owner', id, FULL));
    const inWorkspace = expectData(
      await createPush({ ...as('member'), body: { push: { payload: 'zq-secret-payload-9' }, workspace_id: id } }),
      201,
    );
    const branded = await page(`/p/${inWorkspace.url_token}`);
    expect(branded.status).toBe(200);
    expect(branded.html).toContain('<span>Acme IT</span>');
    expect(branded.html).toContain(`src="${brand.logo!.url.replace(/&/g, '&amp;')}"`);
    expect(branded.html).toMatch(new RegExp(`href="/brand/ws-${id}/theme\\.css\\?v=`));
    expect(branded.html).toContain('Acme Corp IT service desk');
    expect(branded.html).toContain('href="https://acme.example/imprint"');
    expect(branded.html).toContain(`Sent through ${api.settings.brand.name}`);
    expect(branded.html).not.toContain('zq-secret-payload-9');

    const personal = expectData(await createPush({ ...as('member'), body: { push: { payload: 'mine' } } }), 201);
    const plain = await page(`/p/${personal.url_token}`);
    expect(plain.html).toContain(`<span>${api.settings.brand.name}</span>`);
    expect(plain.html).not.toContain('Acme');
    expect(plain.html).not.toContain('Sent through');

    expectData(await expirePush({ ...as('member'), path: { url_token: inWorkspace.url_token } }));
    const expired = await page(`/p/${inWorkspace.url_token}`);
    expect(expired.html).not.toContain('Acme');
    expect(expired.html).not.toContain(`/brand/ws-${id}/`);
    const unknown = await page('/p/no-such-token-at-all');
    expect(unknown.status).toBe(404);
    expect(unknown.html).not.toContain('Acme');
  });

  it("carry an open workspace request's brand on the responder's page", async () => {
    const id = await workspace('Acme Requests');
    expectData(await set('owner', id, { name: 'Acme Desk', accent_color: '#7a1f00' }));
    const request = expectData(
      await createRequest({ ...as('member'), body: { request: { request: 'Your VPN key, please' } } }),
      201,
    );
    // A request made in the workspace (its column, as a workspace's create writes it).
    await api.db.query('update requests set workspace_id = $1 where url_token = $2', [id, request.url_token]);
    const answer = await page(`/r/${request.url_token}`);
    expect(answer.status).toBe(200);
    expect(answer.html).toContain('<span>Acme Desk</span>');
    expect(answer.html).toContain(`Sent through ${api.settings.brand.name}`);
    const css = await (await fetch(`${api.baseUrl}/brand/ws-${id}/theme.css`)).text();
    expect(css).toContain('--accent: #7a1f00;');
  });
});
