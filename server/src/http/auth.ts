/**
 * Who is calling: the credential (`@secret-push/rules` reads it from the headers) resolved through the user
 * service. The spec's security requirements decide which operations need a user; this module only says who it is.
 */
import type { IncomingMessage } from 'node:http';
import { readCredential, type ApiKeyScope, type Credential } from '@secret-push/rules';
import type { Actor, Core } from '../core.js';
import type { CallerKey } from '../request-context.js';
import { clientIp, headerOf, requestProtocol } from './request-target.js';

export interface AuthResult {
  credential: Credential['kind'];
  /** The authenticated user, or null (anonymous, or a credential that matched nobody). */
  user: { userId: string; email: string } | null;
  /** A credential was sent but matched no user. */
  invalid: boolean;
  /** What the credential may do: an API key's scopes, or null for every scope (the account token, the legacy pair). */
  scopes: ReadonlySet<ApiKeyScope> | null;
  /** The API key it was (its id and expiry), or null. */
  key: CallerKey | null;
}

export const ANONYMOUS: AuthResult = { credential: 'none', user: null, invalid: false, scopes: null, key: null };

export function credentialOf(req: IncomingMessage): Credential {
  return readCredential((name) => headerOf(req, name));
}

export async function authenticate(core: Core, credential: Credential): Promise<AuthResult> {
  switch (credential.kind) {
    case 'none':
      return ANONYMOUS;
    case 'unusable':
      return { credential: 'unusable', user: null, invalid: true, scopes: null, key: null };
    case 'bearer':
    case 'legacy': {
      const found = await core.users.authenticate(
        credential.token,
        credential.kind === 'legacy' ? credential.email : undefined,
      );
      if (!found) return { credential: credential.kind, user: null, invalid: true, scopes: null, key: null };
      return {
        credential: credential.kind,
        user: { userId: found.userId, email: found.email },
        invalid: false,
        scopes: found.scopes ? new Set(found.scopes) : null,
        key: found.key ?? null,
      };
    }
  }
}

export function actorOf(req: IncomingMessage, userId: string | null, trustProxy: boolean): Actor {
  return {
    userId,
    // One trusted proxy hop for X-Forwarded-For when settings.trustProxy is on (./request-target.ts).
    // At most the contract's 64 characters (an IPv6 address with a zone has fewer; a proxy's odd X-Forwarded-For may not).
    ip: clientIp(req, trustProxy).slice(0, 64),
    userAgent: (headerOf(req, 'user-agent') ?? '').slice(0, 1024),
    referrer: (headerOf(req, 'referer') ?? '').slice(0, 2048),
  };
}

/** `{base}` of the decisions: the configured public base URL, else the request's own origin. */
export function baseUrlOf(req: IncomingMessage, publicBaseUrl: string | null, trustProxy: boolean): string {
  if (publicBaseUrl) return publicBaseUrl.replace(/\/+$/, '');
  return `${requestProtocol(req, trustProxy)}://${headerOf(req, 'host') ?? 'localhost'}`;
}
