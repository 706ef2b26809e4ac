/** The signed file download: the link is the credential (no bearer token), and a download is not a view. */
import { Readable } from 'node:stream';
import { safeFilename } from '@secret-push/rules';
import type { Core } from '../../core.js';
import type { Handlers } from '../operations.js';

/** RFC 6266 / 8187: an ASCII fallback plus the exact UTF-8 name (without control or bidi characters). */
function contentDisposition(name: string): string {
  const filename = safeFilename(name);
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (ch) => `%${ch.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

export function fileHandlers(core: Core): Pick<Handlers, 'downloadPushFile'> {
  return {
    downloadPushFile: async ({ params, query, ctx }) => {
      const file = await core.pushes.downloadFile(params.url_token, params.file_id, query.token ?? '', ctx);
      return {
        status: 200,
        body: file.body,
        // Always octet-stream: serving an uploaded file under its declared type (text/html, image/svg+xml) from our
        // origin would let a push author run script here. The declared type is in the retrieval's `content_type`.
        headers: {
          'Content-Type': 'application/octet-stream',
          'Content-Disposition': contentDisposition(file.filename),
          // A stream from the object store: its length is known before the first byte (one that fails midway is cut
          // short, and the client sees fewer bytes than announced). Bytes in memory are measured by the writer.
          ...(file.body instanceof Readable ? { 'Content-Length': String(file.size) } : {}),
        },
      };
    },
  };
}
