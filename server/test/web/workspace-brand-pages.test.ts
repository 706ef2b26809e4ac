/**
 * A workspace's brand page (issue 41; the brand of issue 42) over real HTTP, on the real app and database, with the
 * generated SDK reading back what the page set: an owner sets the colours, texts, links and a logo upload (multipart);
 * the brand rules answer beside each field (the contrast rule, https links, an SVG with script), in the page's
 * language, storing nothing; the preview is a page in the brand; a reset sets every field back to the instance's.
 * Members and auditors get 403 pages, outsiders 404 pages, a form without CSRF is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getWorkspaceBrand } from '@secret-push/sdk/generated';
import { createClient } from '@secret-push/sdk/generated/client';
import { startWeb, Visitor, type WebApp } from './support.js';
import { PASSWORD, bearer, workspaceCast, type WorkspaceCast } from './workspace-cast.js';

const emailOf = (who: string) => `${who}@brand-ws.example.org`;
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

let app: WebApp;
let client: ReturnType<typeof createClient>;
let users: WorkspaceCast['users'];
let visitors: WorkspaceCast['visitors'];
let workspaceId: number;

beforeAll(async () => {
  app = await startWeb();
  ({ client, users, visitors, workspaceId } = await workspaceCast(app, {
    domain: 'brand-ws.example.org',
    name: 'Globex',
    roles: ['member', 'auditor'],
  }));
}, 120_000);

afterAll(async () => {
  await app?.stop();
});

const base = () => `/workspaces/${workspaceId}/brand`;
const brand = async () =>
  (
    await getWorkspaceBrand({
      client,
      auth: bearer(users.owner!.token),
      path: { workspace_id: workspaceId },
    })
  ).data!;

/** Posts the brand form as the page does (multipart, with a file when given). */
async function postBrand(visitor: Visitor, fields: Record<string, string>, logo?: { bytes: Buffer; name: string }) {
  const { csrf } = await visitor.page(base());
  const body = new FormData();
  body.set('_csrf', csrf);
  for (const [k, v] of Object.entries(fields)) body.set(k, v);
  if (logo) body.set('logo', new Blob([new Uint8Array(logo.bytes)]), logo.name);
  return visitor.fetch(base(), { method: 'POST', headers: { origin: app.baseUrl }, body });
}

const FULL = {
  name: 'Globex Service Desk',
  accent_color: '#0b5cad',
  header_color: '#102a43',
  footer_text: 'Globex Corp · 2 Example Road',
  imprint_url: 'https://globex.example/imprint',
  privacy_url: '',
};

describe("a workspace's brand page", () => {
  it('answers broken rules beside each field, in the page language, and stores nothing', async () => {
    const answer = await postBrand(visitors.owner!, {
      ...FULL,
      accent_color: '#ffff00',
      imprint_url: 'http://x.example',
    });
    expect(answer.status).toBe(422);
    const html = await answer.text();
    expect(html).toMatch(/<p class="field-error" id="accent_color-error">#ffff00 reaches only [0-9.]+:1/);
    expect(html).toContain('<p class="field-error" id="imprint_url-error">must be an absolute https:// URL');
    expect(html).toMatch(/id="accent_color"[^>]*aria-invalid="true"/);
    expect(html).toContain('value="Globex Service Desk"');
    const svg = await postBrand(visitors.owner!, FULL, {
      bytes: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'),
      name: 'logo.svg',
    });
    expect(svg.status).toBe(422);
    expect(await svg.text()).toContain('an SVG logo may not hold a &lt;script&gt; element');
    const german = new Visitor(app.baseUrl);
    await german.signIn(emailOf('owner'), PASSWORD);
    await german.page(`${base()}?locale=de`);
    const said = await postBrand(german, { ...FULL, accent_color: '#ffff00' });
    expect(said.status).toBe(422);
    const text = await said.text();
    expect(text).toMatch(
      /Diese Farbe ist zu hell: Sie erreicht auf den Hintergründen der Seiten und unter weißer Schrift nur [0-9.]+:1/,
    );
    expect(text).not.toContain('reaches only');
    expect((await brand()).configured).toBe(false);
  });

  it('sets the brand with an uploaded logo, which the API reads back; the preview carries it; a reset undoes it', async () => {
    const saved = await postBrand(visitors.owner!, FULL, { bytes: PNG, name: 'logo.png' });
    expect(saved.status).toBe(200);
    expect(await saved.text()).toContain('The brand is saved.');
    expect(await brand()).toMatchObject({
      configured: true,
      name: 'Globex Service Desk',
      accent_color: '#0b5cad',
      header_color: '#102a43',
      footer_text: 'Globex Corp · 2 Example Road',
      imprint_url: 'https://globex.example/imprint',
      privacy_url: null,
      logo: { content_type: 'image/png', bytes: PNG.length },
    });
    const trail = await app.db.query<{ action: string }>(
      'select action from workspace_audit where workspace_id = $1 order by id desc limit 1',
      [workspaceId],
    );
    expect(trail).toEqual([{ action: 'brand_changed' }]);
    // A second save without a file keeps the logo.
    expect((await postBrand(visitors.owner!, { ...FULL, footer_text: 'Globex' })).status).toBe(200);
    expect((await brand()).logo).not.toBeNull();

    const preview = await visitors.owner!.page(`${base()}/preview`);
    expect(preview.response.status).toBe(200);
    expect(preview.html).toContain('Globex Service Desk');
    expect(preview.html).toContain(`/brand/ws-${workspaceId}/theme.css`);
    expect(preview.html).toContain(`/brand/ws-${workspaceId}/logo.png`);

    const { csrf } = await visitors.owner!.page(base());
    const reset = await visitors.owner!.post(`${base()}/reset`, { _csrf: csrf });
    expect(reset.status).toBe(200);
    expect(await brand()).toMatchObject({
      name: null,
      accent_color: null,
      header_color: null,
      footer_text: null,
      imprint_url: null,
      privacy_url: null,
      logo: null,
    });
    const after = await visitors.owner!.page(`${base()}/preview`);
    expect(after.html).not.toContain(`/brand/ws-${workspaceId}/theme.css`);
  });

  it('refuses members and auditors (403), outsiders (404) and a form without CSRF, storing nothing', async () => {
    const before = await brand();
    for (const who of ['member', 'auditor']) {
      const page = await visitors[who]!.fetch(base());
      expect(page.status, who).toBe(403);
      expect(await page.text()).toContain('Your role in this workspace does not allow this.');
      const { csrf } = await visitors[who]!.page(`/workspaces/${workspaceId}`);
      const body = new FormData();
      body.set('_csrf', csrf);
      body.set('name', 'Taken over');
      const forged = await visitors[who]!.fetch(base(), { method: 'POST', headers: { origin: app.baseUrl }, body });
      expect(forged.status, who).toBe(403);
      expect((await visitors[who]!.post(`${base()}/reset`, { _csrf: csrf })).status, who).toBe(403);
      expect((await visitors[who]!.fetch(`${base()}/preview`)).status, who).toBe(403);
    }
    expect((await visitors.outsider!.fetch(base())).status).toBe(404);
    expect((await visitors.owner!.post(`${base()}/reset`, {})).status).toBe(403);
    for (const id of ['0', 'abc', '99999999999999999999'])
      expect((await visitors.owner!.fetch(`/workspaces/${id}/brand`)).status, id).toBe(404);
    expect(await brand()).toEqual(before);
  });
});
