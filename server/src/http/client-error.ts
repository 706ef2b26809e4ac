/**
 * Requests Node's HTTP parser refuses before the app sees them (a control character in a header value, a malformed
 * request line, headers over the size limit: 400 or 431; headers or a body that did not arrive in time: 408) get the same JSON error body as every other error, instead of Node's
 * bare `400 Bad Request` with no body. Nothing of the request is echoed.
 */
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError, errorBody } from '@secret-push/rules';

/** The catalogue's error for what the parser refused. */
function refusal(err: NodeJS.ErrnoException): ApiError {
  if (err.code === 'HPE_HEADER_OVERFLOW') return new ApiError('header_fields_too_large');
  // The server's headersTimeout (or requestTimeout) passed before the request was complete: a slow or stalled client.
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') return new ApiError('request_timeout');
  return new ApiError(
    'bad_request',
    'The request is not valid HTTP (a malformed request line, or a header with a forbidden character).',
  );
}

function answer(err: NodeJS.ErrnoException, requestId: string): { status: number; body: string } {
  const error = refusal(err);
  return { status: error.status, body: JSON.stringify(errorBody(error, requestId)) };
}

/** Answers the parser's refusals of `server` with a JSON error and closes the connection. */
export function answerClientErrors(server: Server): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A connection reset, or an error after the answer began: nothing can be said on it.
    if (err.code === 'ECONNRESET' || !socket.writable || (socket as Socket & { _httpMessage?: unknown })._httpMessage) {
      socket.destroy();
      return;
    }
    // Every answer carries a request id (the contract requires X-Request-Id); this one never reached the app.
    const requestId = randomUUID();
    const { status, body } = answer(err, requestId);
    const reason =
      status === 431 ? 'Request Header Fields Too Large' : status === 408 ? 'Request Timeout' : 'Bad Request';
    const headers = [
      `HTTP/1.1 ${status} ${reason}`,
      'Content-Type: application/json; charset=utf-8',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Cache-Control: no-store',
      'X-Content-Type-Options: nosniff',
      'X-Robots-Tag: noindex, nofollow',
      `X-Request-Id: ${requestId}`,
      'Connection: close',
    ];
    socket.end(`${headers.join('\r\n')}\r\n\r\n${body}`);
  });
}
