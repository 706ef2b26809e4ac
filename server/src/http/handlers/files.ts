import type { Core } from '../../domain/contract.js';
import { pathParam, queryString, type OperationHandler } from './types.js';

/** RFC 6266 / 8187: an ASCII fallback plus the exact UTF-8 name. */
export function contentDisposition(filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

export function fileHandlers(core: Core): Record<string, OperationHandler> {
  return {
    // The signed link is the credential: no bearer token, and a download is not a view.
    downloadPushFile: async (c, _req, res) => {
      const file = await core.pushes.downloadFile(
        pathParam(c, 'url_token'),
        pathParam(c, 'file_id'),
        queryString(c, 'token') ?? '',
      );
      res.status(200);
      // Always octet-stream: serving an uploaded file under its declared type (text/html, image/svg+xml) from our
      // origin would let a push author run script here. The declared type is in the retrieval's `content_type`.
      res.setHeader('Content-Type', 'application/octet-stream');
      res.setHeader('Content-Length', String(file.bytes.length));
      res.setHeader('Content-Disposition', contentDisposition(file.filename));
      res.end(file.bytes);
    },
  };
}
