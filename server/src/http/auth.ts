/**
 * Who is calling: the credential (`@secret-push/rules` reads it from the headers) resolved through the user
 * service. The spec's security requirements decide which operations need a user; this module only says who it is.
 */
import type { Request } from 'express';
import { readCredential, type Credential } from '@secret-push/rules';
import type { Actor, Core } from '../core.js';

export interface AuthResult {
  credential: Credential['kind'];
  /** The authenticated user, or null (anonymous, or a credential that matched nobody). */
  user: { userId: string; email: string } | null;
  /** A credential was sent but matched no user. */
  invalid: boolean;
}

export const ANONYMOUS: AuthResult = { credential: 'none', user: null, invalid: false };

function header(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

export function credentialOf(req: Request): Credential {
  return readCredential((name) => header(req, name));
}

export async function authenticate(core: Core, credential: Credential): Promise<AuthResult> {
  switch (credential.kind) {
    case 'none':
      return ANONYMOUS;
    case 'unusable':
      return { credential: 'unusable', user: null, invalid: true };
    case 'bearer':
    case 'legacy': {
      const user = await core.users.authenticate(
        credential.token,
        credential.kind === 'legacy' ? credential.email : undefined,
      );
      return { credential: credential.kind, user, invalid: user === null };
    }
  }
}

export function actorOf(req: Request, userId: string | null): Actor {
  return {
    userId,
    // `req.ip` honours `trust proxy` (settings.trustProxy) for X-Forwarded-For.
    // At most the contract's 64 characters (an IPv6 address with a zone has fewer; a proxy's odd X-Forwarded-For may not).
    ip: (req.ip ?? req.socket.remoteAddress ?? '').slice(0, 64),
    userAgent: (header(req, 'user-agent') ?? '').slice(0, 1024),
    referrer: (header(req, 'referer') ?? '').slice(0, 2048),
  };
}

/** `{base}` of the decisions: the configured public base URL, else the request's own origin. */
export function baseUrlOf(req: Request, publicBaseUrl: string | null): string {
  if (publicBaseUrl) return publicBaseUrl.replace(/\/+$/, '');
  return `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}
