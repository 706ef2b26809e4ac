/**
 * Share links of end-to-end encrypted pushes: `{html_url}#k=<key>`. The fragment is a list of `name=value` pairs
 * joined by `&` (only `k` is defined; other names are ignored), and browsers never send it to a server. Errors here
 * never quote the link: it carries the key.
 */
import { isKey } from './envelope.js';

/** The parts of a push's share link. */
export interface ShareLink {
  /** The link without its fragment (`{base}/p/{url_token}` or `…/r`): safe to log, it opens nothing by itself. */
  pageUrl: string;
  urlToken: string;
  /** Whether the link is the retrieval-step form `/p/{url_token}/r`. */
  retrievalStep: boolean;
  /** The `k` of the fragment (base64url, not yet checked), or null when the link has none. */
  key: string | null;
}

const PUSH_PATH = /\/p\/([a-z0-9_-]{11,64})(\/r)?\/?$/;

function parseUrl(link: string, what: string): URL {
  try {
    return new URL(link);
  } catch {
    // Not the URL parser's error: it quotes its input, and the input may hold a key.
    throw new TypeError(`${what}: not an absolute URL`);
  }
}

/** The fragment's pairs (`a=1&b=2`), percent-decoded where that is valid. */
function fragmentParams(hash: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const part of hash.replace(/^#/, '').split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = eq < 0 ? part : part.slice(0, eq);
    const raw = eq < 0 ? '' : part.slice(eq + 1);
    let value = raw;
    try {
      value = decodeURIComponent(raw);
    } catch {
      // keep it raw; a malformed key is reported when it is imported
    }
    if (!params.has(name)) params.set(name, value);
  }
  return params;
}

/** Splits a share link (`https://host/p/<token>[/r][#k=<key>]`). Throws a `TypeError` (without the link) for anything else. */
export function parseShareLink(link: string): ShareLink {
  const url = parseUrl(link, 'parseShareLink');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError('parseShareLink: not an http(s) link');
  const match = PUSH_PATH.exec(url.pathname);
  if (!match) throw new TypeError('parseShareLink: not the link of a push (/p/<url_token> or /p/<url_token>/r)');
  const key = fragmentParams(url.hash).get('k');
  url.hash = '';
  return {
    pageUrl: url.toString(),
    urlToken: match[1]!,
    retrievalStep: match[2] !== undefined,
    key: key === undefined || key === '' ? null : key,
  };
}

/** The link to share: the push's `html_url` (either form) with the key in the fragment. */
export function buildShareLink(htmlUrl: string, key: string): string {
  if (!isKey(key)) throw new TypeError('buildShareLink: the key is not 32 bytes of base64url');
  const url = parseUrl(htmlUrl, 'buildShareLink');
  url.hash = '';
  return `${url.toString()}#k=${key}`;
}
