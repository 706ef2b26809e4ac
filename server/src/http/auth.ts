/**
 * Who is calling: the bearer token or the legacy `X-User-Email` + `X-User-Token` pair, resolved through the user
 * service. The spec's security requirements decide which operations need a user; this module only says who it is.
 */
import type { Request } from 'express';
import type { Actor, Core } from '../domain/contract.js';

export type Credential =
  | { kind: 'none' }
  /** A header that carries a credential we cannot use (wrong scheme, empty token, token without its email). */
  | { kind: 'unusable' }
  | { kind: 'bearer'; token: string }
  | { kind: 'legacy'; token: string; email: string };

export interface AuthResult {
  credential: Credential['kind'];
  /** The authenticated user, or null (anonymous, or a credential that matched nobody). */
  user: { userId: string; email: string } | null;
  /** A credential was sent but matched no user. */
  invalid: boolean;
}

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Reads the credential from the headers. `Authorization` wins when it is sent: the generated SDK, given one token,
 * sends it as the bearer token and in both legacy headers at once.
 */
export function readCredential(req: Request): Credential {
  const authorization = header(req, 'authorization');
  if (authorization !== undefined) {
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    return match?.[1] ? { kind: 'bearer', token: match[1] } : { kind: 'unusable' };
  }
  const email = header(req, 'x-user-email')?.trim();
  const legacyToken = header(req, 'x-user-token')?.trim();
  if (legacyToken === undefined) return { kind: 'none' };
  // The pair is accepted only with the email of the token's user; a token alone is not enough.
  return legacyToken && email ? { kind: 'legacy', token: legacyToken, email } : { kind: 'unusable' };
}

export async function authenticate(core: Core, credential: Credential): Promise<AuthResult> {
  switch (credential.kind) {
    case 'none':
      return { credential: 'none', user: null, invalid: false };
    case 'unusable':
      return { credential: 'unusable', user: null, invalid: true };
    case 'bearer': {
      const user = await core.users.authenticate(credential.token);
      return { credential: 'bearer', user, invalid: user === null };
    }
    case 'legacy': {
      const user = await core.users.authenticate(credential.token, credential.email);
      return { credential: 'legacy', user, invalid: user === null };
    }
  }
}

export function actorOf(req: Request, userId: string | null): Actor {
  return {
    userId,
    // `req.ip` honours `trust proxy` (settings.trustProxy) for X-Forwarded-For.
    ip: req.ip ?? req.socket.remoteAddress ?? '',
    userAgent: (header(req, 'user-agent') ?? '').slice(0, 1024),
    referrer: (header(req, 'referer') ?? '').slice(0, 2048),
  };
}

/** `{base}` of the decisions: the configured public base URL, else the request's own origin. */
export function baseUrlOf(req: Request, publicBaseUrl: string | null): string {
  if (publicBaseUrl) return publicBaseUrl.replace(/\/+$/, '');
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}
