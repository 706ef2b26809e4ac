/**
 * Progress bars on a terminal: a `fetch` for the SDK's client that streams a large request body (a create with files)
 * in chunks and a large download through a counter, drawing one bar on stderr. The bytes sent are the same (the
 * body is read once, then streamed with its Content-Length), so an Idempotency-Key retry still matches.
 */
import { formatBytes } from './prompt.js';
import type { Output } from './io.js';

/** Bodies below this go as they are: a bar for a moment is noise. */
const SHOW_FROM_BYTES = 256 * 1024;
const CHUNK_BYTES = 64 * 1024;

class ProgressBar {
  private last = -1;

  constructor(
    private readonly out: Output,
    private readonly label: string,
    private readonly total: number,
  ) {}

  update(done: number): void {
    const width = Math.max(10, Math.min(40, (this.out.columns ?? 80) - 40));
    const ratio = this.total > 0 ? Math.min(1, done / this.total) : 1;
    const percent = Math.floor(ratio * 100);
    if (percent === this.last) return;
    this.last = percent;
    const filled = Math.round(ratio * width);
    const bar = `${'#'.repeat(filled)}${'.'.repeat(width - filled)}`;
    this.out.write(
      `\r${this.label} [${bar}] ${String(percent).padStart(3)}% ${formatBytes(done)} / ${formatBytes(this.total)}`,
    );
  }

  finish(): void {
    this.update(this.total);
    this.out.write('\n');
  }
}

function countingStream(bytes: Uint8Array, bar: ProgressBar): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (sent >= bytes.length) {
          bar.finish();
          controller.close();
          return;
        }
        const chunk = bytes.subarray(sent, sent + CHUNK_BYTES);
        sent += chunk.length;
        bar.update(sent);
        controller.enqueue(chunk);
      },
    },
    // Pulled only as the connection takes the chunks, so the bar follows the upload, not the copying.
    { highWaterMark: 0 },
  );
}

function countedResponse(response: Response, bar: ProgressBar): Response {
  if (!response.body) return response;
  let received = 0;
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        received += chunk.length;
        bar.update(received);
        controller.enqueue(chunk);
      },
      flush() {
        bar.finish();
      },
    }),
  );
  return new Response(counted, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/** A fetch that draws upload and download progress on `out` for bodies of 256 KiB or more. */
export function progressFetch(out: Output): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    let sending: Request = request;
    if (request.body) {
      const bytes = new Uint8Array(await request.arrayBuffer());
      const body =
        bytes.length >= SHOW_FROM_BYTES
          ? countingStream(bytes, new ProgressBar(out, 'Uploading  ', bytes.length))
          : bytes;
      const headers = new Headers(request.headers);
      headers.set('Content-Length', String(bytes.length));
      sending = new Request(request.url, {
        method: request.method,
        headers,
        body,
        signal: request.signal,
        redirect: request.redirect,
        duplex: 'half',
      } as RequestInit);
    }
    const response = await fetch(sending);
    const length = Number(response.headers.get('Content-Length') ?? 0);
    if (request.method === 'GET' && length >= SHOW_FROM_BYTES)
      return countedResponse(response, new ProgressBar(out, 'Downloading', length));
    return response;
  };
}
