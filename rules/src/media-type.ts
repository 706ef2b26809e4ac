/**
 * The one reader of `Content-Type` (RFC 9110 §8.3.1): the server's body reader, its request steps and pages, the
 * stateful mock, the contract toolkit and the conformance suite all ask it, so a media type is read the same way
 * everywhere.
 */

/** A header value as Node, fetch or a test gives it. */
export type HeaderValue = string | readonly string[] | null | undefined;

/** The media type without its parameters, lower-case (`''` when absent): `Application/JSON; charset=utf-8` → `application/json`. */
export function mediaTypeOf(contentType: HeaderValue): string {
  const value = Array.isArray(contentType) ? contentType[0] : contentType;
  if (typeof value !== 'string') return '';
  const semicolon = value.indexOf(';');
  return (semicolon === -1 ? value : value.slice(0, semicolon)).trim().toLowerCase();
}

/** JSON: `application/json` or a structured `+json` type (`application/merge-patch+json`). */
export function isJsonMediaType(type: string): boolean {
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/** The body kinds the API reads, by media type; null for any other. */
export function bodyKindOf(contentType: HeaderValue): 'json' | 'multipart' | 'urlencoded' | null {
  const type = mediaTypeOf(contentType);
  if (isJsonMediaType(type)) return 'json';
  if (type === 'multipart/form-data') return 'multipart';
  if (type === 'application/x-www-form-urlencoded') return 'urlencoded';
  return null;
}
