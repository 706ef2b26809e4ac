/**
 * Closing a connection whose request body was not read (refused with 413, an unknown route, a wrong method): the
 * answer goes out with `Connection: close`, then the server stops sending but keeps reading (and discarding) what
 * the client still sends for a short while before it closes the socket. Closed at once, the client's next write
 * would meet a reset, and a reset makes the client's system drop the answer it has not read yet: the client would
 * see "connection reset" instead of the 413 (a lingering close, as nginx does). The body is discarded as it comes
 * (nothing is kept), and only for LINGER_MS.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const LINGER_MS = 2_000;
const LINGERING = Symbol('lingering');

export function closeAfterReply(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('Connection', 'close');
  const socket = req.socket as (Socket & { [LINGERING]?: true }) | null;
  if (!socket || socket[LINGERING]) return;
  socket[LINGERING] = true;
  // Node's server calls destroySoon() once a `Connection: close` answer is written (after it set the request body
  // to be discarded): half-close instead, and destroy after the linger.
  socket.destroySoon = function destroySoon(this: Socket) {
    if (this.writable) this.end();
    const timer = setTimeout(() => this.destroy(), LINGER_MS);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
    this.once('end', () => this.destroy());
  };
}
