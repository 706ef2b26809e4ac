/**
 * What a request names, read from Node's own request: its path and query (the request target, RFC 9112 §3.2), the
 * client's address and the scheme it used (with one trusted proxy hop when `PWPUSH_TRUST_PROXY` is on). The API's
 * pipeline and the parts it shares with the pages read these, never a framework's request object.
 */
import type { IncomingMessage } from 'node:http';
import { parse as parseQuery } from 'node:querystring';

/**
 * The path of a request target: origin-form (`/p?q`) up to its query or fragment, absolute-form (`http://h/p`) through
 * WHATWG URL parsing; anything else (`*`, an unparsable target) is returned as it is and routes nowhere.
 */
export function targetPath(url: string): string {
  if (url.charCodeAt(0) === 0x2f) {
    let end = url.length;
    for (let i = 1; i < url.length; i++) {
      const c = url.charCodeAt(i);
      if (c === 0x3f || c === 0x23) {
        end = i;
        break;
      }
    }
    return end === url.length ? url : url.slice(0, end);
  }
  try {
    return new URL(url).pathname;
  } catch {
    return url;
  }
}

/** The query of a request target, parsed as express's default ("simple") parser does: `node:querystring`. */
export function targetQuery(url: string): Record<string, string | string[] | undefined> {
  const q = url.indexOf('?');
  if (q === -1) return {};
  const hash = url.indexOf('#', q);
  return parseQuery(hash === -1 ? url.slice(q + 1) : url.slice(q + 1, hash));
}

/**
 * The client's address. Behind one trusted proxy it is the entry that proxy appended to X-Forwarded-For (the last
 * one), never an entry the client wrote itself (trusting every hop would let a client pick its address per request);
 * otherwise the socket's peer. The rule of `proxy-addr` with one trusted hop, as express applies `trust proxy: 1`.
 */
export function clientIp(req: IncomingMessage, trustProxy: boolean): string {
  const peer = req.socket?.remoteAddress ?? '';
  if (!trustProxy) return peer;
  const header = req.headers['x-forwarded-for'];
  if (header === undefined) return peer;
  const forwarded = Array.isArray(header) ? header.join(',') : header;
  return trimSpaces(forwarded.slice(forwarded.lastIndexOf(',') + 1));
}

/** `http` or `https`: the proxy's `X-Forwarded-Proto` (its first entry) when it is trusted, else the socket's. */
export function requestProtocol(req: IncomingMessage, trustProxy: boolean): string {
  const own = (req.socket as { encrypted?: boolean } | null)?.encrypted ? 'https' : 'http';
  if (!trustProxy) return own;
  const header = req.headers['x-forwarded-proto'];
  const value = (Array.isArray(header) ? header[0] : header) || own;
  const comma = value.indexOf(',');
  return (comma === -1 ? value : value.slice(0, comma)).trim();
}

/** One header's value (the first, for a header sent more than once that Node keeps as a list). */
export function headerOf(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** proxy-addr splits X-Forwarded-For on commas and drops the spaces around each entry (spaces only). */
function trimSpaces(entry: string): string {
  let start = 0;
  let end = entry.length;
  while (start < end && entry.charCodeAt(start) === 0x20) start++;
  while (end > start && entry.charCodeAt(end - 1) === 0x20) end--;
  return entry.slice(start, end);
}
