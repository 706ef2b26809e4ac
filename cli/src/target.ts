/**
 * What a command's LINK or TOKEN argument names: a push's share link (`https://host/p/<token>[/r][#k=<key>]`), a
 * request's link (`https://host/r/<token>`), or a bare token. Errors never quote the argument (a link may carry a key).
 */
import { parseShareLink } from '@secret-push/sdk';
import { usageError } from './exit.js';

const BARE_TOKEN = /^[A-Za-z0-9_-]{6,64}$/;
const REQUEST_PATH = /\/r\/([A-Za-z0-9_-]{6,64})\/?$/;

export interface PushTarget {
  urlToken: string;
  /** The link's origin (the instance it lives on); undefined for a bare token. */
  origin: string | undefined;
  /** The link as given, fragment and key included (for the SDK's `retrieveLink`); undefined for a bare token. */
  link: string | undefined;
  hasKey: boolean;
}

export function pushTarget(text: string): PushTarget {
  if (BARE_TOKEN.test(text)) return { urlToken: text, origin: undefined, link: undefined, hasKey: false };
  let parsed: ReturnType<typeof parseShareLink>;
  try {
    parsed = parseShareLink(text);
  } catch {
    throw usageError('not a push link (https://…/p/<token>) or a url_token');
  }
  return { urlToken: parsed.urlToken, origin: new URL(parsed.pageUrl).origin, link: text, hasKey: parsed.key !== null };
}

export function requestTarget(text: string): { urlToken: string; origin: string | undefined } {
  if (BARE_TOKEN.test(text)) return { urlToken: text, origin: undefined };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError('not a request link (https://…/r/<token>) or a request token');
  }
  const match = REQUEST_PATH.exec(url.pathname);
  if (!match || (url.protocol !== 'https:' && url.protocol !== 'http:'))
    throw usageError('not a request link (https://…/r/<token>) or a request token');
  return { urlToken: match[1]!, origin: url.origin };
}
