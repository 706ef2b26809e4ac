/**
 * The brand's files at `/brand/<brand id>/<file>` (../brand.ts): the logo, the favicon, the colours' stylesheet and
 * the operator's CSS, from memory, and a workspace's logo and colours (`/brand/ws-<id>/`, from the database), each with
 * a strong ETag (304 on a match), `nosniff`, and a policy that lets none of them run anything if opened on its own (an
 * SVG logo is a document when opened directly).
 */
import type { Request, Response, Router } from 'express';
import type { BrandFile } from '../../config/brand-settings.js';
import { answerFailure } from '../../http/errors.js';
import { state } from '../../http/middleware.js';
import type { PageKit } from '../page-kit.js';

/** The files' own policy: no script, nothing loaded, sandboxed (an SVG opened as a page). */
const FILE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox";

export function brandFiles(router: Router, kit: PageKit): void {
  router.get('/brand/:brand/:file', async (req, res) => {
    state(res).route = '/brand/:brand/:file';
    try {
      const workspace = /^ws-([1-9][0-9]{0,9})$/.exec(req.params.brand);
      const file = workspace
        ? Number(workspace[1]) <= 2_147_483_647
          ? await kit.brands.workspaceFile(Number(workspace[1]), req.params.file)
          : null
        : kit.brands.file(req.params.brand, req.params.file);
      serve(req, res, file);
    } catch (error) {
      answerFailure(res, error);
    }
  });
}

function serve(req: Request, res: Response, file: BrandFile | null): void {
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
}
