/**
 * The brand's files at `/brand/<brand id>/<file>` (../brand.ts): the logo, the favicon, the colours' stylesheet and
 * the operator's CSS, from memory, with a strong ETag (304 on a match), `nosniff`, and a policy that lets none of them
 * run anything if opened on its own (an SVG logo is a document when opened directly).
 */
import type { Router } from 'express';
import { state } from '../../http/middleware.js';
import type { PageKit } from '../page-kit.js';

/** The files' own policy: no script, nothing loaded, sandboxed (an SVG opened as a page). */
const FILE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox";

export function brandFiles(router: Router, kit: PageKit): void {
  router.get('/brand/:brand/:file', (req, res) => {
    state(res).route = '/brand/:brand/:file';
    const file = kit.brands.file(req.params.brand, req.params.file);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    if (!file) {
      res.status(404).type('text/plain').send('Not found');
      return;
    }
    res.setHeader('Content-Security-Policy', FILE_CSP);
    res.setHeader('Cache-Control', 'public, max-age=3600');
    res.setHeader('ETag', file.etag);
    const match = req.get('if-none-match');
    if (match && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === file.etag)) {
      res.status(304).end();
      return;
    }
    res.status(200).type(file.type).send(file.body);
  });
}
