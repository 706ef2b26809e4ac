/** The assets, the bundled contract at /api/v2/openapi.json and the API reference page at /help/api. */
import { readFileSync } from 'node:fs';
import type { Router } from 'express';
import { baseUrlOf } from '../../http/auth.js';
import { state } from '../../http/middleware.js';
import { asset } from '../assets.js';
import { html } from '../html.js';
import type { PageKit } from '../page-kit.js';
import { DOCS_CSP } from '../security.js';
import { page } from '../views/layout.js';

export function docsPages(router: Router, kit: PageKit, specPath: string, publicBaseUrl: string | null): void {
  let spec: Buffer | null = null;
  const specBytes = () => (spec ??= readFileSync(specPath));

  router.get('/assets/*name', async (req, res) => {
    state(res).route = '/assets/*';
    const name = ([] as string[]).concat((req.params as { name?: string | string[] }).name ?? []).join('/');
    const found = asset(name);
    if (!found) {
      res.status(404).type('text/plain').send('Not found');
      return;
    }
    try {
      const a = await found;
      res.setHeader('Cache-Control', 'public, max-age=3600');
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.type(a.type).send(a.body);
    } catch {
      state(res).failure = { name: 'AssetError' };
      res.status(500).type('text/plain').send('The asset could not be loaded.');
    }
  });

  router.get('/api/v2/openapi.json', (_req, res) => {
    state(res).route = '/api/v2/openapi.json';
    res.setHeader('Cache-Control', 'no-cache');
    res.type('application/json').send(specBytes());
  });

  router.get(
    '/help/api',
    kit.pageRoute(
      '/help/api',
      async (req, res, v) => {
        // Scalar renders into #api-docs (not #api-reference nor [data-spec-url]: its bundle would mount those on its own, with its default web fonts); its bundle and our init script come from /assets.
        // Its "try it" client calls this instance (PWPUSH_PUBLIC_BASE_URL when set, else the origin it was opened on),
        // never the document's example host.
        const server = baseUrlOf(req, publicBaseUrl, kit.settings.trustProxy);
        const body = page({
          title: 'API documentation',
          viewer: v.viewer,
          scripts: ['vendor/scalar-api-reference.js', 'api-docs.js'],
          stylesheet: 'docs.css',
          bare: true,
          body: html`<h1 class="visually-hidden">API documentation</h1>
<p class="docs-intro">The JSON API (v2) of this instance, <code>${server}</code>. The contract itself: <a href="/api/v2/openapi.json">/api/v2/openapi.json</a>.
Get a token at <a href="/users/token">/users/token</a>.</p>
<div id="api-docs" data-openapi-url="/api/v2/openapi.json" data-server-url="${server}"></div>
<noscript><p>The interactive reference needs JavaScript; the contract above is plain JSON.</p></noscript>`,
        });
        kit.send(res, 200, body);
      },
      DOCS_CSP,
    ),
  );
}
