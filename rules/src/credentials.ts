/**
 * Which credential a request carries: a bearer token, or the legacy `X-User-Email` + `X-User-Token` pair (accepted
 * only with the email of the token's user: the pair is checked where the token is resolved).
 */
export type Credential =
  | { kind: 'none' }
  /** A header that carries a credential nobody can use (wrong scheme, empty token, a token without its email). */
  | { kind: 'unusable' }
  | { kind: 'bearer'; token: string }
  | { kind: 'legacy'; token: string; email: string };

/**
 * Reads the credential from a header getter. `Authorization` wins when it is sent: the generated SDK, given one
 * token, sends it as the bearer token and in both legacy headers at once.
 */
export function readCredential(header: (name: string) => string | null | undefined): Credential {
  const authorization = header('authorization');
  if (authorization !== undefined && authorization !== null) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    return match?.[1] ? { kind: 'bearer', token: match[1] } : { kind: 'unusable' };
  }
  const email = header('x-user-email')?.trim();
  const legacyToken = header('x-user-token')?.trim();
  // An email alone is no credential (the reference ignores it too); a token alone is an unusable one.
  if (legacyToken === undefined || legacyToken === null) return { kind: 'none' };
  return legacyToken && email ? { kind: 'legacy', token: legacyToken, email } : { kind: 'unusable' };
}
